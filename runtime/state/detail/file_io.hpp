#pragma once
/// The few POSIX file operations checkpoint storage needs, with errors that name the path and
/// the system's reason ("Cannot write keyed state file /x/y: No space left on device").

#include "runtime/common/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
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
  /// The same file written around the page cache (O_DIRECT, through an aligned buffer of
  /// `direct_buffer_bytes`): for files written once, fsynced and rarely read (keyed state
  /// snapshots), whose copy into the page cache and write-back cost more CPU than the write.
  /// Where the file system refuses direct I/O or is not a local one (`takes_direct_io`), the
  /// writer falls back to `create`'s writes. A
  /// writer dropped before `close` may leave less than it was given.
  static expected<file_writer> create_direct(const std::string& path, const char* what);
  static constexpr std::size_t direct_buffer_bytes = 1 << 20;
  /// Direct I/O's alignment of memory, offsets and lengths (the largest logical block size).
  static constexpr std::size_t direct_alignment = 4096;
  file_writer(file_writer&& other) noexcept;
  file_writer& operator=(file_writer&& other) noexcept;
  ~file_writer();

  expected<unit> append(std::span<const char> bytes);
  /// fsyncs (when `sync`) and closes the file.
  expected<unit> close(bool sync = true);
  /// Bytes appended so far.
  std::uint64_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }
  /// Writes go around the page cache (create_direct, and the file system took it).
  bool direct() const noexcept { return direct_ != nullptr; }

private:
  struct free_aligned {
    void operator()(char* p) const noexcept;
  };

  file_writer(int fd, std::string path, const char* what)
    : fd_(fd),
      path_(std::move(path)),
      what_(what) {}

  expected<unit> write_all(const char* pos, std::size_t left);
  /// Writes the direct buffer's whole blocks (all of it when `last`, the tail padded with zeros
  /// and cut off again after).
  expected<unit> flush_direct(bool last);
  /// Direct I/O refused after `written` bytes of the buffer: the rest of it, and all that
  /// follows, goes through the page cache.
  expected<unit> leave_direct(std::size_t written, bool last);

  int fd_ = -1;
  std::string path_;
  const char* what_ = "";
  std::uint64_t size_ = 0;
  /// The direct writer's aligned buffer and how much of it is filled.
  std::unique_ptr<char, free_aligned> direct_;
  std::size_t buffered_ = 0;
};

/// Copies `from` into `to` (as `file_writer`; fsynced when `sync`) and returns the bytes copied.
/// Errors name the file that could not be read or written.
expected<std::uint64_t> copy_file(const std::string& from, const std::string& to, const char* what,
                                  bool sync = true);

/// Whether create_direct writes around the page cache on the file system of `fd`: local block
/// and memory file systems (ext4, xfs, btrfs, tmpfs), not network or FUSE ones.
bool takes_direct_io(int fd);

/// fsyncs a directory, so that a file created or renamed in it survives a crash.
expected<unit> sync_directory(const std::string& path, const char* what);

/// Reads `size` bytes at `offset` of `path`; a shorter file is "truncated (<have> of <need>
/// bytes)".
expected<std::vector<char>> read_range(const std::string& path, std::uint64_t offset,
                                       std::uint64_t size, const char* what);

/// Reads the whole file.
expected<std::vector<char>> read_file(const std::string& path, const char* what);

} // namespace flint::state::detail
