#include "runtime/state/checkpoint_storage.hpp"
#include "runtime/state/state_codec.hpp"

#include "test/runtime/state/state_test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <random>

using namespace flint;
using namespace flint::state;
using flint::state::test::bytes;
using flint::state::test::op_id;
using flint::state::test::temp_dir;

namespace fs = std::filesystem;

namespace {

const graph::job_id job{0x0123456789abcdefULL, 0xfedcba9876543210ULL};

checkpoint_metadata metadata_of(std::int64_t id) {
  checkpoint_metadata m;
  m.checkpoint_id = id;
  m.timestamp = 1000 + id;
  operator_state op;
  op.operator_id = op_id(1);
  op.parallelism = 1;
  op.subtasks = {{op_id(1), {}, {bytes("offset=17")}}};
  op.finished = {false};
  m.operators = {op};
  return m;
}

} // namespace

TEST_CASE("checkpoint storage makes the job's directory with shared and taskowned in it") {
  temp_dir dir;
  auto storage = checkpoint_storage::create(dir / "checkpoints/", job);
  REQUIRE(storage);
  auto job_dir = dir / "checkpoints/0123456789abcdeffedcba9876543210";
  CHECK(storage->job_directory() == job_dir);
  CHECK(fs::is_directory(job_dir));
  CHECK(fs::is_directory(job_dir + "/shared"));
  CHECK(fs::is_directory(job_dir + "/taskowned"));
  CHECK(storage->shared_directory() == job_dir + "/shared");
  CHECK(storage->task_owned_directory() == job_dir + "/taskowned");
  CHECK(storage->checkpoint_directory(3) == job_dir + "/chk-3");

  // Again on the same directory (a restarted JobMaster) is fine, and file:// is understood.
  CHECK(checkpoint_storage::create("file://" + dir / "checkpoints", job));
}

TEST_CASE("a checkpoint directory that cannot be made is an error naming it") {
  temp_dir dir;
  // Tests run as root, whom chmod does not stop: a regular file on the path does.
  test::write_text_file(dir / "file", "x");
  auto storage = checkpoint_storage::create(dir / "file/sub", job);
  REQUIRE_FALSE(storage);
  CHECK(storage.error().message.find("Cannot create checkpoint directory " + dir / "file/sub/")
        == 0);
  CHECK(storage.error().message.find("Not a directory") != std::string::npos);
}

TEST_CASE("a checkpoint's directory, metadata and discard follow Flink's layout") {
  temp_dir dir;
  auto storage = checkpoint_storage::create(dir.path(), job);
  REQUIRE(storage);
  auto chk = storage->initialize_checkpoint(5);
  REQUIRE(chk);
  CHECK(*chk == storage->job_directory() + "/chk-5");
  CHECK(fs::is_directory(*chk));
  CHECK(exclusive_state_file(*chk, "op-1-0") == *chk + "/op-1-0");

  auto written = storage->write_metadata(metadata_of(5));
  REQUIRE(written);
  CHECK(*written == *chk + "/_metadata");
  CHECK(fs::is_regular_file(*written));
  CHECK_FALSE(fs::exists(*chk + "/_metadata.inprogress"));
  CHECK(test::read_whole_file(*written) == encode_checkpoint_metadata(metadata_of(5)));

  // A completed checkpoint is not overwritten.
  auto again = storage->write_metadata(metadata_of(5));
  REQUIRE_FALSE(again);
  CHECK(again.error().message
        == "Cannot write checkpoint metadata " + *written + ": the file exists");

  REQUIRE(storage->discard_checkpoint(5));
  CHECK_FALSE(fs::exists(*chk));
  CHECK(fs::is_directory(storage->job_directory()));
  CHECK(storage->discard_checkpoint(5)); // already gone
}

TEST_CASE("checkpoint metadata loads from its file or from its directory") {
  temp_dir dir;
  auto storage = checkpoint_storage::create(dir.path(), job);
  REQUIRE(storage);
  REQUIRE(storage->initialize_checkpoint(8));
  auto written = storage->write_metadata(metadata_of(8));
  REQUIRE(written);
  auto from_file = load_checkpoint_metadata(*written);
  REQUIRE(from_file);
  CHECK(*from_file == metadata_of(8));
  auto from_dir = load_checkpoint_metadata(storage->checkpoint_directory(8));
  REQUIRE(from_dir);
  CHECK(*from_dir == metadata_of(8));
  auto from_uri = load_checkpoint_metadata("file://" + storage->checkpoint_directory(8) + "/");
  REQUIRE(from_uri);
  CHECK(*from_uri == metadata_of(8));
}

TEST_CASE("missing, truncated and random metadata files are errors naming the path") {
  temp_dir dir;
  auto storage = checkpoint_storage::create(dir.path(), job);
  REQUIRE(storage);
  auto chk = storage->initialize_checkpoint(3);
  REQUIRE(chk);
  auto file = *chk + "/_metadata";

  auto missing = load_checkpoint_metadata(*chk);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().message
        == "Cannot read checkpoint metadata " + file + ": No such file or directory");
  auto no_dir = load_checkpoint_metadata(dir / "nothing-here");
  REQUIRE_FALSE(no_dir);
  CHECK(no_dir.error().message.find(dir / "nothing-here") != std::string::npos);

  REQUIRE(storage->write_metadata(metadata_of(3)));
  auto size = fs::file_size(file);
  fs::resize_file(file, 12);
  auto truncated = load_checkpoint_metadata(*chk);
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().code == errc::invalid_argument);
  CHECK(truncated.error().message
        == "Cannot read checkpoint metadata " + file + ": truncated (12 of at least 16 bytes)");
  fs::remove(file);
  REQUIRE(storage->write_metadata(metadata_of(3)));
  fs::resize_file(file, size - 8);
  auto short_by_a_word = load_checkpoint_metadata(file);
  REQUIRE_FALSE(short_by_a_word);
  CHECK(short_by_a_word.error().message
        == "Cannot read checkpoint metadata " + file + ": truncated (" + std::to_string(size - 8)
          + " of " + std::to_string(size) + " bytes)");

  fs::remove(file);
  std::mt19937 random(1);
  std::string noise(340, '\0');
  for (auto& c : noise)
    c = static_cast<char>(random());
  noise[0] = 'P'; // not 0x49
  test::write_text_file(file, noise);
  auto garbage = load_checkpoint_metadata(file);
  REQUIRE_FALSE(garbage);
  CHECK(garbage.error().message.find("Cannot read checkpoint metadata " + file
                                     + ": not a checkpoint metadata file (magic number 0x")
        == 0);

  test::write_text_file(file, "");
  auto empty = load_checkpoint_metadata(*chk);
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message == "Cannot read checkpoint metadata " + file + ": empty (0 bytes)");

  // A valid header over a corrupt message.
  auto bytes = encode_checkpoint_metadata(metadata_of(3));
  for (std::size_t i = metadata_header_size; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>(0xff);
  test::write_text_file(file, std::string(bytes.begin(), bytes.end()));
  auto corrupt = load_checkpoint_metadata(file);
  REQUIRE_FALSE(corrupt);
  CHECK(corrupt.error().message.find("Cannot read checkpoint metadata " + file + ": ") == 0);
}

TEST_CASE("a savepoint gets a directory of its own named as Flink names it") {
  temp_dir dir;
  auto storage = checkpoint_storage::create(dir / "checkpoints", job);
  REQUIRE(storage);
  auto first = storage->initialize_savepoint(dir / "savepoints");
  auto second = storage->initialize_savepoint(dir / "savepoints");
  REQUIRE(first);
  REQUIRE(second);
  CHECK(*first != *second);
  auto name = fs::path(*first).filename().string();
  REQUIRE(name.size() == std::string("savepoint-012345-").size() + 12);
  CHECK(name.starts_with("savepoint-012345-"));
  CHECK(name.find_first_not_of("0123456789abcdef", 17) == std::string::npos);
  CHECK(fs::path(*first).parent_path() == dir / "savepoints");
  CHECK(fs::is_directory(*first));

  auto metadata = metadata_of(11);
  metadata.is_savepoint = true;
  auto written = storage->write_metadata_to(*first, metadata);
  REQUIRE(written);
  CHECK(*written == *first + "/_metadata");
  auto loaded = load_checkpoint_metadata(*first);
  REQUIRE(loaded);
  CHECK(*loaded == metadata);

  test::write_text_file(dir / "file", "x");
  auto refused = storage->initialize_savepoint(dir / "file/savepoints");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find(dir / "file/savepoints") != std::string::npos);
}
