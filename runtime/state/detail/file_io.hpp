#pragma once
/// The few POSIX file operations checkpoint storage needs, with errors that name the path and
/// the system's reason ("Cannot write keyed state file /x/y: No space left on device").

#include "runtime/common/expected.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace flint::state::detail {

/// `path` without a leading "file://" (Flink's local file system URIs).
std::string local_path(std::string path);

/// Creates `path` and its missing parents; `what` names it in errors ("checkpoint directory").
expected<unit> make_directories(const std::string& path, const char* what);

/// Writes `parts` one after another into `path` (created or truncated, parent directories made),
/// fsyncs and closes it.
expected<unit> write_file(const std::string& path, std::span<const std::span<const char>> parts,
                          const char* what);

/// A file written front to back (created or truncated, parent directories made) and fsynced
/// when closed; a writer dropped before `close` leaves what it wrote.
class file_writer {
public:
  static expected<file_writer> create(const std::string& path, const char* what);
  file_writer(file_writer&& other) noexcept;
  file_writer& operator=(file_writer&& other) noexcept;
  ~file_writer();

  expected<unit> append(std::span<const char> bytes);
  /// fsyncs (when `sync`) and closes the file.
  expected<unit> close(bool sync = true);
  /// Bytes appended so far.
  std::uint64_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

private:
  file_writer(int fd, std::string path, const char* what)
    : fd_(fd),
      path_(std::move(path)),
      what_(what) {}

  int fd_ = -1;
  std::string path_;
  const char* what_ = "";
  std::uint64_t size_ = 0;
};

/// Copies `from` into `to` (as `file_writer`; fsynced when `sync`) and returns the bytes copied.
/// Errors name the file that could not be read or written.
expected<std::uint64_t> copy_file(const std::string& from, const std::string& to, const char* what,
                                  bool sync = true);

/// fsyncs a directory, so that a file created or renamed in it survives a crash.
expected<unit> sync_directory(const std::string& path, const char* what);

/// Reads `size` bytes at `offset` of `path`; a shorter file is "truncated (<have> of <need>
/// bytes)".
expected<std::vector<char>> read_range(const std::string& path, std::uint64_t offset,
                                       std::uint64_t size, const char* what);

/// Reads the whole file.
expected<std::vector<char>> read_file(const std::string& path, const char* what);

} // namespace flint::state::detail
