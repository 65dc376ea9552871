#pragma once
/// The spill folders of one TaskExecutor under `io.tmp.dirs` (Flink's FileChannelManagerImpl).

#include "runtime/common/expected.hpp"

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace flint::network {

/// Owns one folder `<prefix>-<pid>-<random>` in each configured temp directory, so two
/// TaskExecutors (or two processes) sharing a temp directory never meet. Folders are made on
/// first use: a TaskExecutor that never spills never touches the disk, and a bad directory fails
/// the first task that needs it (with the path in the message) rather than the TaskExecutor.
/// Everything made is deleted by close() and the destructor. Thread-safe.
class file_channel_manager {
public:
  /// Folders under `tmp_dirs` (the system temp directory when empty).
  file_channel_manager(std::vector<std::string> tmp_dirs, const std::string& prefix);
  ~file_channel_manager();
  file_channel_manager(const file_channel_manager&) = delete;
  file_channel_manager& operator=(const file_channel_manager&) = delete;

  /// The folder `name` (one per job) in the next temp directory, round robin, made if needed.
  /// invalid_argument naming the path when it cannot be made (a missing temp directory, a file
  /// in its place, no permission).
  expected<std::filesystem::path> directory(const std::string& name);
  /// Deletes folder `name` with its files in every temp directory.
  void remove(const std::string& name);
  /// Deletes every folder made; later calls to directory() make them anew.
  void close();

  /// The temp directories in use (io.tmp.dirs, or the system's).
  const std::vector<std::filesystem::path>& tmp_dirs() const noexcept { return tmp_dirs_; }
  /// This manager's folder in temp directory `i`.
  std::filesystem::path root(std::size_t i) const { return tmp_dirs_.at(i) / folder_; }

private:
  std::vector<std::filesystem::path> tmp_dirs_;
  std::string folder_;
  mutable std::mutex mutex_;
  std::vector<bool> made_;
  std::size_t next_ = 0;
};

} // namespace flint::network
