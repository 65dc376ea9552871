#include "runtime/state/detail/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

} // namespace

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

file_writer::file_writer(file_writer&& other) noexcept
  : fd_(std::exchange(other.fd_, -1)),
    path_(std::move(other.path_)),
    what_(other.what_),
    size_(other.size_) {}

file_writer& file_writer::operator=(file_writer&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    what_ = other.what_;
    size_ = other.size_;
  }
  return *this;
}

file_writer::~file_writer() {
  if (fd_ >= 0)
    ::close(fd_);
}

expected<unit> file_writer::append(std::span<const char> bytes) {
  const char* pos = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    auto n = ::write(fd_, pos, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return io_error("write", what_, path_, errno);
    pos += n;
    left -= static_cast<std::size_t>(n);
  }
  size_ += bytes.size();
  return unit{};
}

expected<unit> file_writer::close(bool sync) {
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
