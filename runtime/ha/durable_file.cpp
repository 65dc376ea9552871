#include "runtime/ha/durable_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace flint::ha {

namespace {

error io_error(const std::string& what, const std::filesystem::path& path, int err) {
  return make_error(err == ENOENT ? errc::not_found : errc::internal,
                    what + " " + path.string() + ": " + std::strerror(err));
}

/// fsync of a directory makes the entries created or renamed in it durable.
expected<unit> sync_directory(const std::filesystem::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return io_error("open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0)
    return io_error("fsync directory", dir, err);
  return unit{};
}

/// A name no other writer in this process or another one uses at the same time, so concurrent
/// writers of the same target never share a temporary file.
std::filesystem::path temporary_beside(const std::filesystem::path& target) {
  static std::atomic<std::uint64_t> counter{0};
  auto name = target.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-"
    + std::to_string(counter.fetch_add(1));
  return target.parent_path() / name;
}

} // namespace

expected<unit> write_file_atomically(const std::filesystem::path& target, std::string_view bytes) {
  auto dir = target.parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return make_error(errc::internal, "create directory " + dir.string() + ": " + ec.message());
  }
  auto tmp = temporary_beside(target);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error("create", tmp, errno);
  auto fail = [&](const std::string& what, int err) -> expected<unit> {
    ::close(fd);
    ::unlink(tmp.c_str());
    return io_error(what, tmp, err);
  };
  std::size_t written = 0;
  while (written < bytes.size()) {
    auto n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return fail("write", errno);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0)
    return fail("fsync", errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return io_error("close", tmp, err);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return io_error("rename to " + target.string() + ":", tmp, err);
  }
  return sync_directory(dir);
}

expected<std::string> read_whole_file(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return io_error("open", path, errno);
  std::string out;
  char buffer[64 * 1024];
  for (;;) {
    auto n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return io_error("read", path, err);
    }
    if (n == 0)
      break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

expected<unit> rename_durably(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    return io_error("rename to " + to.string() + ":", from, errno);
  return sync_directory(to.parent_path());
}

} // namespace flint::ha
