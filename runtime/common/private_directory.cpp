#include "runtime/common/private_directory.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace flint {

namespace fs = std::filesystem;

namespace {

/// `dir` without a trailing separator: lstat("link/") would follow the link.
fs::path without_trailing_separator(const fs::path& dir) {
  auto p = dir.lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path())
    p = p.parent_path();
  return p;
}

std::string quoted(std::string_view what, const fs::path& dir) {
  return std::string(what) + " " + dir.string();
}

} // namespace

expected<fs::path> make_private_directory(const fs::path& parent, std::string_view prefix) {
  std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    return make_error(errc::internal, "cannot create a private directory under " + parent.string()
                                        + ": " + std::strerror(errno));
  fs::path made(pattern);
  if (auto ok = check_private_directory(made, "the directory"); !ok)
    return ok.error();
  return made;
}

expected<fs::path> make_private_temp_directory(std::string_view prefix) {
  std::error_code ec;
  auto base = fs::temp_directory_path(ec);
  if (ec)
    return make_error(errc::internal, "no temporary directory: " + ec.message());
  return make_private_directory(base, prefix);
}

expected<unit> check_private_directory(const fs::path& dir, std::string_view what) {
  auto path = without_trailing_separator(dir);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return make_error(errc::invalid_argument,
                      quoted(what, path) + " cannot be used: " + std::strerror(errno));
  if (S_ISLNK(st.st_mode))
    return make_error(errc::invalid_argument,
                      quoted(what, path)
                        + " is a symbolic link; Flint uses only a real directory there, so that "
                          "nobody else can redirect what it writes");
  if (!S_ISDIR(st.st_mode))
    return make_error(errc::invalid_argument, quoted(what, path) + " is not a directory");
  if (st.st_uid != ::geteuid())
    return make_error(errc::invalid_argument,
                      quoted(what, path) + " is owned by user id " + std::to_string(st.st_uid)
                        + ", not by user id " + std::to_string(::geteuid())
                        + " that Flint runs as; Flint uses only a directory of its own user");
  return unit{};
}

expected<unit> prepare_private_directory(const fs::path& dir, std::string_view what) {
  auto path = without_trailing_separator(dir);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) {
    std::error_code ec;
    if (path.has_parent_path())
      fs::create_directories(path.parent_path(), ec);
    if (ec)
      return make_error(errc::invalid_argument,
                        quoted(what, path) + " cannot be created: " + ec.message());
    // EEXIST: made meanwhile by someone; the check below decides whether it may be used.
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
      return make_error(errc::invalid_argument,
                        quoted(what, path) + " cannot be created: " + std::strerror(errno));
  }
  return check_private_directory(path, what);
}

expected<std::string> read_file_no_follow(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return make_error(errc::not_found, path.string() + " does not exist");
    if (errno == ELOOP)
      return make_error(errc::invalid_argument, path.string() + " is a symbolic link");
    return make_error(errc::internal,
                      "cannot open " + path.string() + ": " + std::strerror(errno));
  }
  auto bytes = read_open_file(fd, path);
  ::close(fd);
  return bytes;
}

expected<std::string> read_open_file(int fd, const fs::path& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(errc::invalid_argument, name.string() + " is not a regular file");
  std::string bytes;
  bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (true) {
    if (done == bytes.size())
      bytes.resize(bytes.size() + 4096); // the file grew since fstat
    auto n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return make_error(errc::internal,
                        "cannot read " + name.string() + ": " + std::strerror(errno));
    if (n == 0)
      break;
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

owned_directory::~owned_directory() {
  remove();
}

owned_directory::owned_directory(owned_directory&& other) noexcept
  : path_(std::exchange(other.path_, {})) {}

owned_directory& owned_directory::operator=(owned_directory&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

void owned_directory::remove() noexcept {
  if (path_.empty())
    return;
  // Only while it is still the directory Flint made: never through a link put in its place.
  if (check_private_directory(path_, "the directory")) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  path_.clear();
}

} // namespace flint
