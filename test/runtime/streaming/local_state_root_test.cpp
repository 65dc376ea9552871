// The tasks' local state root (runtime/streaming/local_state_root.hpp): a private directory of
// its own under the shared temporary directory, never a name another user could prepare.

#include "runtime/streaming/local_state_root.hpp"
#include "runtime/streaming/streaming_environment.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using namespace flint;

TEST_CASE("the tasks' local state root is a private directory made on first use and removed with "
          "its last holder") {
  std::filesystem::path made;
  {
    streaming::streaming_environment env;
    auto root = env.local_state();
    REQUIRE(root != nullptr);
    auto path = root->path();
    REQUIRE(path.has_value());
    made = *path;
    CHECK(made.parent_path() == std::filesystem::temp_directory_path());
    CHECK(made.filename().string().starts_with("flint-state-" + std::to_string(::getpid()) + "-"));
    // mkdtemp's random suffix: not the predictable flint-state-<pid> of before.
    CHECK(made.filename().string() != "flint-state-" + std::to_string(::getpid()));
    struct stat st {};
    REQUIRE(::lstat(made.c_str(), &st) == 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK((st.st_mode & 07777) == 0700);
    CHECK(st.st_uid == ::geteuid());
    auto again = root->path();
    REQUIRE(again.has_value());
    CHECK(*again == made);
    std::filesystem::create_directories(made / "job" / "op-0-0");
    std::ofstream(made / "job" / "op-0-0" / "000001.sst") << "state";
    // A task still holding the root keeps it after the environment is gone.
    root.reset();
  }
  CHECK_FALSE(std::filesystem::exists(made));
}
