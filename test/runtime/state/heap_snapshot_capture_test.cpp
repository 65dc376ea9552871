// The hashmap backend's asynchronous snapshot participants: what capture_snapshot returns is
// written by the upload, after the owner changed its state, beside the backend's own entries
// and a synchronous participant's, inline and into a file; either backend restores it.

#include "runtime/state/backend_entry_format.hpp"
#include "runtime/state/keyed_state_backend.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace flint;
using namespace flint::state;

namespace {

/// Keeps one value per key group outside the backend; a capture copies them (the owner then
/// changes its own at will).
struct captured_values final : participant_snapshot {
  std::vector<std::string> values;
  std::int32_t first = 0;
  std::vector<std::int32_t>* written = nullptr;
  void write_key_group(std::int32_t key_group, key_group_entries_writer& writer) override {
    written->push_back(key_group);
    const auto& v = values[static_cast<std::size_t>(key_group - first)];
    if (v.empty())
      return;
    writer.begin_state("outside");
    writer.add("k", v);
  }
};

struct async_owner final : snapshot_participant {
  std::vector<std::string> values;
  std::int32_t first = 0;
  int captures = 0;
  int synchronous_calls = 0;
  std::vector<std::int32_t> written;
  std::unique_ptr<participant_snapshot> capture_snapshot() override {
    ++captures;
    auto c = std::make_unique<captured_values>();
    c->values = values;
    c->first = first;
    c->written = &written;
    return c;
  }
  void begin_snapshot() override { ++synchronous_calls; }
  void write_key_group(std::int32_t, key_group_entries_writer&) override { ++synchronous_calls; }
  void end_snapshot() override { ++synchronous_calls; }
};

struct sync_owner final : snapshot_participant {
  std::string value;
  void begin_snapshot() override {}
  void write_key_group(std::int32_t key_group, key_group_entries_writer& writer) override {
    if (key_group != 2)
      return;
    writer.begin_state("sync");
    writer.add("k", value);
  }
  void end_snapshot() override {}
};

std::unique_ptr<keyed_state_backend> make(const std::string& type, key_group_range range,
                                          const std::filesystem::path& dir) {
  keyed_state_backend_options options;
  options.type = type;
  options.local_dir = (dir / (type + std::to_string(range.first))).string();
  auto made = make_keyed_state_backend(options, range);
  REQUIRE(made);
  return std::move(*made);
}

} // namespace

TEST_CASE("a participant's captured state is written by the upload as of the snapshot, after the "
          "owner changed it") {
  auto dir = std::filesystem::temp_directory_path()
    / ("flint_heap_capture_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  for (bool to_file : {false, true}) {
    CAPTURE(to_file);
    auto backend = make("hashmap", {0, 3}, dir);
    auto id = backend->register_state("inside");
    backend->put(id, 1, "k", "inside-1");
    async_owner owner;
    owner.values = {"a0", "", "a2", "a3"};
    sync_owner other;
    other.value = "s-before";
    REQUIRE(backend->add_snapshot_participant(&owner));
    REQUIRE(backend->add_snapshot_participant(&other));
    auto upload = backend->snapshot(1);
    CHECK(owner.captures == 1);
    CHECK(owner.synchronous_calls == 0);
    CHECK(owner.written.empty()); // nothing written in the synchronous part
    // The owner and the backend go on before the upload runs.
    owner.values = {"b0", "b1", "b2", ""};
    other.value = "s-after";
    backend->put(id, 1, "k", "inside-changed");
    backend->put(id, 3, "k", "inside-new");
    auto handles = upload(to_file ? snapshot_target{(dir / "chk-1").string(), "", "op-0-0"}
                                  : snapshot_target{});
    REQUIRE_MESSAGE(handles, handles.error().to_string());
    CHECK(owner.written == std::vector<std::int32_t>{0, 1, 2, 3});
    REQUIRE(handles->size() == 1);
    CHECK(handles->front().data.is_inline() == !to_file);
    for (const std::string type : {"hashmap", "rocksdb"}) {
      CAPTURE(type);
      // Restored at another parallelism: groups [2, 3] only.
      auto restored = make(type, {2, 3}, dir / "restored");
      REQUIRE(restored->restore(*handles));
      std::string value;
      auto outside = restored->register_state("outside");
      auto inside = restored->register_state("inside");
      auto sync = restored->register_state("sync");
      REQUIRE(restored->get(outside, 2, "k", value));
      CHECK(value == "a2");
      REQUIRE(restored->get(outside, 3, "k", value));
      CHECK(value == "a3");
      CHECK_FALSE(restored->get(inside, 3, "k", value));
      REQUIRE(restored->get(sync, 2, "k", value));
      CHECK(value == "s-before");
      auto all = make(type, {0, 3}, dir / "all");
      REQUIRE(all->restore(*handles));
      outside = all->register_state("outside");
      inside = all->register_state("inside");
      REQUIRE(all->get(outside, 0, "k", value));
      CHECK(value == "a0");
      CHECK_FALSE(all->get(outside, 1, "k", value));
      REQUIRE(all->get(inside, 1, "k", value));
      CHECK(value == "inside-1");
    }
    backend->remove_snapshot_participant(&owner);
    backend->remove_snapshot_participant(&other);
  }
  std::filesystem::remove_all(dir);
}
