#include "runtime/state/keyed_state_files.hpp"
#include "runtime/state/operator_snapshot.hpp"

#include "test/runtime/state/state_test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>

using namespace flint;
using namespace flint::state;
using flint::state::test::bytes;
using flint::state::test::op_id;
using flint::state::test::temp_dir;
using flint::state::test::text;

namespace {

const std::vector<std::vector<char>> groups = {bytes("zero"), {}, bytes("two-two"), {}, bytes("4")};

/// Every (key group, bytes) the restore reads in [first, last].
std::map<int, std::string> read_all(const operator_state_restore& restore, int first, int last) {
  std::map<int, std::string> out;
  auto read = restore.for_each_key_group(first, last, [&](std::int32_t g, std::span<const char> b) {
    CHECK(out.count(g) == 0);
    out[g] = text(b);
  });
  REQUIRE(read);
  return out;
}

} // namespace

TEST_CASE("key groups written to a file read back group by group, empty groups included") {
  temp_dir dir;
  auto path = dir / "chk-1/op/state"; // parent directories are made
  auto handle = write_keyed_state(path, 10, groups);
  REQUIRE(handle);
  CHECK(handle->first_key_group == 10);
  CHECK(handle->last_key_group == 14);
  CHECK(handle->key_group_offsets == std::vector<std::uint64_t>{0, 4, 4, 11, 11});
  CHECK(handle->data.path == path);
  CHECK(handle->data.offset == 0);
  CHECK(handle->data.size == 12);
  CHECK(handle->data.state_size() == 12);
  CHECK(text(test::read_whole_file(path)) == "zerotwo-two4");

  operator_state_restore restore(operator_subtask_state{op_id(1), {*handle}, {}}, false, true);
  CHECK(restore.has_keyed_state());
  auto all = read_all(restore, 0, 127);
  CHECK(
    all
    == std::map<int, std::string>{{10, "zero"}, {11, ""}, {12, "two-two"}, {13, ""}, {14, "4"}});
  CHECK(read_all(restore, 11, 12) == std::map<int, std::string>{{11, ""}, {12, "two-two"}});
  CHECK(read_all(restore, 14, 20) == std::map<int, std::string>{{14, "4"}});
  CHECK(read_all(restore, 0, 9).empty());
}

TEST_CASE("key groups without a path stay inline in the handle") {
  auto handle = write_keyed_state("", 0, groups);
  REQUIRE(handle);
  CHECK(handle->data.is_inline());
  CHECK(text(handle->data.inline_data) == "zerotwo-two4");
  CHECK(handle->key_group_offsets == std::vector<std::uint64_t>{0, 4, 4, 11, 11});
  operator_state_restore restore(operator_subtask_state{op_id(1), {*handle}, {}}, false, true);
  CHECK(read_all(restore, 2, 4) == std::map<int, std::string>{{2, "two-two"}, {3, ""}, {4, "4"}});
}

TEST_CASE("a restore reads only the key groups of its range from several handles") {
  temp_dir dir;
  auto first = write_keyed_state(dir / "a", 0, {bytes("a0"), bytes("a1"), bytes("a2")});
  auto second = write_keyed_state("", 3, {bytes("b3"), bytes("b4")});
  auto third = write_keyed_state(dir / "c", 5, {bytes("c5"), bytes("c6")});
  REQUIRE(first);
  REQUIRE(second);
  REQUIRE(third);
  operator_state_restore restore(
    operator_subtask_state{op_id(1), {*first, *second, *third}, {bytes("entry")}}, true, true);
  CHECK(restore.finished());
  CHECK(restore.list_entries() == std::vector<std::vector<char>>{bytes("entry")});
  CHECK(read_all(restore, 2, 5)
        == std::map<int, std::string>{{2, "a2"}, {3, "b3"}, {4, "b4"}, {5, "c5"}});
}

TEST_CASE("a state handle's offset into a shared file is honoured") {
  temp_dir dir;
  auto handle = write_keyed_state(dir / "f", 0, {bytes("xy"), bytes("z")});
  REQUIRE(handle);
  // The same groups stored 5 bytes into a bigger file.
  test::write_text_file(dir / "g", "12345xyz");
  auto moved = *handle;
  moved.data.path = dir / "g";
  moved.data.offset = 5;
  operator_state_restore restore(operator_subtask_state{op_id(1), {moved}, {}}, false, true);
  CHECK(read_all(restore, 0, 1) == std::map<int, std::string>{{0, "xy"}, {1, "z"}});
}

TEST_CASE("a truncated or missing state file is an error naming it") {
  temp_dir dir;
  auto path = dir / "state";
  auto handle = write_keyed_state(path, 0, groups);
  REQUIRE(handle);
  std::filesystem::resize_file(path, 6);
  operator_state_restore restore(operator_subtask_state{op_id(1), {*handle}, {}}, false, true);
  int calls = 0;
  auto read = restore.for_each_key_group(0, 4, [&](auto, auto) { ++calls; });
  REQUIRE_FALSE(read);
  CHECK(read.error().message
        == "Cannot read keyed state file " + path + ": truncated (6 of 12 bytes)");
  CHECK(calls == 0);

  std::filesystem::remove(path);
  auto missing = restore.for_each_key_group(0, 4, [&](auto, auto) { ++calls; });
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().message
        == "Cannot read keyed state file " + path + ": No such file or directory");
}

TEST_CASE("a keyed state file that cannot be written is an error naming it") {
  temp_dir dir;
  test::write_text_file(dir / "file", "not a directory");
  auto handle = write_keyed_state(dir / "file/sub/state", 0, groups);
  REQUIRE_FALSE(handle);
  CHECK(handle.error().message.find("Cannot write keyed state file " + dir / "file/sub/state")
        == 0);
  CHECK(handle.error().message.find("Not a directory") != std::string::npos);
}

TEST_CASE("no key groups make an empty handle") {
  auto handle = write_keyed_state("", 7, {});
  REQUIRE(handle);
  CHECK(handle->first_key_group == 7);
  CHECK(handle->last_key_group == 6);
  operator_state_restore restore(operator_subtask_state{op_id(1), {*handle}, {}}, false, true);
  CHECK(read_all(restore, 0, 127).empty());
  CHECK_FALSE(write_keyed_state("", -1, groups));
}

TEST_CASE("key groups written one at a time make the same file and handle") {
  temp_dir dir;
  for (std::string path : {dir / "chk-2/streamed", std::string()}) {
    CAPTURE(path);
    auto writer = keyed_state_writer::create(path, 10);
    REQUIRE(writer);
    for (const auto& group : groups)
      REQUIRE(writer->append(group));
    auto streamed = writer->finish();
    REQUIRE(streamed);
    auto whole = write_keyed_state(path.empty() ? path : dir / "chk-2/whole", 10, groups);
    REQUIRE(whole);
    if (!path.empty())
      whole->data.path = path;
    CHECK(*streamed == *whole);
    if (!path.empty())
      CHECK(text(test::read_whole_file(path)) == "zerotwo-two4");
  }
}
