#pragma once
/// The exactly-once text sink (Flink's FileSink in row format with OnCheckpointRollingPolicy and
/// its two-phase commit): each subtask writes into a hidden in-progress part file in the output
/// directory; at a checkpoint's barrier the file is closed and becomes pending for that
/// checkpoint; when the checkpoint completes, its pending files are committed — renamed to their
/// visible names. A restored subtask commits the pending files of the checkpoint it restores (it
/// completed) and removes its in-progress files written after it (their records are replayed).
/// Readers of the directory see committed files only. The sink owns only the files of its
/// writers (their uuids travel in its state): it adds them beside whatever the directory holds
/// and never removes another file.
///
/// Names as Flink's: `.part-<uuid>-<subtask>-<n>.inprogress` while written and pending,
/// `part-<uuid>-<subtask>-<n>` committed; `<uuid>` is new for every attempt, so a restarted
/// attempt never writes over a file of an earlier one.

#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/record_format.hpp"
#include "runtime/streaming/type_serializer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace flint::streaming {

namespace file_sink_detail {

/// A part file waiting for its checkpoint to complete (whole paths: a job restored with another
/// output path still commits the files where they were written, as Flink's FileSink does).
struct pending_file {
  std::int64_t checkpoint_id = 0;
  std::string in_progress;
  std::string committed;
};

/// What one writer (one attempt of one subtask) owns in the directory: the files of its name
/// prefix `.part-<uuid>-<subtask>-`, some of them pending. A checkpoint holds one entry per
/// writer, so at any parallelism exactly one subtask inherits it: that one commits its pending
/// files and removes its other in-progress files, and nothing else in the directory is touched.
struct writer_state {
  /// The directory it wrote into.
  std::string dir;
  std::string uuid;
  std::int32_t subtask = 0;
  std::vector<pending_file> pending;
};

/// Entries start with this tag where the first sink's entries (one pending file each, whole
/// paths) started with a checkpoint id, which is never negative.
inline constexpr std::int64_t writer_entry_tag = -1;

inline std::vector<char> encode(const writer_state& w) {
  std::vector<char> out;
  type_serializer<std::int64_t>::write(writer_entry_tag, out);
  type_serializer<std::string>::write(w.dir, out);
  type_serializer<std::string>::write(w.uuid, out);
  type_serializer<std::int32_t>::write(w.subtask, out);
  type_serializer<std::int32_t>::write(static_cast<std::int32_t>(w.pending.size()), out);
  for (const auto& p : w.pending) {
    type_serializer<std::int64_t>::write(p.checkpoint_id, out);
    type_serializer<std::string>::write(p.in_progress, out);
    type_serializer<std::string>::write(p.committed, out);
  }
  return out;
}

/// A restored entry; the first sink's form (one pending file by whole paths, no owner) comes back
/// as a writer without a uuid, whose file is committed and nothing removed.
inline writer_state decode(const std::vector<char>& entry) {
  byte_reader in(entry);
  writer_state w;
  auto first = type_serializer<std::int64_t>::read(in);
  if (first != writer_entry_tag) {
    pending_file p;
    p.checkpoint_id = first;
    (void)type_serializer<std::int32_t>::read(in); // subtask
    (void)type_serializer<std::int32_t>::read(in); // parallelism
    p.in_progress = type_serializer<std::string>::read(in);
    p.committed = type_serializer<std::string>::read(in);
    w.pending.push_back(std::move(p));
  } else {
    w.dir = type_serializer<std::string>::read(in);
    w.uuid = type_serializer<std::string>::read(in);
    w.subtask = type_serializer<std::int32_t>::read(in);
    auto n = type_serializer<std::int32_t>::read(in);
    // No reserve: a corrupt count runs out of bytes at the first missing file.
    if (n < 0)
      throw std::runtime_error("the restored state of the file sink claims " + std::to_string(n)
                               + " pending files");
    for (std::int32_t i = 0; i < n; ++i) {
      pending_file p;
      p.checkpoint_id = type_serializer<std::int64_t>::read(in);
      p.in_progress = type_serializer<std::string>::read(in);
      p.committed = type_serializer<std::string>::read(in);
      w.pending.push_back(std::move(p));
    }
  }
  if (!in.at_end())
    throw std::runtime_error("the restored state of the file sink has trailing bytes");
  return w;
}

/// Makes the renames in `dir` durable: a committed name must survive the machine.
inline void sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  bool ok = fd >= 0 && ::fsync(fd) == 0;
  auto err = errno;
  if (fd >= 0)
    ::close(fd);
  if (!ok)
    throw std::runtime_error("Cannot sync directory " + dir + ": " + std::strerror(err));
}

/// Renames a pending file to its visible name; a file committed already (a repeated restore) is
/// fine, one missing in both names is an error.
inline void commit(const pending_file& p) {
  std::filesystem::path from(p.in_progress);
  std::filesystem::path to(p.committed);
  std::error_code ec;
  if (std::filesystem::exists(from, ec)) {
    std::filesystem::rename(from, to, ec);
    if (ec)
      throw std::runtime_error("Cannot commit part file " + from.string() + " as " + to.string()
                               + ": " + ec.message());
    return;
  }
  if (!std::filesystem::exists(to, ec))
    throw std::runtime_error("Cannot commit part file " + to.string() + ": neither it nor "
                             + from.string() + " exists");
}

/// Flushes and closes `file` (written at `path`); throws naming the path.
inline void close(std::FILE* file, const std::string& path) {
  bool ok = std::fflush(file) == 0;
  auto err = errno;
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    throw std::runtime_error("Cannot write part file " + path + ": " + std::strerror(err));
}

/// Makes the closed part files at `paths` durable, then the renames of earlier commits in
/// `dir` when it is not empty (off the task's thread, before the checkpoint is acknowledged: a
/// committed file must survive the machine).
inline expected<unit> sync(const std::vector<std::string>& paths, const std::string& dir = {}) {
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
  if (!dir.empty()) {
    try {
      sync_directory(dir);
    } catch (const std::exception& e) {
      return make_error(errc::internal, e.what());
    }
  }
  return unit{};
}

/// `.part-<uuid>-<subtask>-`: every file of one writer starts so.
inline std::string writer_prefix(const std::string& uuid, std::int32_t subtask) {
  return ".part-" + uuid + "-" + std::to_string(subtask) + "-";
}

/// Removes the in-progress files of the restored writer `w` that no completed checkpoint holds:
/// written after the restored checkpoint, their records are replayed. Only names of `w`'s own
/// prefix are candidates; a file of any other writer, job or user is never touched.
inline void remove_uncommitted(const writer_state& w) {
  if (w.uuid.empty())
    return;
  auto prefix = writer_prefix(w.uuid, w.subtask);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(w.dir, ec)) {
    auto name = entry.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(".inprogress")
        && entry.is_regular_file(ec))
      std::filesystem::remove(entry.path(), ec);
  }
}

} // namespace file_sink_detail

template <class T>
class file_sink final : public one_input_operator<T> {
public:
  file_sink(std::string dir, const operator_context& ctx)
    : dir_(std::move(dir)),
      subtask_(ctx.subtask_index) {
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
    std::vector<file_sink_detail::writer_state> restored;
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
    // The restored checkpoint completed: the pending files of the writers this subtask inherits
    // are committed now (Flink's FileCommitter on restore). Their files written after it are
    // replayed, so they go.
    std::set<std::string> dirs;
    for (const auto& w : *restored_)
      for (const auto& p : w.pending) {
        file_sink_detail::commit(p);
        dirs.insert(std::filesystem::path(p.committed).parent_path().string());
      }
    for (const auto& dir : dirs)
      file_sink_detail::sync_directory(dir);
    for (const auto& w : *restored_)
      file_sink_detail::remove_uncommitted(w);
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
  /// synced to disk by the checkpoint's asynchronous part, so processing goes on meanwhile. So
  /// are the renames of commits since the last checkpoint that synced them: this snapshot no
  /// longer lists their files, so a restore from it could not commit them again. The entry
  /// names this writer even with nothing pending: whoever restores it removes what it wrote
  /// after the checkpoint.
  state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) override {
    state::operator_snapshot s;
    std::vector<std::string> paths;
    if (file_) {
      auto* file = std::exchange(file_, nullptr);
      paths.push_back(current_.in_progress);
      file_sink_detail::close(file, current_.in_progress);
      current_.checkpoint_id = checkpoint_id;
      pending_.push_back(std::move(current_));
    }
    std::string dir;
    if (commits_ > synced_commits_) {
      dir = dir_;
      syncs_[checkpoint_id] = commits_;
    }
    if (!paths.empty() || !dir.empty())
      s.before_acknowledge = [paths = std::move(paths), dir = std::move(dir)] {
        return file_sink_detail::sync(paths, dir);
      };
    s.list_entries.push_back(file_sink_detail::encode({dir_, uuid_, subtask_, pending_}));
    return s;
  }

  /// Commits the pending files of `checkpoint_id` and before. The renames are made durable by
  /// the next checkpoint's asynchronous part rather than here on the task's thread (an fsync of
  /// the directory per checkpoint, 5-60 ms on this machine's disk): until a checkpoint that
  /// synced them completes, the latest completed checkpoint still lists their files, and a
  /// restore from it commits them again. After the input ended there is no next checkpoint:
  /// the job's last commit is synced here, before the task finishes.
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    // A completed checkpoint's directory sync covers the commits before its snapshot.
    for (auto it = syncs_.begin(); it != syncs_.end() && it->first <= checkpoint_id;) {
      synced_commits_ = std::max(synced_commits_, it->second);
      it = syncs_.erase(it);
    }
    std::vector<file_sink_detail::pending_file> later;
    bool committed = false;
    for (auto& p : pending_) {
      if (p.checkpoint_id <= checkpoint_id) {
        file_sink_detail::commit(p);
        committed = true;
      } else {
        later.push_back(std::move(p));
      }
    }
    pending_ = std::move(later);
    if (!committed)
      return;
    ++commits_;
    if (input_ended_) {
      file_sink_detail::sync_directory(dir_);
      synced_commits_ = commits_;
    }
  }

  void finish() override { input_ended_ = true; }

  /// A failed or cancelled attempt's in-progress file stays hidden (a restore removes it).
  void close() override {
    if (file_)
      std::fclose(std::exchange(file_, nullptr));
  }

private:
  void start_part() {
    auto n = std::to_string(counter_++);
    auto name = "part-" + uuid_ + "-" + std::to_string(subtask_) + "-" + n;
    current_ = {0, dir_ + "/" + file_sink_detail::writer_prefix(uuid_, subtask_) + n + ".inprogress",
                dir_ + "/" + name};
    file_ = std::fopen(current_.in_progress.c_str(), "wb");
    if (!file_)
      throw std::runtime_error("Cannot open part file " + current_.in_progress + ": "
                               + std::strerror(errno));
  }

  std::string dir_;
  std::int32_t subtask_;
  std::string uuid_;
  std::uint64_t counter_ = 0;
  /// The in-progress part file, if records came since the last checkpoint.
  std::FILE* file_ = nullptr;
  file_sink_detail::pending_file current_;
  std::string text_;
  std::vector<file_sink_detail::pending_file> pending_;
  std::optional<std::vector<file_sink_detail::writer_state>> restored_;
  /// Commits so far, and how many of them a completed checkpoint's directory sync covers.
  std::uint64_t commits_ = 0;
  std::uint64_t synced_commits_ = 0;
  /// Checkpoints whose asynchronous part syncs the directory: the commits it covers.
  std::map<std::int64_t, std::uint64_t> syncs_;
  /// Every input ended (finish): the next commit is the last.
  bool input_ended_ = false;
};

} // namespace flint::streaming
