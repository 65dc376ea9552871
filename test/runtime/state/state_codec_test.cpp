#include "runtime/state/state_codec.hpp"

#include "test/runtime/state/state_test_util.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <random>

using namespace flint;
using namespace flint::state;
using flint::state::test::bytes;
using flint::state::test::op_id;

namespace {

keyed_state_handle file_handle() {
  keyed_state_handle h;
  h.first_key_group = 0;
  h.last_key_group = 2;
  h.key_group_offsets = {0, 10, 10};
  h.data.path = "/ckp/job/chk-3/op-0";
  h.data.offset = 0;
  h.data.size = 25;
  return h;
}

keyed_state_handle inline_handle() {
  keyed_state_handle h;
  h.first_key_group = 3;
  h.last_key_group = 4;
  h.key_group_offsets = {0, 2};
  h.data.inline_data = bytes("abcde");
  return h;
}

stream_state_handle file(const std::string& path, std::uint64_t size) {
  stream_state_handle h;
  h.path = path;
  h.size = size;
  return h;
}

/// A RocksDB instance's files, SSTs shared with other checkpoints.
keyed_state_handle incremental_handle(const std::string& prefix = "op-1-0") {
  keyed_state_handle h;
  h.first_key_group = 5;
  h.last_key_group = 9;
  h.incremental = true;
  h.shared_files = {{"000009.sst", file("/ckp/job/shared/" + prefix + "-000009.sst", 1000)},
                    {"000012.sst", file("/ckp/job/shared/" + prefix + "-000012.sst", 300)}};
  h.private_files = {{"MANIFEST-000005", file("/ckp/job/chk-4/" + prefix + "-MANIFEST-000005", 40)},
                     {"CURRENT", file("/ckp/job/chk-4/" + prefix + "-CURRENT", 16)}};
  return h;
}

task_state_snapshot sample_snapshot() {
  task_state_snapshot s;
  s.operators.push_back({op_id(1), {file_handle(), inline_handle()}, {bytes("split-0"), {}}});
  s.operators.push_back({op_id(2), {incremental_handle()}, {}});
  s.finished = true;
  return s;
}

checkpoint_metadata sample_metadata() {
  checkpoint_metadata m;
  m.checkpoint_id = 42;
  m.timestamp = 1700000000123;
  m.is_savepoint = true;
  operator_state a;
  a.operator_id = op_id(1);
  a.uid = "source-uid";
  a.parallelism = 2;
  a.max_parallelism = 128;
  a.subtasks = {{op_id(1), {file_handle()}, {bytes("p0")}}, {op_id(1), {inline_handle()}, {}}};
  a.finished = {true, false};
  operator_state b;
  b.operator_id = op_id(2);
  b.parallelism = 3;
  b.max_parallelism = 256;
  m.operators = {a, b};
  return m;
}

/// Every decoder on the same bytes: each must answer, never crash.
void check_all_refuse(std::span<const char> input) {
  auto s = decode_task_state_snapshot(input);
  auto r = decode_task_restore(input);
  auto m = decode_checkpoint_metadata(input);
  if (!s)
    CHECK(s.error().code == errc::invalid_argument);
  if (!r)
    CHECK(r.error().code == errc::invalid_argument);
  if (!m)
    CHECK(m.error().code == errc::invalid_argument);
}

} // namespace

TEST_CASE("a task state snapshot survives encoding with file and inline handles") {
  auto snapshot = sample_snapshot();
  auto decoded = decode_task_state_snapshot(encode_task_state_snapshot(snapshot));
  REQUIRE(decoded);
  CHECK(*decoded == snapshot);
  CHECK(decoded->operators[0].keyed[0].data.path == "/ckp/job/chk-3/op-0");
  CHECK(decoded->operators[0].keyed[1].data.is_inline());
  CHECK(decoded->operators[0].list_entries[1].empty());
  const auto& incremental = decoded->operators[1].keyed[0];
  CHECK(incremental.incremental);
  CHECK(incremental.key_group_offsets.empty());
  CHECK(incremental.shared_files[1].name == "000012.sst");
  CHECK(incremental.private_files[0].handle.path == "/ckp/job/chk-4/op-1-0-MANIFEST-000005");

  auto empty = decode_task_state_snapshot(encode_task_state_snapshot({}));
  REQUIRE(empty);
  CHECK(*empty == task_state_snapshot{});
}

TEST_CASE("a task restore survives encoding") {
  task_restore restore{7, sample_snapshot()};
  auto decoded = decode_task_restore(encode_task_restore(restore));
  REQUIRE(decoded);
  CHECK(*decoded == restore);
  auto empty = decode_task_restore(encode_task_restore({}));
  REQUIRE(empty);
  CHECK(*empty == task_restore{});
}

TEST_CASE("checkpoint metadata survives encoding, uid and finished flags included") {
  auto metadata = sample_metadata();
  auto encoded = encode_checkpoint_metadata(metadata);
  auto decoded = decode_checkpoint_metadata(encoded);
  REQUIRE(decoded);
  CHECK(*decoded == metadata);
  CHECK(decoded->operators[0].uid == "source-uid");
  CHECK_FALSE(decoded->operators[1].uid.has_value());
  CHECK(decoded->find(op_id(2)) != nullptr);
  CHECK(decoded->find(op_id(9)) == nullptr);

  auto empty = decode_checkpoint_metadata(encode_checkpoint_metadata({}));
  REQUIRE(empty);
  CHECK(*empty == checkpoint_metadata{});
}

TEST_CASE("checkpoint metadata starts with Flink's magic number and a version") {
  auto encoded = encode_checkpoint_metadata(sample_metadata());
  REQUIRE(encoded.size() > metadata_header_size);
  const unsigned char header[] = {0x49, 0x60, 0x67, 0x2d, 0, 0, 0, 1};
  CHECK(std::memcmp(encoded.data(), header, sizeof header) == 0);

  auto other_version = encoded;
  other_version[7] = 9;
  auto decoded = decode_checkpoint_metadata(other_version);
  REQUIRE_FALSE(decoded);
  CHECK(decoded.error().message
        == "malformed checkpoint metadata: unsupported metadata version 9 (this Flint reads 1)");
}

TEST_CASE("misaligned input decodes as aligned input does") {
  auto encoded = encode_task_state_snapshot(sample_snapshot());
  std::vector<char> buffer(encoded.size() + 1);
  std::memcpy(buffer.data() + 1, encoded.data(), encoded.size());
  auto decoded = decode_task_state_snapshot(std::span<const char>(buffer).subspan(1));
  REQUIRE(decoded);
  CHECK(*decoded == sample_snapshot());

  auto metadata = encode_checkpoint_metadata(sample_metadata());
  buffer.assign(metadata.size() + 3, 0);
  std::memcpy(buffer.data() + 3, metadata.data(), metadata.size());
  auto decoded_metadata = decode_checkpoint_metadata(std::span<const char>(buffer).subspan(3));
  REQUIRE(decoded_metadata);
  CHECK(*decoded_metadata == sample_metadata());
}

TEST_CASE("empty input is an error for every decoder") {
  std::span<const char> empty;
  auto s = decode_task_state_snapshot(empty);
  REQUIRE_FALSE(s);
  CHECK(s.error().code == errc::invalid_argument);
  CHECK(s.error().message == "malformed task state snapshot: empty (0 bytes)");
  auto r = decode_task_restore(empty);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "malformed task restore: empty (0 bytes)");
  auto m = decode_checkpoint_metadata(empty);
  REQUIRE_FALSE(m);
  CHECK(m.error().message == "malformed checkpoint metadata: empty (0 bytes)");
}

TEST_CASE("every truncation of a valid encoding is an error, never a crash") {
  auto snapshot = encode_task_state_snapshot(sample_snapshot());
  for (std::size_t n = 1; n < snapshot.size(); ++n) {
    auto decoded = decode_task_state_snapshot(std::span<const char>(snapshot).first(n));
    REQUIRE_FALSE(decoded);
    CHECK(decoded.error().code == errc::invalid_argument);
  }
  auto restore = encode_task_restore({3, sample_snapshot()});
  for (std::size_t n = 1; n < restore.size(); ++n)
    CHECK_FALSE(decode_task_restore(std::span<const char>(restore).first(n)));
  auto metadata = encode_checkpoint_metadata(sample_metadata());
  for (std::size_t n = 1; n < metadata.size(); ++n) {
    auto decoded = decode_checkpoint_metadata(std::span<const char>(metadata).first(n));
    REQUIRE_FALSE(decoded);
    CHECK(decoded.error().code == errc::invalid_argument);
  }
}

TEST_CASE("a truncated encoding says how many bytes there are and should be") {
  auto metadata = encode_checkpoint_metadata(sample_metadata());
  auto decoded = decode_checkpoint_metadata(std::span<const char>(metadata).first(24));
  REQUIRE_FALSE(decoded);
  CHECK(decoded.error().message
        == "malformed checkpoint metadata: truncated (24 of " + std::to_string(metadata.size())
          + " bytes)");

  auto snapshot = encode_task_state_snapshot(sample_snapshot());
  auto cut = decode_task_state_snapshot(std::span<const char>(snapshot).first(12));
  REQUIRE_FALSE(cut);
  CHECK(cut.error().message
        == "malformed task state snapshot: truncated (12 of " + std::to_string(snapshot.size())
          + " bytes)");

  auto extended = snapshot;
  extended.resize(snapshot.size() + 8);
  auto longer = decode_task_state_snapshot(extended);
  REQUIRE_FALSE(longer);
  CHECK(longer.error().message.find("8 bytes after the end") != std::string::npos);
}

TEST_CASE("a 0xFFFFFFFF segment count or length is an error") {
  std::vector<char> ff(64, static_cast<char>(0xff));
  check_all_refuse(ff);
  auto s = decode_task_state_snapshot(ff);
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("malformed task state snapshot: ") == 0);

  // One segment whose size says 0xFFFFFFFF words.
  std::vector<char> huge(16, 0);
  std::memset(huge.data() + 4, 0xff, 4);
  check_all_refuse(huge);
  CHECK_FALSE(decode_task_restore(huge));

  // The same after a valid metadata header.
  std::vector<char> header = {0x49, 0x60, 0x67, 0x2d, 0, 0, 0, 1};
  auto with_header = header;
  with_header.insert(with_header.end(), huge.begin(), huge.end());
  auto m = decode_checkpoint_metadata(with_header);
  REQUIRE_FALSE(m);
  CHECK(m.error().message.find("malformed checkpoint metadata: truncated (24 of ") == 0);
  with_header = header;
  with_header.insert(with_header.end(), ff.begin(), ff.end());
  CHECK_FALSE(decode_checkpoint_metadata(with_header));
}

TEST_CASE("random bytes are errors for every decoder") {
  std::mt19937 random(20261129);
  for (int round = 0; round < 500; ++round) {
    std::vector<char> input(random() % 200);
    for (auto& c : input)
      c = static_cast<char>(random());
    check_all_refuse(input);
    auto m = decode_checkpoint_metadata(input);
    if (input.size() >= 4) {
      REQUIRE_FALSE(m);
      CHECK(m.error().message.find("not a checkpoint metadata file") != std::string::npos);
    }
  }
}

TEST_CASE("flipped bytes in a valid encoding never crash a decoder") {
  auto snapshot = encode_task_state_snapshot(sample_snapshot());
  auto metadata = encode_checkpoint_metadata(sample_metadata());
  std::mt19937 random(7);
  for (int round = 0; round < 2000; ++round) {
    auto s = snapshot;
    auto m = metadata;
    for (int flips = 0; flips < 3; ++flips) {
      s[random() % s.size()] ^= static_cast<char>(1 + random() % 255);
      m[metadata_header_size + random() % (m.size() - metadata_header_size)] ^=
        static_cast<char>(1 + random() % 255);
    }
    auto ds = decode_task_state_snapshot(s);
    if (!ds)
      CHECK(ds.error().code == errc::invalid_argument);
    auto dm = decode_checkpoint_metadata(m);
    if (!dm)
      CHECK(dm.error().code == errc::invalid_argument);
  }
}

TEST_CASE("a keyed handle whose offsets do not fit its key groups is refused") {
  auto snapshot = sample_snapshot();
  snapshot.operators[0].keyed[0].key_group_offsets = {0, 10};
  auto decoded = decode_task_state_snapshot(encode_task_state_snapshot(snapshot));
  REQUIRE_FALSE(decoded);
  CHECK(decoded.error().message
        == "malformed task state snapshot: keyed state handle of key groups [0, 2] has 2 key "
           "group offsets");

  snapshot = sample_snapshot();
  snapshot.operators[0].keyed[1].key_group_offsets = {0, 6}; // beyond its 5 inline bytes
  CHECK_FALSE(decode_task_state_snapshot(encode_task_state_snapshot(snapshot)));

  auto metadata = sample_metadata();
  metadata.operators[1].parallelism = 0;
  auto bad = decode_checkpoint_metadata(encode_checkpoint_metadata(metadata));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("has parallelism 0") != std::string::npos);
}

TEST_CASE("state sizes add up the handles and the list entries") {
  auto snapshot = sample_snapshot();
  CHECK(snapshot.operators[0].state_size() == 25 + 5 + 7);
  CHECK(snapshot.operators[1].state_size() == 1000 + 300 + 40 + 16);
  CHECK(snapshot.state_size() == 37 + 1356);
  auto metadata = sample_metadata();
  CHECK(metadata.operators[0].state_size() == 25 + 2 + 5);
  CHECK(metadata.state_size() == 32);
  CHECK(metadata.operators[0].has_keyed_state());
  CHECK_FALSE(metadata.operators[1].has_state());
  CHECK_FALSE(metadata.operators[0].fully_finished());
  metadata.operators[0].finished = {true, true};
  CHECK(metadata.operators[0].fully_finished());
}

TEST_CASE("an incremental handle whose file names leave the instance directory is refused") {
  for (const auto& name : std::vector<std::string>{"", ".", "..", "../CURRENT", "sub/000009.sst",
                                                   std::string("a\0b", 3)}) {
    CAPTURE(name);
    auto snapshot = sample_snapshot();
    snapshot.operators[1].keyed[0].private_files[1].name = name;
    auto decoded = decode_task_state_snapshot(encode_task_state_snapshot(snapshot));
    REQUIRE_FALSE(decoded);
    CHECK(decoded.error().message.find("has a file named") != std::string::npos);
  }
  auto snapshot = sample_snapshot();
  snapshot.operators[1].keyed[0].key_group_offsets = {0, 0, 0, 0, 0};
  auto decoded = decode_task_state_snapshot(encode_task_state_snapshot(snapshot));
  REQUIRE_FALSE(decoded);
  CHECK(decoded.error().message
        == "malformed task state snapshot: incremental keyed state handle of key groups [5, 9] "
           "has key group offsets");
}

TEST_CASE("shared_state_files lists the shared files of a checkpoint's incremental handles once") {
  auto metadata = sample_metadata();
  CHECK(shared_state_files(metadata).empty());
  operator_state op;
  op.operator_id = op_id(3);
  op.parallelism = 2;
  auto reused = incremental_handle("op-3-0");
  op.subtasks = {{op_id(3), {reused, reused}, {}}, {op_id(3), {incremental_handle("op-3-1")}, {}}};
  metadata.operators.push_back(op);
  auto decoded = decode_checkpoint_metadata(encode_checkpoint_metadata(metadata));
  REQUIRE(decoded);
  CHECK(*decoded == metadata);
  CHECK(shared_state_files(*decoded)
        == std::vector<std::string>{
          "/ckp/job/shared/op-3-0-000009.sst", "/ckp/job/shared/op-3-0-000012.sst",
          "/ckp/job/shared/op-3-1-000009.sst", "/ckp/job/shared/op-3-1-000012.sst"});
}

namespace {

// Cap'n Proto words by hand: a list of zero-sized structs costs no bytes, so a message of a few
// words can claim thousands of elements (Cap'n Proto only charges them to the traversal limit).
std::uint64_t struct_pointer(std::uint32_t offset, std::uint16_t data_words,
                             std::uint16_t pointers) {
  return (std::uint64_t{offset} << 2) | (std::uint64_t{data_words} << 32)
    | (std::uint64_t{pointers} << 48);
}

/// A pointer to an inline-composite (struct) list of `words` words after its tag word.
std::uint64_t struct_list_pointer(std::uint32_t words) {
  return 1 | (std::uint64_t{7} << 32) | (std::uint64_t{words} << 35);
}

/// The tag word of a struct list: its element count and each element's size.
std::uint64_t list_tag(std::uint32_t count, std::uint16_t data_words, std::uint16_t pointers) {
  return struct_pointer(count, data_words, pointers);
}

/// One segment: its table, then the words (little-endian, as Cap'n Proto is).
std::vector<char> message_of(const std::vector<std::uint64_t>& words) {
  std::vector<char> out(8 + 8 * words.size());
  std::uint32_t table[2] = {0, static_cast<std::uint32_t>(words.size())};
  std::memcpy(out.data(), table, sizeof table);
  std::memcpy(out.data() + 8, words.data(), 8 * words.size());
  return out;
}

/// A root struct whose first pointer is a list of `count` zero-sized structs.
std::vector<char> root_list_of_empty_structs(std::uint32_t count) {
  return message_of({struct_pointer(0, 0, 1), struct_list_pointer(0), list_tag(count, 0, 0)});
}

} // namespace

TEST_CASE("a list claiming more elements than its message has bytes is refused before it is read") {
  // 32 bytes claiming 8000 operator states: within Cap'n Proto's traversal limit, so only the
  // codec's own check stands between them and 8000 decoded operators.
  auto snapshot_bytes = root_list_of_empty_structs(8000);
  REQUIRE(snapshot_bytes.size() == 32);
  auto s = decode_task_state_snapshot(snapshot_bytes);
  REQUIRE_FALSE(s);
  CHECK(s.error().code == errc::invalid_argument);
  CHECK(s.error().message
        == "malformed task state snapshot: the operator states claim 8000 entries, but the "
           "message is 32 bytes");

  auto metadata_bytes = std::vector<char>{0x49, 0x60, 0x67, 0x2d, 0, 0, 0, 1};
  metadata_bytes.insert(metadata_bytes.end(), snapshot_bytes.begin(), snapshot_bytes.end());
  auto m = decode_checkpoint_metadata(metadata_bytes, "/ckp/chk-1/_metadata");
  REQUIRE_FALSE(m);
  CHECK(m.error().message
        == "Cannot read checkpoint metadata /ckp/chk-1/_metadata: the operator states claim 8000 "
           "entries, but the message is 32 bytes");

  // A restore: its state (pointer 0) holds the list.
  auto restore_bytes = message_of({struct_pointer(0, 1, 1), 0, struct_pointer(0, 0, 1),
                                   struct_list_pointer(0), list_tag(5000, 0, 0)});
  auto r = decode_task_restore(restore_bytes);
  REQUIRE_FALSE(r);
  CHECK(r.error().message
        == "malformed task restore: the operator states claim 5000 entries, but the message is "
           "48 bytes");

  // One operator whose keyed handles (its second pointer) claim 8000.
  auto keyed_bytes =
    message_of({struct_pointer(0, 0, 1), struct_list_pointer(3), list_tag(1, 0, 3), 0,
                struct_list_pointer(0) | (std::uint64_t{1} << 2), 0, list_tag(8000, 0, 0)});
  auto k = decode_task_state_snapshot(keyed_bytes);
  REQUIRE_FALSE(k);
  CHECK(k.error().message
        == "malformed task state snapshot: the keyed state handles of operator "
           "00000000000000000000000000000000 claim 8000 entries, but the message is 64 bytes");

  // As many empty operator states as the message has bytes still decode (Flint never writes
  // zero-sized structs, but they are valid Cap'n Proto).
  auto fits = decode_task_state_snapshot(root_list_of_empty_structs(32));
  REQUIRE(fits);
  CHECK(fits->operators.size() == 32);
}
