#pragma once
/// The runtime operators behind the DataStream API (Flink's StreamMap, StreamFlatMap,
/// StreamFilter, StreamGroupedReduce, the sources and sinks). Header-only templates; the API's
/// factories instantiate them with the user's functions.

#include "runtime/streaming/key_groups.hpp"
#include "runtime/streaming/keyed_backend_holder.hpp"
#include "runtime/streaming/keyed_state.hpp"
#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/record_format.hpp"
#include "runtime/streaming/write_mode.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
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

/// One output per input. `Fn` is the user's function: its own type when the API knows it (the
/// call is then direct and can be inlined), else a std::function.
template <class In, class Out, class Fn = std::function<Out(const In&)>>
class map_operator final : public one_input_operator<In> {
public:
  map_operator(Fn fn, std::unique_ptr<output<Out>> out)
    : fn_(std::move(fn)),
      out_(std::move(out)) {}
  // The result lives until the outputs return: they only read it (no move into a parameter).
  void process_element(const In& value) override { out_->collect_ref(fn_(value)); }
  void collect_ref(const In& value) override { process_element(value); }

private:
  Fn fn_;
  output_ref<Out> out_;
};

/// Any number of outputs per input; `Fn` is called as `fn(value, output<Out>&)`.
template <class In, class Out, class Fn>
class flat_map_operator final : public one_input_operator<In> {
public:
  flat_map_operator(Fn fn, std::unique_ptr<output<Out>> out)
    : fn_(std::move(fn)),
      out_(std::move(out)) {}
  void process_element(const In& value) override { fn_(value, *out_); }
  void collect_ref(const In& value) override { process_element(value); }

private:
  Fn fn_;
  output_ref<Out> out_;
};

/// Keeps what the predicate accepts (`Fn` as for map_operator).
template <class T, class Fn = std::function<bool(const T&)>>
class filter_operator final : public one_input_operator<T> {
public:
  filter_operator(Fn fn, std::unique_ptr<output<T>> out)
    : fn_(std::move(fn)),
      out_(std::move(out)) {}
  void process_element(const T& value) override {
    if (fn_(value))
      out_->collect_ref(value);
  }
  void collect_ref(const T& value) override { process_element(value); }

private:
  Fn fn_;
  output_ref<T> out_;
};

/// How a keyed operator finds a record's key: a field read in place (`key_by<N>` under a fold
/// that never changes that field: state then holds the values alone, keyed by the field) or the
/// user's selector (returns the key by value; state holds key and value).
template <class T, class K>
struct key_extractor {
  std::function<K(const T&)> select;
  const K& (*field)(const T&) = nullptr;
};

/// Folds each key's records and emits every new value (Flink's StreamGroupedReduce), with the
/// value state of each key kept in the subtask's keyed state table (`keyed_state.hpp`), tagged
/// with its key group. `fold(acc, next)` updates a key's value in place (sum does; it spares a
/// copy of the record); without it `fn(acc, next)` replaces the value.
template <class T, class K>
class keyed_reduce_operator final : public one_input_operator<T> {
public:
  keyed_reduce_operator(std::function<T(const T&, const T&)> fn, std::function<K(const T&)> key,
                        const operator_context& ctx, std::unique_ptr<output<T>> out)
    : keyed_reduce_operator(std::move(fn), nullptr, key_extractor<T, K>{std::move(key)}, ctx,
                            std::move(out)) {}

  keyed_reduce_operator(std::function<T(const T&, const T&)> fn,
                        std::function<void(T&, const T&)> fold, key_extractor<T, K> key,
                        const operator_context& ctx, std::unique_ptr<output<T>> out)
    : fn_(std::move(fn)),
      fold_(std::move(fold)),
      key_(std::move(key)),
      max_parallelism_(ctx.key_group_max_parallelism),
      range_(ctx.key_groups),
      backend_(ctx.state_backend, ctx.key_groups),
      out_(std::move(out)) {}

  /// `state.backend.type: rocksdb`: the values live in RocksDB (state larger than memory);
  /// hashmap keeps them in the table above, the fast path.
  void open() override {
    if (uses_backend())
      state_ = backend_.get().register_state("reduce");
  }

  void process_element(const T& value) override {
    if (backend_.made()) {
      process_in_backend(value);
      return;
    }
    if (key_.field) {
      const K& key = key_.field(value);
      auto hash = key_hash(key);
      if (auto* current =
            by_field_.find(hash, [&](const T& entry) { return same_key(key_.field(entry), key); }))
        update(*current, value);
      else
        out_->collect_ref(by_field_.insert(hash, key_group_of(hash), value));
    } else {
      K key = key_.select(value);
      auto hash = key_hash(key);
      if (auto* current = by_selector_.find(
            hash, [&](const std::pair<K, T>& entry) { return same_key(entry.first, key); }))
        update(current->second, value);
      else
        out_->collect_ref(
          by_selector_.insert(hash, key_group_of(hash), {std::move(key), value}).second);
    }
  }

  void collect_ref(const T& value) override { process_element(value); }

  /// Keys held in state (for tests).
  std::size_t num_keys() const { return by_field_.size() + by_selector_.size(); }

  /// Each key group's entries, serialized: the values (keyed by a field), or key and value.
  state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) override {
    state::operator_snapshot s;
    if (backend_.made()) {
      s.keyed_upload = backend_.get().snapshot(checkpoint_id);
      return s;
    }
    s.first_key_group = range_.first;
    s.key_groups.resize(static_cast<std::size_t>(range_.size()));
    auto& groups = s.key_groups;
    auto first = range_.first;
    by_field_.for_each([&](int group, const T& value) {
      type_serializer<T>::write(value, groups[static_cast<std::size_t>(group - first)]);
    });
    by_selector_.for_each([&](int group, const std::pair<K, T>& entry) {
      auto& out = groups[static_cast<std::size_t>(group - first)];
      type_serializer<K>::write(entry.first, out);
      type_serializer<T>::write(entry.second, out);
    });
    return s;
  }

  /// Only this subtask's key groups are read (after a rescale the handles hold others too).
  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.has_keyed_state())
      return;
    if (uses_backend()) {
      if (auto restored = backend_.get().restore(restore.keyed_handles()); !restored)
        throw std::runtime_error(restored.error().message);
      return;
    }
    auto read = restore.for_each_key_group(
      range_.first, range_.last, [&](std::int32_t, std::span<const char> bytes) {
        byte_reader in(bytes);
        while (!in.at_end()) {
          if (key_.field) {
            T value = type_serializer<T>::read(in);
            auto hash = key_hash(key_.field(value));
            by_field_.insert(hash, key_group_of(hash), std::move(value));
          } else {
            K key = type_serializer<K>::read(in);
            T value = type_serializer<T>::read(in);
            auto hash = key_hash(key);
            by_selector_.insert(hash, key_group_of(hash), {std::move(key), std::move(value)});
          }
        }
      });
    if (!read)
      throw std::runtime_error(read.error().message);
  }

  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    backend_.notify_checkpoint_complete(checkpoint_id);
  }

private:
  bool uses_backend() const { return backend_.options().type == "rocksdb"; }

  /// A value read, folded and written back per record, as bytes (Flink's RocksDB ValueState).
  void process_in_backend(const T& value) {
    key_bytes_.clear();
    std::int32_t hash = 0;
    if (key_.field) {
      const K& key = key_.field(value);
      hash = key_hash(key);
      type_serializer<K>::write(key, key_bytes_);
    } else {
      K key = key_.select(value);
      hash = key_hash(key);
      type_serializer<K>::write(key, key_bytes_);
    }
    int group = key_group_of(hash);
    std::string_view key(key_bytes_.data(), key_bytes_.size());
    value_bytes_.clear();
    auto& backend = backend_.get();
    if (backend.get(state_, group, key, stored_)) {
      byte_reader in(std::span<const char>(stored_.data(), stored_.size()));
      T current = type_serializer<T>::read(in);
      update(current, value);
      type_serializer<T>::write(current, value_bytes_);
    } else {
      out_->collect_ref(value);
      type_serializer<T>::write(value, value_bytes_);
    }
    backend.put(state_, group, key, std::string_view(value_bytes_.data(), value_bytes_.size()));
  }

  /// The key group of a new key, which must be one of this subtask's.
  int key_group_of(std::int32_t key_hash) const {
    int group = assign_to_key_group(key_hash, max_parallelism_);
    if (!range_.contains(group))
      throw std::logic_error(
        "Key group " + std::to_string(group) + " is not in KeyGroupRange{startKeyGroup="
        + std::to_string(range_.first) + ", endKeyGroup=" + std::to_string(range_.last)
        + "}: the record reached the wrong subtask");
    return group;
  }

  void update(T& current, const T& value) {
    if (fold_)
      fold_(current, value);
    else
      current = fn_(current, value);
    out_->collect_ref(current);
  }

  std::function<T(const T&, const T&)> fn_;
  std::function<void(T&, const T&)> fold_;
  key_extractor<T, K> key_;
  int max_parallelism_;
  key_group_range range_;
  /// The values themselves when the key is a field of them, else (key, value) pairs.
  keyed_value_table<T> by_field_;
  keyed_value_table<std::pair<K, T>> by_selector_;
  keyed_backend_holder backend_;
  std::uint32_t state_ = 0;
  std::vector<char> key_bytes_;
  std::vector<char> value_bytes_;
  std::string stored_;
  output_ref<T> out_;
};

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

/// Writes each record as a line to standard output, with Flink's `N> ` prefix (N = subtask + 1)
/// when the sink runs at parallelism above 1. Lines are handed on in batches, whole.
template <class T>
class print_sink final : public one_input_operator<T> {
public:
  explicit print_sink(const operator_context& ctx) : write_(ctx.write_stdout) {
    this->records_in_ = 0;
    if (ctx.parallelism > 1)
      prefix_ = std::to_string(ctx.subtask_index + 1) + "> ";
  }
  void process_element(const T& value) override {
    ++this->records_in_;
    text_ += prefix_;
    format_record(text_, value);
    text_ += '\n';
    if (text_.size() >= (1u << 16))
      end_of_batch();
  }
  void end_of_batch() override {
    if (!text_.empty() && write_)
      write_(text_);
    text_.clear();
  }
  void finish() override { end_of_batch(); }
  void close() override { end_of_batch(); }

private:
  std::function<void(std::string_view)> write_;
  std::string prefix_;
  std::string text_;
};

/// Writes each record as a line of text (Flink's writeAsText). At parallelism 1 `path` is the
/// file; above 1 it is a directory holding one file per subtask, named 1, 2, ... What existed at
/// the path was refused or removed when the job was submitted (initialize_text_output); a task
/// deletes nothing: it writes its own file, and a restarted attempt rewrites it.
template <class T>
class text_sink final : public one_input_operator<T> {
public:
  text_sink(std::string path, const operator_context& ctx)
    : path_(std::move(path)),
      subtask_(ctx.subtask_index),
      parallelism_(ctx.parallelism) {
    this->records_in_ = 0;
  }
  ~text_sink() override {
    if (file_)
      std::fclose(file_);
  }

  void open() override {
    std::filesystem::path target(path_);
    std::error_code ec;
    if (parallelism_ > 1) {
      std::filesystem::create_directories(target, ec);
      if (!std::filesystem::is_directory(target))
        throw std::runtime_error("Cannot create output directory " + path_ + ": "
                                 + (ec ? ec.message() : std::string(no_overwrite_message)));
      target /= std::to_string(subtask_ + 1);
    } else {
      if (std::filesystem::is_directory(target, ec))
        throw std::runtime_error("Cannot write to " + path_ + ": "
                                 + std::string(no_overwrite_message));
      if (target.has_parent_path())
        std::filesystem::create_directories(target.parent_path(), ec);
    }
    file_ = std::fopen(target.c_str(), "wb");
    if (!file_)
      throw std::runtime_error("Cannot open output file " + target.string() + ": "
                               + std::strerror(errno));
  }

  void process_element(const T& value) override {
    ++this->records_in_;
    text_.clear();
    format_record(text_, value);
    text_ += '\n';
    if (std::fwrite(text_.data(), 1, text_.size(), file_) != text_.size())
      throw std::runtime_error("Cannot write to " + path_ + ": " + std::strerror(errno));
  }

  void finish() override {
    if (file_ && std::fflush(file_) != 0)
      throw std::runtime_error("Cannot write to " + path_ + ": " + std::strerror(errno));
  }

  void close() override {
    if (file_) {
      std::fclose(file_);
      file_ = nullptr;
    }
  }

private:
  std::string path_;
  int subtask_;
  int parallelism_;
  std::FILE* file_ = nullptr;
  std::string text_;
};

} // namespace flint::streaming
