// Private directories (runtime/common/private_directory.hpp): what Flint makes in the shared
// temporary directory is its user's alone, and what it is given is used only when it is a real
// directory of that user.

#include "runtime/common/private_directory.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using namespace flint;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A directory of another user: made and given away as root, else one root owns.
fs::path foreign_directory(const fs::path& scratch) {
  if (::geteuid() != 0)
    return "/";
  auto dir = scratch / "someone-elses";
  fs::create_directory(dir);
  REQUIRE(::chown(dir.c_str(), 65534, 65534) == 0);
  return dir;
}

} // namespace

TEST_CASE("a private temporary directory is made fresh with mode 0700 and is removed by its owner") {
  fs::path kept;
  {
    auto made = make_private_temp_directory("flint-private-test-");
    REQUIRE(made.has_value());
    owned_directory owned(*made);
    struct stat st {};
    REQUIRE(::lstat(made->c_str(), &st) == 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK((st.st_mode & 07777) == 0700);
    CHECK(st.st_uid == ::geteuid());
    CHECK(made->parent_path() == fs::temp_directory_path());
    CHECK(made->filename().string().starts_with("flint-private-test-"));
    auto other = make_private_temp_directory("flint-private-test-");
    REQUIRE(other.has_value());
    owned_directory second(*other);
    CHECK(*other != *made);
    std::ofstream(*made / "blob") << "content";
    kept = *made;
  }
  CHECK_FALSE(fs::exists(kept));
}

TEST_CASE("a configured directory that is a symbolic link or another user's is refused") {
  auto scratch_path = make_private_temp_directory("flint-private-test-");
  REQUIRE(scratch_path.has_value());
  owned_directory scratch(*scratch_path);
  auto target = scratch.path() / "target";
  fs::create_directory(target);
  auto link = scratch.path() / "link";
  fs::create_directory_symlink(target, link);

  auto linked = prepare_private_directory(link, "blob.storage.directory");
  REQUIRE_FALSE(linked.has_value());
  CHECK(linked.error().code == errc::invalid_argument);
  CHECK(contains(linked.error().message, "blob.storage.directory " + link.string()));
  CHECK(contains(linked.error().message, "is a symbolic link"));
  // A trailing separator does not make the link followed.
  CHECK_FALSE(check_private_directory(link.string() + "/", "blob.storage.directory").has_value());

  auto foreign = foreign_directory(scratch.path());
  auto refused = prepare_private_directory(foreign, "blob.storage.directory");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::invalid_argument);
  CHECK(contains(refused.error().message, "is owned by user id"));

  // A missing one is made, private; an existing one of this user is taken as it is.
  auto fresh = scratch.path() / "a" / "b";
  REQUIRE(prepare_private_directory(fresh, "blob.storage.directory").has_value());
  struct stat st {};
  REQUIRE(::lstat(fresh.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(prepare_private_directory(target, "blob.storage.directory").has_value());
}

TEST_CASE("a file is read without following a symbolic link, and a link is refused") {
  auto scratch_path = make_private_temp_directory("flint-private-test-");
  REQUIRE(scratch_path.has_value());
  owned_directory scratch(*scratch_path);
  std::ofstream(scratch.path() / "real") << "the bytes";
  fs::create_symlink(scratch.path() / "real", scratch.path() / "link");
  auto real = read_file_no_follow(scratch.path() / "real");
  REQUIRE(real.has_value());
  CHECK(*real == "the bytes");
  auto link = read_file_no_follow(scratch.path() / "link");
  REQUIRE_FALSE(link.has_value());
  CHECK(link.error().code == errc::invalid_argument);
  CHECK(contains(link.error().message, "symbolic link"));
  CHECK(read_file_no_follow(scratch.path() / "none").error().code == errc::not_found);
}

TEST_CASE("an owned directory replaced by a link is not followed when it is removed") {
  auto scratch_path = make_private_temp_directory("flint-private-test-");
  REQUIRE(scratch_path.has_value());
  owned_directory scratch(*scratch_path);
  auto victim = scratch.path() / "victim";
  fs::create_directory(victim);
  std::ofstream(victim / "keep") << "not Flint's";
  auto made = make_private_directory(scratch.path(), "owned-");
  REQUIRE(made.has_value());
  {
    owned_directory owned(*made);
    fs::remove(*made);
    fs::create_directory_symlink(victim, *made);
  }
  CHECK(fs::exists(victim / "keep"));
}
