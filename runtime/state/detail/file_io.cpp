#include "runtime/state/detail/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace flint::state::detail {

namespace {

error io_error(const char* verb, const char* what, const std::string& path, int err) {
  return make_error(
    err == ENOENT ? errc::not_found : errc::internal,
    std::string("Cannot ") + verb + " " + what + " " + path + ": " + std::strerror(err));
}

/// Closes the descriptor on every path out.
struct file_descriptor {
  int fd = -1;
  ~file_descriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Local block and memory file systems, where one fsync after direct writes is cheap. On a
/// network or FUSE file system (where shared checkpoint storage lives) each direct write can be a
/// synchronous round trip, so those keep the page cache and one fsync.
bool suits_direct_io(long type) {
  constexpr long ext4 = 0xEF53, xfs = 0x58465342, btrfs = 0x9123683E, tmpfs = 0x01021994;
  return type == ext4 || type == xfs || type == btrfs || type == tmpfs;
}

} // namespace

bool takes_direct_io(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && suits_direct_io(static_cast<long>(fs.f_type));
}

std::string local_path(std::string path) {
  constexpr std::string_view scheme = "file://";
  if (path.starts_with(scheme))
    path.erase(0, scheme.size());
  return path;
}

expected<unit> make_directories(const std::string& path, const char* what) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec)
    return make_error(errc::internal,
                      std::string("Cannot create ") + what + " " + path + ": " + ec.message());
  // create_directories is content with an existing non-directory at the end of the path.
  if (!std::filesystem::is_directory(path, ec))
    return make_error(errc::internal,
                      std::string("Cannot create ") + what + " " + path + ": not a directory");
  return unit{};
}

expected<file_writer> file_writer::create(const std::string& path, const char* what) {
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      return make_error(errc::internal,
                        std::string("Cannot write ") + what + " " + path + ": cannot create "
                          + parent.string() + ": " + ec.message());
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error("write", what, path, errno);
  return file_writer(fd, path, what);
}

expected<file_writer> file_writer::create_direct(const std::string& path, const char* what) {
  auto out = create(path, what);
  if (!out || !takes_direct_io(out->fd_))
    return out;
  void* buffer = nullptr;
  if (::posix_memalign(&buffer, direct_alignment, direct_buffer_bytes) != 0)
    return out; // no aligned memory: through the page cache
  out->direct_.reset(static_cast<char*>(buffer));
  int flags = ::fcntl(out->fd_, F_GETFL);
  if (flags < 0 || ::fcntl(out->fd_, F_SETFL, flags | O_DIRECT) != 0)
    out->direct_.reset(); // the file system has no direct I/O (tmpfs before Linux 6.6)
  return out;
}

void file_writer::free_aligned::operator()(char* p) const noexcept { std::free(p); }

file_writer::file_writer(file_writer&& other) noexcept
  : fd_(std::exchange(other.fd_, -1)),
    path_(std::move(other.path_)),
    what_(other.what_),
    size_(other.size_),
    direct_(std::move(other.direct_)),
    buffered_(std::exchange(other.buffered_, 0)) {}

file_writer& file_writer::operator=(file_writer&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    what_ = other.what_;
    size_ = other.size_;
    direct_ = std::move(other.direct_);
    buffered_ = std::exchange(other.buffered_, 0);
  }
  return *this;
}

file_writer::~file_writer() {
  if (fd_ >= 0)
    ::close(fd_);
}

expected<unit> file_writer::write_all(const char* pos, std::size_t left) {
  while (left > 0) {
    auto n = ::write(fd_, pos, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return io_error("write", what_, path_, errno);
    pos += n;
    left -= static_cast<std::size_t>(n);
  }
  return unit{};
}

expected<unit> file_writer::append(std::span<const char> bytes) {
  if (!direct_) {
    if (auto written = write_all(bytes.data(), bytes.size()); !written)
      return written;
    size_ += bytes.size();
    return unit{};
  }
  while (!bytes.empty()) {
    auto n = std::min(bytes.size(), direct_buffer_bytes - buffered_);
    std::memcpy(direct_.get() + buffered_, bytes.data(), n);
    buffered_ += n;
    size_ += n;
    bytes = bytes.subspan(n);
    if (buffered_ == direct_buffer_bytes)
      if (auto flushed = flush_direct(false); !flushed)
        return flushed;
    if (!direct_) // direct I/O refused: the rest through the page cache
      return append(bytes);
  }
  return unit{};
}

expected<unit> file_writer::flush_direct(bool last) {
  auto whole = buffered_ / direct_alignment * direct_alignment;
  auto length =
    last ? (buffered_ + direct_alignment - 1) / direct_alignment * direct_alignment : whole;
  if (length == 0)
    return unit{};
  std::memset(direct_.get() + buffered_, 0, length - buffered_);
  std::size_t done = 0;
  while (done < length) {
    auto n = ::write(fd_, direct_.get() + done, length - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno != EINVAL)
      return io_error("write", what_, path_, errno);
    if (n <= 0 || static_cast<std::size_t>(n) % direct_alignment != 0)
      // Refused (an alignment the file system wants larger, no direct I/O after all) or a
      // short write off the alignment: the rest through the page cache.
      return leave_direct(done + static_cast<std::size_t>(std::max<ssize_t>(n, 0)), last);
    done += static_cast<std::size_t>(n);
  }
  if (last) {
    buffered_ = 0;
    // The padding goes again: the file is as long as what it was given.
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0)
      return io_error("write", what_, path_, errno);
    return unit{};
  }
  buffered_ -= whole;
  std::memmove(direct_.get(), direct_.get() + whole, buffered_);
  return unit{};
}

expected<unit> file_writer::leave_direct(std::size_t written, bool last) {
  auto buffer = std::move(direct_);
  auto filled = std::exchange(buffered_, 0);
  int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0)
    return io_error("write", what_, path_, errno);
  if (written < filled)
    return write_all(buffer.get() + written, filled - written);
  if (last && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0)
    return io_error("write", what_, path_, errno);
  return unit{};
}

expected<unit> file_writer::close(bool sync) {
  if (direct_)
    if (auto flushed = flush_direct(true); !flushed)
      return flushed;
  if (sync && ::fsync(fd_) != 0)
    return io_error("write", what_, path_, errno);
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0)
    return io_error("write", what_, path_, errno);
  return unit{};
}

expected<unit> write_file(const std::string& path, std::span<const std::span<const char>> parts,
                          const char* what) {
  auto file = file_writer::create(path, what);
  if (!file)
    return file.error();
  for (auto part : parts)
    if (auto appended = file->append(part); !appended)
      return appended;
  return file->close();
}

expected<std::uint64_t> copy_file(const std::string& from, const std::string& to, const char* what,
                                  bool sync) {
  file_descriptor in{::open(from.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0)
    return io_error("read", what, from, errno);
  auto out = file_writer::create(to, what);
  if (!out)
    return out.error();
  std::vector<char> buffer(1 << 20);
  for (;;) {
    auto n = ::read(in.fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return io_error("read", what, from, errno);
    if (n == 0)
      break;
    if (auto appended = out->append({buffer.data(), static_cast<std::size_t>(n)}); !appended)
      return appended.error();
  }
  auto size = out->size();
  if (auto closed = out->close(sync); !closed)
    return closed.error();
  return size;
}

expected<unit> sync_directory(const std::string& path, const char* what) {
  file_descriptor dir{::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0)
    return io_error("sync", what, path, errno);
  if (::fsync(dir.fd) != 0)
    return io_error("sync", what, path, errno);
  return unit{};
}

expected<std::vector<char>> read_range(const std::string& path, std::uint64_t offset,
                                       std::uint64_t size, const char* what) {
  file_descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0)
    return io_error("read", what, path, errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    return io_error("read", what, path, errno);
  if (!S_ISREG(st.st_mode))
    return make_error(errc::invalid_argument,
                      std::string("Cannot read ") + what + " " + path + ": not a regular file");
  auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (file_size < offset + size)
    return make_error(errc::invalid_argument,
                      std::string("Cannot read ") + what + " " + path + ": truncated ("
                        + std::to_string(file_size) + " of " + std::to_string(offset + size)
                        + " bytes)");
  std::vector<char> out(size);
  std::uint64_t done = 0;
  while (done < size) {
    auto n = ::pread(file.fd, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return io_error("read", what, path, errno);
    if (n == 0)
      return make_error(errc::invalid_argument,
                        std::string("Cannot read ") + what + " " + path
                          + ": truncated while reading (" + std::to_string(offset + done) + " of "
                          + std::to_string(offset + size) + " bytes)");
    done += static_cast<std::uint64_t>(n);
  }
  return out;
}

expected<std::vector<char>> read_file(const std::string& path, const char* what) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return io_error("read", what, path, ec.value());
  return read_range(path, 0, size, what);
}

} // namespace flint::state::detail
