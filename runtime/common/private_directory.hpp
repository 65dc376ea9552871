#pragma once
/// Directories only Flint's own user can use. Flink keeps its blob store and local state under
/// java.io.tmpdir in directories with random names; here they are private too, because the
/// temporary directory is shared with every user of the machine: a directory Flint makes there is
/// mkdtemp's (mode 0700, a fresh random name nobody could have prepared), and a directory it is
/// given is used only if it is a real directory (not a symbolic link) owned by the effective user
/// Flint runs as. Another user can then neither read a job's code nor place a link where Flint
/// writes or deletes. Plain POSIX, no CAF.

#include <filesystem>
#include <string>
#include <string_view>

#include "runtime/common/expected.hpp"

namespace flint {

/// Makes `<parent>/<prefix>XXXXXX` with mkdtemp (mode 0700) and checks it as
/// check_private_directory does. errc::internal when it cannot be made.
expected<std::filesystem::path> make_private_directory(const std::filesystem::path& parent,
                                                       std::string_view prefix);

/// The same under the system's temporary directory ($TMPDIR, else /tmp).
expected<std::filesystem::path> make_private_temp_directory(std::string_view prefix);

/// errc::invalid_argument unless `dir` is a directory, is not a symbolic link, and is owned by
/// this process's effective user. `what` names the directory in the error
/// ("blob.storage.directory").
expected<unit> check_private_directory(const std::filesystem::path& dir, std::string_view what);

/// A directory from the configuration: made (mode 0700; its parents as usual) when missing, then
/// checked as check_private_directory does. An existing directory's mode is left as the
/// administrator set it.
expected<unit> prepare_private_directory(const std::filesystem::path& dir, std::string_view what);

/// The bytes of the regular file at `path`, opened without following a symbolic link in its last
/// component. errc::not_found when it does not exist, errc::invalid_argument for a link or
/// anything else that is not a regular file, errc::internal when it cannot be read.
expected<std::string> read_file_no_follow(const std::filesystem::path& path);

/// The bytes of the open regular file `fd` from its start (`name` for messages).
expected<std::string> read_open_file(int fd, const std::filesystem::path& name);

/// A directory Flint made itself (make_private_directory): removed with its content when this
/// goes. Flint never removes a directory it was given.
class owned_directory {
public:
  owned_directory() = default;
  explicit owned_directory(std::filesystem::path path) : path_(std::move(path)) {}
  ~owned_directory();
  owned_directory(owned_directory&& other) noexcept;
  owned_directory& operator=(owned_directory&& other) noexcept;
  owned_directory(const owned_directory&) = delete;
  owned_directory& operator=(const owned_directory&) = delete;

  /// Empty when it holds none.
  const std::filesystem::path& path() const noexcept { return path_; }

private:
  void remove() noexcept;

  std::filesystem::path path_;
};

} // namespace flint
