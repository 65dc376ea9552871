#pragma once
/// The exactly-once text sink (Flink's FileSink in row format with OnCheckpointRollingPolicy and
/// its two-phase commit): each subtask writes into a hidden in-progress part file in the output
/// directory; at a checkpoint's barrier the file is closed and becomes pending for that
/// checkpoint; when the checkpoint completes, its pending files are committed — renamed to their
/// visible names. A restored subtask commits the pending files of the checkpoint it restores (it
/// completed) and removes its in-progress files written after it (their records are replayed).
/// Readers of the directory see committed files only.
///
/// Names as Flink's: `.part-<uuid>-<subtask>-<n>.inprogress` while written and pending,
/// `part-<uuid>-<subtask>-<n>` committed; `<uuid>` is new for every attempt, so a restarted
/// attempt never writes over a file of an earlier one.

#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/record_format.hpp"
#include "runtime/streaming/type_serializer.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace flint::streaming {

namespace file_sink_detail {

/// A part file waiting for its checkpoint to complete.
struct pending_file {
  std::int64_t checkpoint_id = 0;
  /// The writing subtask's index and parallelism (a restore at another parallelism keeps every
  /// in-progress file: it cannot tell which ones other subtasks still commit).
  std::int32_t subtask = 0;
  std::int32_t parallelism = 1;
  std::string in_progress;
  std::string committed;
};

inline std::vector<char> encode(const pending_file& p) {
  std::vector<char> out;
  type_serializer<std::int64_t>::write(p.checkpoint_id, out);
  type_serializer<std::int32_t>::write(p.subtask, out);
  type_serializer<std::int32_t>::write(p.parallelism, out);
  type_serializer<std::string>::write(p.in_progress, out);
  type_serializer<std::string>::write(p.committed, out);
  return out;
}

inline pending_file decode(const std::vector<char>& entry) {
  byte_reader in(entry);
  pending_file p;
  p.checkpoint_id = type_serializer<std::int64_t>::read(in);
  p.subtask = type_serializer<std::int32_t>::read(in);
  p.parallelism = type_serializer<std::int32_t>::read(in);
  p.in_progress = type_serializer<std::string>::read(in);
  p.committed = type_serializer<std::string>::read(in);
  if (!in.at_end())
    throw std::runtime_error("the restored state of the file sink has trailing bytes");
  return p;
}

inline void commit(const pending_file& p) {
  std::error_code ec;
  if (std::filesystem::exists(p.in_progress, ec)) {
    std::filesystem::rename(p.in_progress, p.committed, ec);
    if (ec)
      throw std::runtime_error("Cannot commit part file " + p.in_progress + " as " + p.committed
                               + ": " + ec.message());
    return;
  }
  if (!std::filesystem::exists(p.committed, ec))
    throw std::runtime_error("Cannot commit part file " + p.committed + ": neither it nor "
                             + p.in_progress + " exists");
}

/// Flushes and closes `file` (written at `path`); throws naming the path.
inline void close(std::FILE* file, const std::string& path) {
  bool ok = std::fflush(file) == 0;
  auto err = errno;
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    throw std::runtime_error("Cannot write part file " + path + ": " + std::strerror(err));
}

/// Makes the closed part files at `paths` durable (off the task's thread, before the checkpoint
/// is acknowledged: a committed file must survive the machine).
inline expected<unit> sync(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    int fd = ::open(path.c_str(), O_RDONLY);
    bool ok = fd >= 0 && ::fsync(fd) == 0;
    auto err = errno;
    if (fd >= 0)
      ::close(fd);
    if (!ok)
      return make_error(errc::internal,
                        "Cannot sync part file " + path + ": " + std::strerror(err));
  }
  return unit{};
}

inline void remove_in_progress(const std::filesystem::path& dir, std::int32_t subtask,
                               const std::vector<pending_file>& keep) {
  auto marker = "-" + std::to_string(subtask) + "-";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    if (!name.starts_with(".part-") || !name.ends_with(".inprogress"))
      continue;
    // .part-<uuid>-<subtask>-<n>.inprogress: the subtask sits after the 32-digit uuid.
    if (name.size() < 6 + 32 + marker.size() || name.compare(6 + 32, marker.size(), marker) != 0)
      continue;
    bool kept = false;
    for (const auto& p : keep)
      kept = kept || std::filesystem::path(p.in_progress).filename() == entry.path().filename();
    if (!kept)
      std::filesystem::remove(entry.path(), ec);
  }
}

} // namespace file_sink_detail

template <class T>
class file_sink final : public one_input_operator<T> {
public:
  file_sink(std::string dir, const operator_context& ctx)
    : dir_(std::move(dir)),
      subtask_(ctx.subtask_index),
      parallelism_(ctx.parallelism) {
    this->records_in_ = 0;
    std::random_device seed;
    std::mt19937_64 rng((static_cast<std::uint64_t>(seed()) << 32) ^ seed());
    char uuid[40];
    std::snprintf(uuid, sizeof uuid, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    uuid_ = uuid;
  }

  bool awaits_commit() const override { return file_ != nullptr || !pending_.empty(); }

  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.present())
      return;
    std::vector<file_sink_detail::pending_file> restored;
    for (const auto& entry : restore.list_entries())
      restored.push_back(file_sink_detail::decode(entry));
    restored_ = std::move(restored);
  }

  void open() override {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (!std::filesystem::is_directory(dir_))
      throw std::runtime_error("Cannot create output directory " + dir_ + ": " + ec.message());
    if (!restored_)
      return;
    // The restored checkpoint completed: its pending files are committed now (Flink's
    // FileCommitter on restore). Files written after it are replayed, so they go.
    bool same_parallelism = true;
    for (const auto& p : *restored_) {
      file_sink_detail::commit(p);
      same_parallelism = same_parallelism && p.parallelism == parallelism_;
    }
    if (same_parallelism)
      file_sink_detail::remove_in_progress(dir_, subtask_, *restored_);
    restored_.reset();
  }

  ~file_sink() override { close(); }

  void process_element(const T& value) override {
    ++this->records_in_;
    if (!file_)
      start_part();
    text_.clear();
    format_record(text_, value);
    text_ += '\n';
    if (std::fwrite(text_.data(), 1, text_.size(), file_) != text_.size())
      throw std::runtime_error("Cannot write to " + current_.in_progress + ": "
                               + std::strerror(errno));
  }

  /// The part file being written is closed and becomes pending for `checkpoint_id`; it is
  /// synced to disk by the checkpoint's asynchronous part, so processing goes on meanwhile.
  state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) override {
    state::operator_snapshot s;
    if (file_) {
      auto* file = std::exchange(file_, nullptr);
      file_sink_detail::close(file, current_.in_progress);
      current_.checkpoint_id = checkpoint_id;
      s.before_acknowledge = [paths = std::vector<std::string>{current_.in_progress}] {
        return file_sink_detail::sync(paths);
      };
      pending_.push_back(std::move(current_));
    }
    for (const auto& p : pending_)
      s.list_entries.push_back(file_sink_detail::encode(p));
    return s;
  }

  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    std::vector<file_sink_detail::pending_file> later;
    for (auto& p : pending_) {
      if (p.checkpoint_id <= checkpoint_id)
        file_sink_detail::commit(p);
      else
        later.push_back(std::move(p));
    }
    pending_ = std::move(later);
  }

  /// A failed or cancelled attempt's in-progress file stays hidden (a restore removes it).
  void close() override {
    if (file_)
      std::fclose(std::exchange(file_, nullptr));
  }

private:
  void start_part() {
    auto name = "part-" + uuid_ + "-" + std::to_string(subtask_) + "-" + std::to_string(counter_++);
    current_ = {0, subtask_, parallelism_, dir_ + "/." + name + ".inprogress", dir_ + "/" + name};
    file_ = std::fopen(current_.in_progress.c_str(), "wb");
    if (!file_)
      throw std::runtime_error("Cannot open part file " + current_.in_progress + ": "
                               + std::strerror(errno));
  }

  std::string dir_;
  std::int32_t subtask_;
  std::int32_t parallelism_;
  std::string uuid_;
  std::uint64_t counter_ = 0;
  /// The in-progress part file, if records came since the last checkpoint.
  std::FILE* file_ = nullptr;
  file_sink_detail::pending_file current_;
  std::string text_;
  std::vector<file_sink_detail::pending_file> pending_;
  std::optional<std::vector<file_sink_detail::pending_file>> restored_;
};

} // namespace flint::streaming
