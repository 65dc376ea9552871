#pragma once
/// The bounded sources: collection, sequence and text file, each resuming from its operator
/// state (a position per split).

#include "runtime/streaming/operator_api.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace flint::streaming {

/// A source's position as an operator-state entry: little-endian 64-bit words.
inline std::vector<char> encode_positions(std::initializer_list<std::uint64_t> words) {
  std::vector<char> out;
  for (auto w : words)
    for (int i = 0; i < 8; ++i)
      out.push_back(static_cast<char>((w >> (8 * i)) & 0xff));
  return out;
}

/// The `n` words of an entry written by encode_positions; a wrong size throws, naming `what`.
inline std::vector<std::uint64_t> decode_positions(const std::vector<char>& entry, std::size_t n,
                                                   const char* what) {
  if (entry.size() != 8 * n)
    throw std::runtime_error(std::string("the restored state of the ") + what + " has "
                             + std::to_string(entry.size()) + " bytes, not "
                             + std::to_string(8 * n));
  std::vector<std::uint64_t> words(n, 0);
  for (std::size_t w = 0; w < n; ++w)
    for (int i = 7; i >= 0; --i)
      words[w] =
        (words[w] << 8) | static_cast<unsigned char>(entry[8 * w + static_cast<std::size_t>(i)]);
  return words;
}

/// Emits the elements once, in order. A non-parallel source; should it run at a higher
/// parallelism, subtask i takes every p-th element from i.
template <class T>
class collection_source final : public source_operator {
public:
  collection_source(const std::vector<T>& elements, const operator_context& ctx,
                    std::unique_ptr<output<T>> out)
    : elements_(elements),
      yield_(ctx.yield_signal_of()),
      out_(std::move(out)) {
    records_out_ = 0;
    cursors_.push_back(
      {static_cast<std::uint64_t>(ctx.subtask_index), static_cast<std::uint64_t>(ctx.parallelism)});
  }

  source_status emit_next(std::size_t max_records) override {
    std::size_t n = 0;
    while (current_ < cursors_.size() && n < max_records) {
      auto& c = cursors_[current_];
      if (c.next >= elements_.size()) {
        ++current_;
        continue;
      }
      out_->collect_ref(elements_[c.next]);
      ++records_out_;
      c.next += c.stride;
      ++n;
      if (yield_())
        break;
    }
    return current_ < cursors_.size() ? source_status::more_available : source_status::end_of_input;
  }

  /// Where each of its cursors is (Flink's FromElementsFunction keeps the count emitted).
  state::operator_snapshot snapshot_state(std::int64_t) override {
    state::operator_snapshot s;
    for (const auto& c : cursors_)
      s.list_entries.push_back(encode_positions({c.next, c.stride}));
    return s;
  }
  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.present())
      return;
    cursors_.clear();
    for (const auto& entry : restore.list_entries()) {
      auto p = decode_positions(entry, 2, "collection source");
      cursors_.push_back({p[0], p[1] == 0 ? 1 : p[1]});
    }
  }

private:
  struct cursor {
    std::uint64_t next;
    std::uint64_t stride;
  };
  const std::vector<T>& elements_;
  std::vector<cursor> cursors_;
  std::size_t current_ = 0;
  yield_signal yield_;
  output_ref<T> out_;
};

/// `from..to` inclusive, split into one contiguous range per subtask.
class sequence_source final : public source_operator {
public:
  sequence_source(std::int64_t from, std::int64_t to, const operator_context& ctx,
                  std::unique_ptr<output<std::int64_t>> out)
    : yield_(ctx.yield_signal_of()),
      out_(std::move(out)) {
    records_out_ = 0;
    __int128 total = static_cast<__int128>(to) - from + 1;
    __int128 p = ctx.parallelism, i = ctx.subtask_index;
    ranges_.push_back({from + total * i / p, from + total * (i + 1) / p}); // end exclusive
  }

  source_status emit_next(std::size_t max_records) override {
    std::size_t n = 0;
    while (current_ < ranges_.size() && n < max_records) {
      auto& r = ranges_[current_];
      if (r.next >= r.end) {
        ++current_;
        continue;
      }
      out_->collect(static_cast<std::int64_t>(r.next));
      ++records_out_;
      ++r.next;
      ++n;
      if (yield_())
        break;
    }
    return current_ < ranges_.size() ? source_status::more_available : source_status::end_of_input;
  }

  /// The rest of each range (Flink's NumberSequenceSource keeps its splits' positions).
  state::operator_snapshot snapshot_state(std::int64_t) override {
    state::operator_snapshot s;
    auto hi = [](__int128 v) {
      return static_cast<std::uint64_t>(static_cast<unsigned __int128>(v) >> 64);
    };
    auto lo = [](__int128 v) { return static_cast<std::uint64_t>(v); };
    for (const auto& r : ranges_)
      s.list_entries.push_back(encode_positions({hi(r.next), lo(r.next), hi(r.end), lo(r.end)}));
    return s;
  }
  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.present())
      return;
    ranges_.clear();
    auto join = [](std::uint64_t hi, std::uint64_t lo) {
      return static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
    };
    for (const auto& entry : restore.list_entries()) {
      auto p = decode_positions(entry, 4, "sequence source");
      ranges_.push_back({join(p[0], p[1]), join(p[2], p[3])});
    }
  }

private:
  struct range {
    __int128 next;
    __int128 end;
  };
  std::vector<range> ranges_;
  std::size_t current_ = 0;
  yield_signal yield_;
  output_ref<std::int64_t> out_;
};

/// The lines of a text file (Flink's TextInputFormat: `\n` ends a line, a `\r` before it is
/// dropped). At parallelism p subtask i reads the lines that start in bytes
/// [i*size/p, (i+1)*size/p) — its split. Its state is each split's position (the offset of the
/// next line to emit), so a restored subtask seeks there; after a rescale a subtask may read
/// several splits, one after the other.
class text_file_source final : public source_operator {
public:
  text_file_source(std::string path, const operator_context& ctx,
                   std::unique_ptr<output<std::string>> out)
    : path_(std::move(path)),
      subtask_(ctx.subtask_index),
      parallelism_(ctx.parallelism),
      yield_(ctx.yield_signal_of()),
      out_(std::move(out)) {
    records_out_ = 0;
  }
  ~text_file_source() override { close(); }

  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.present())
      return;
    restored_ = true;
    splits_.clear();
    for (const auto& entry : restore.list_entries()) {
      auto p = decode_positions(entry, 3, "text file source");
      splits_.push_back(
        {static_cast<std::int64_t>(p[0]), static_cast<std::int64_t>(p[1]), p[2] != 0});
    }
  }

  void open() override {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path_, ec))
      throw std::runtime_error("File " + path_ + " does not exist or is not a regular file.");
    file_ = std::fopen(path_.c_str(), "rb");
    if (!file_)
      throw std::runtime_error("Cannot open file " + path_ + ": " + std::strerror(errno));
    if (!restored_) {
      auto size = static_cast<std::int64_t>(std::filesystem::file_size(path_, ec));
      std::int64_t start = size * subtask_ / parallelism_;
      std::int64_t end = size * (subtask_ + 1) / parallelism_;
      // A line belongs to the split its first byte is in: skip the one that began before.
      splits_.push_back(start > 0 ? split{start - 1, end, true} : split{0, end, false});
    }
    buf_.resize(1 << 20);
    start_split();
  }

  source_status emit_next(std::size_t max_records) override {
    std::size_t n = 0;
    while (n < max_records) {
      if (current_ >= splits_.size())
        return source_status::end_of_input;
      if (yield_())
        break;
      auto& s = splits_[current_];
      // Find the next '\n' in the buffered bytes.
      auto* begin = buf_.data() + head_;
      auto* nl = static_cast<char*>(std::memchr(begin, '\n', tail_ - head_));
      if (!nl) {
        if (!refill()) {
          // End of file: the last line may lack its newline.
          if (tail_ > head_ && !s.skip_partial && s.pos < s.end) {
            emit_line(std::string_view(buf_.data() + head_, tail_ - head_));
            ++n;
            s.pos += static_cast<std::int64_t>(tail_ - head_);
          }
          next_split();
        }
        continue;
      }
      std::string_view line(begin, static_cast<std::size_t>(nl - begin));
      auto consumed = static_cast<std::int64_t>(nl - begin) + 1;
      head_ += static_cast<std::size_t>(consumed);
      if (s.skip_partial) {
        s.skip_partial = false;
        s.pos += consumed;
        continue;
      }
      if (s.pos >= s.end) {
        next_split();
        continue;
      }
      s.pos += consumed;
      emit_line(line);
      ++n;
    }
    return current_ >= splits_.size() ? source_status::end_of_input : source_status::more_available;
  }

  /// One entry per split not read to its end: (offset of the next line, end, skip flag).
  state::operator_snapshot snapshot_state(std::int64_t) override {
    state::operator_snapshot s;
    for (std::size_t i = current_; i < splits_.size(); ++i) {
      const auto& sp = splits_[i];
      s.list_entries.push_back(
        encode_positions({static_cast<std::uint64_t>(sp.pos), static_cast<std::uint64_t>(sp.end),
                          sp.skip_partial ? 1u : 0u}));
    }
    // A drained source still says so: restored, it must not start its split again.
    if (s.list_entries.empty())
      s.list_entries.push_back(encode_positions({0, 0, 0}));
    return s;
  }

  void close() override {
    if (file_) {
      std::fclose(file_);
      file_ = nullptr;
    }
  }

private:
  /// Lines starting in [pos, end) remain; `skip_partial`: pos is inside a line that began
  /// before the split (skip to the next line first).
  struct split {
    std::int64_t pos = 0;
    std::int64_t end = 0;
    bool skip_partial = false;
  };

  void start_split() {
    head_ = tail_ = 0;
    while (current_ < splits_.size() && splits_[current_].pos >= splits_[current_].end
           && !splits_[current_].skip_partial)
      ++current_;
    if (current_ < splits_.size())
      std::fseek(file_, static_cast<long>(splits_[current_].pos), SEEK_SET);
  }

  void next_split() {
    ++current_;
    start_split();
  }

  void emit_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    // One string reused for every line: chained operators only read it, so no allocation per line.
    line_.assign(line);
    out_->collect_ref(line_);
    ++records_out_;
  }

  /// Moves the unread bytes to the front and reads more; false at end of file.
  bool refill() {
    if (head_ > 0) {
      std::memmove(buf_.data(), buf_.data() + head_, tail_ - head_);
      tail_ -= head_;
      head_ = 0;
    }
    if (tail_ == buf_.size())
      buf_.resize(buf_.size() * 2);
    auto got = std::fread(buf_.data() + tail_, 1, buf_.size() - tail_, file_);
    if (got == 0) {
      if (std::ferror(file_))
        throw std::runtime_error("Cannot read file " + path_ + ": " + std::strerror(errno));
      return false;
    }
    tail_ += got;
    return true;
  }

  std::string path_;
  int subtask_;
  int parallelism_;
  yield_signal yield_;
  output_ref<std::string> out_;
  std::FILE* file_ = nullptr;
  std::vector<split> splits_;
  std::size_t current_ = 0;
  bool restored_ = false;
  std::vector<char> buf_;
  std::string line_;
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
};

} // namespace flint::streaming
