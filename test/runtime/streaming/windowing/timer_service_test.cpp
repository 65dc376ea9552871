#include "runtime/streaming/time/timer_service.hpp"

#include "runtime/state/keyed_state_backend.hpp"
#include "test/runtime/state/state_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace flint;
using namespace flint::streaming;
using flint::state::key_group_range;
using flint::state::test::temp_dir;

namespace {

struct hashmap_backend {
  static constexpr const char* type = "hashmap";
};
struct rocksdb_backend {
  static constexpr const char* type = "rocksdb";
};

/// Backends with their working directories under one temporary directory.
class backends {
public:
  std::unique_ptr<state::keyed_state_backend> make(const char* type, key_group_range range) {
    state::keyed_state_backend_options options;
    options.type = type;
    options.local_dir = dir_ / ("backend-" + std::to_string(next_++));
    auto backend = state::make_keyed_state_backend(options, range);
    REQUIRE(backend);
    return std::move(*backend);
  }

private:
  temp_dir dir_;
  int next_ = 0;
};

/// Records the timers fired, in order.
struct fired_log {
  std::vector<timer> fired;
  internal_timer_service::on_timer recorder() {
    return [this](const timer& t) { fired.push_back(t); };
  }
  std::vector<std::int64_t> times() const {
    std::vector<std::int64_t> out;
    for (const auto& t : fired)
      out.push_back(t.timestamp);
    return out;
  }
};

const key_group_range all_groups{0, 127};

/// A backend of `type` restored from a snapshot of `from` (timers reach a hashmap backend only
/// for its snapshots).
std::unique_ptr<state::keyed_state_backend> restored_copy(backends& made, const char* type,
                                                          state::keyed_state_backend& from,
                                                          key_group_range range = all_groups) {
  auto upload = from.snapshot(1);
  auto handles = upload(state::snapshot_target{"", "", "op-0-0"});
  REQUIRE_MESSAGE(handles, handles.error().to_string());
  auto copy = made.make(type, range);
  REQUIRE(copy->restore(*handles));
  return copy;
}

/// The entries of one of the service's backend states, over all key groups.
std::size_t entries_of(state::keyed_state_backend& backend, const std::string& name) {
  auto id = backend.register_state(name);
  std::size_t n = 0;
  for (int g = all_groups.first; g <= all_groups.last; ++g)
    backend.for_each(id, g, {}, [&](std::string_view, std::string_view) { ++n; });
  return n;
}
/// A namespace as a window operator's: bytes with zeros in them.
const std::string time_window_bytes("\x80\0\0\0\0\0\0\0\x80\0\0\0\0\0\0\x0a", 16);

} // namespace

TYPE_TO_STRING(hashmap_backend);
TYPE_TO_STRING(rocksdb_backend);

TEST_CASE("timer backend keys order as their timestamps, negative ones included") {
  std::vector<std::int64_t> times = {INT64_MIN, -1000, -1, 0, 1, 255, 256, 1'000'000, INT64_MAX};
  for (std::size_t i = 0; i + 1 < times.size(); ++i)
    CHECK(timer_backend_key(times[i], "zzz", "n") < timer_backend_key(times[i + 1], "a", ""));
  auto t = timer_from_backend_key(7, timer_backend_key(-42, std::string("k\0y", 3), "ns"));
  REQUIRE(t);
  CHECK(*t == timer{-42, 7, std::string("k\0y", 3), "ns"});
  CHECK_FALSE(timer_from_backend_key(7, "short"));
}

TEST_CASE_TEMPLATE("event-time timers fire in time order up to the watermark, once", B,
                   hashmap_backend, rocksdb_backend) {
  backends made;
  auto backend = made.make(B::type, all_groups);
  internal_timer_service timers(*backend, "window-timers", all_groups);
  CHECK(timers.current_watermark() == internal_timer_service::no_watermark);

  timers.register_event_time_timer(3, "b", "", 30);
  timers.register_event_time_timer(1, "a", "", 10);
  timers.register_event_time_timer(2, "c", "", -5);
  timers.register_event_time_timer(1, "a", "w2", 10);
  CHECK(timers.num_event_time_timers() == 4);
  CHECK(timers.next_event_time() == -5);

  fired_log log;
  timers.advance_watermark(9, log.recorder());
  CHECK(log.times() == std::vector<std::int64_t>{-5});
  CHECK(timers.current_watermark() == 9);

  timers.advance_watermark(10, log.recorder());
  REQUIRE(log.fired.size() == 3);
  // Equal timestamps fire by key group, key, then namespace.
  CHECK(log.fired[1] == timer{10, 1, "a", ""});
  CHECK(log.fired[2] == timer{10, 1, "a", "w2"});

  timers.advance_watermark(100, log.recorder());
  CHECK(log.times() == std::vector<std::int64_t>{-5, 10, 10, 30});
  CHECK(timers.num_event_time_timers() == 0);
  timers.advance_watermark(200, log.recorder());
  CHECK(log.fired.size() == 4);
}

TEST_CASE_TEMPLATE("one timer per key, timestamp and namespace, and deleting removes it", B,
                   hashmap_backend, rocksdb_backend) {
  backends made;
  auto backend = made.make(B::type, all_groups);
  internal_timer_service timers(*backend, "user-timers", all_groups);

  CHECK(timers.register_event_time_timer(5, "k", "", 100));
  CHECK_FALSE(timers.register_event_time_timer(5, "k", "", 100));
  CHECK(timers.register_event_time_timer(5, "k", "other", 100));
  CHECK(timers.register_event_time_timer(5, "k", "", 101));
  // The processing-time queue is another one.
  CHECK(timers.register_processing_time_timer(5, "k", "", 100));
  CHECK(timers.num_event_time_timers() == 3);
  CHECK(timers.num_processing_time_timers() == 1);

  CHECK(timers.delete_event_time_timer(5, "k", "other", 100));
  CHECK_FALSE(timers.delete_event_time_timer(5, "k", "other", 100));
  CHECK_FALSE(timers.delete_event_time_timer(5, "nobody", "", 100));

  fired_log log;
  timers.advance_watermark(1000, log.recorder());
  REQUIRE(log.fired.size() == 2);
  CHECK(log.fired[0] == timer{100, 5, "k", ""});
  CHECK(log.fired[1] == timer{101, 5, "k", ""});
  // Fired timers are gone from a snapshot too: a restore finds only the processing-time one.
  auto copy = restored_copy(made, B::type, *backend);
  internal_timer_service again(*copy, "user-timers", all_groups);
  again.restore();
  CHECK(again.num_event_time_timers() == 0);
  CHECK(again.num_processing_time_timers() == 1);
}

TEST_CASE("a timer firing registers more: the due ones fire in the same advance") {
  backends made;
  auto backend = made.make("hashmap", all_groups);
  internal_timer_service timers(*backend, "t", all_groups);
  timers.register_event_time_timer(0, "k", "", 10);

  std::vector<std::int64_t> fired;
  bool again = true;
  timers.advance_watermark(25, [&](const timer& t) {
    fired.push_back(t.timestamp);
    // A later one that is due fires now; one past the watermark waits for its own.
    timers.register_event_time_timer(t.key_group, t.key, t.ns, t.timestamp + 10);
    // The same timer again is a new one once fired.
    if (t.timestamp == 10 && std::exchange(again, false))
      timers.register_event_time_timer(t.key_group, t.key, t.ns, 10);
  });
  CHECK(fired == std::vector<std::int64_t>{10, 10, 20});
  CHECK(timers.num_event_time_timers() == 1);
  CHECK(timers.next_event_time() == 30);
}

TEST_CASE("a timer firing may delete a later due one, which then does not fire") {
  backends made;
  auto backend = made.make("hashmap", all_groups);
  internal_timer_service timers(*backend, "t", all_groups);
  timers.register_processing_time_timer(0, "k", "", 10);
  timers.register_processing_time_timer(0, "k", "", 20);
  std::vector<std::int64_t> fired;
  timers.advance_processing_time(30, [&](const timer& t) {
    fired.push_back(t.timestamp);
    timers.delete_processing_time_timer(0, "k", "", 20);
  });
  CHECK(fired == std::vector<std::int64_t>{10});
  CHECK_FALSE(timers.next_processing_time());
}

TEST_CASE("processing-time timers fire up to now and tell the next wake-up") {
  backends made;
  auto backend = made.make("hashmap", all_groups);
  internal_timer_service timers(*backend, "t", all_groups);
  CHECK_FALSE(timers.next_processing_time());
  timers.register_processing_time_timer(4, "x", "", 1'000);
  timers.register_processing_time_timer(4, "y", "", 500);
  CHECK(timers.next_processing_time() == 500);

  fired_log log;
  timers.advance_processing_time(499, log.recorder());
  CHECK(log.fired.empty());
  timers.advance_processing_time(700, log.recorder());
  CHECK(log.times() == std::vector<std::int64_t>{500});
  CHECK(timers.next_processing_time() == 1'000);
  // Processing time does not move the watermark.
  CHECK(timers.current_watermark() == internal_timer_service::no_watermark);
}

TEST_CASE("a timer of a key group outside the subtask's range is a bug") {
  backends made;
  auto backend = made.make("hashmap", {0, 63});
  internal_timer_service timers(*backend, "t", {0, 63});
  CHECK_THROWS_AS(timers.register_event_time_timer(64, "k", "", 1), std::logic_error);
}

TEST_CASE_TEMPLATE("timers restore from a snapshot at another parallelism, each half its own", B,
                   hashmap_backend, rocksdb_backend) {
  backends made;
  auto backend = made.make(B::type, all_groups);
  internal_timer_service timers(*backend, "window-timers", all_groups);
  std::vector<timer> event_timers;
  std::vector<timer> processing_timers;
  for (int i = 0; i < 300; ++i) {
    int key_group = (i * 37) % 128;
    auto key = "key-" + std::to_string(i);
    timer e{i * 10 - 1'000, key_group, key, i % 3 == 0 ? "" : "ns" + std::to_string(i % 3)};
    timer p{50'000 + i, key_group, key, ""};
    timers.register_event_time_timer(e.key_group, e.key, e.ns, e.timestamp);
    timers.register_processing_time_timer(p.key_group, p.key, p.ns, p.timestamp);
    event_timers.push_back(e);
    processing_timers.push_back(p);
  }
  // Also other state of the same backend: it must not be mistaken for timers.
  auto other = backend->register_state("window-contents");
  backend->put(other, 3, "key-3", "value");

  auto upload = backend->snapshot(1);
  auto handles = upload(state::snapshot_target{"", "", "op-0-0"});
  REQUIRE_MESSAGE(handles, handles.error().to_string());

  std::size_t restored_event = 0;
  std::size_t restored_processing = 0;
  for (auto range : {key_group_range{0, 63}, key_group_range{64, 127}}) {
    auto half = made.make(B::type, range);
    REQUIRE(half->restore(*handles));
    internal_timer_service restored(*half, "window-timers", range);
    restored.restore();

    std::vector<timer> expected_event;
    for (const auto& t : event_timers)
      if (range.contains(t.key_group))
        expected_event.push_back(t);
    std::sort(expected_event.begin(), expected_event.end());
    CHECK(restored.num_event_time_timers() == expected_event.size());
    CHECK(restored.next_event_time() == expected_event.front().timestamp);
    restored_event += restored.num_event_time_timers();
    restored_processing += restored.num_processing_time_timers();

    // Firing shows exactly this half's timers, in order.
    std::vector<timer> fired;
    restored.advance_watermark(INT64_MAX, [&](const timer& t) { fired.push_back(t); });
    CHECK(fired == expected_event);

    std::size_t due = 0;
    restored.advance_processing_time(60'000, [&](const timer& t) {
      CHECK(range.contains(t.key_group));
      ++due;
    });
    CHECK(due == static_cast<std::size_t>(std::count_if(
                   processing_timers.begin(), processing_timers.end(),
                   [&](const timer& t) { return range.contains(t.key_group); })));
  }
  CHECK(restored_event == event_timers.size());
  CHECK(restored_processing == processing_timers.size());
}

TEST_CASE("services of different names keep their timers apart in one backend") {
  backends made;
  auto backend = made.make("hashmap", all_groups);
  internal_timer_service a(*backend, "a", all_groups);
  internal_timer_service b(*backend, "b", all_groups);
  a.register_event_time_timer(1, "k", "", 5);
  b.register_event_time_timer(1, "k", "", 6);
  auto copy = restored_copy(made, "hashmap", *backend);
  internal_timer_service a2(*copy, "a", all_groups);
  a2.restore();
  CHECK(a2.num_event_time_timers() == 1);
  CHECK(a2.next_event_time() == 5);
}

TEST_CASE("timers checkpointed by the hashmap backend restore into the rocksdb backend") {
  backends made;
  auto heap = made.make("hashmap", all_groups);
  internal_timer_service timers(*heap, "window-timers", all_groups);
  timers.register_event_time_timer(9, "k", time_window_bytes, 99);
  timers.register_processing_time_timer(100, "j", "", 5);
  auto upload = heap->snapshot(1);
  auto handles = upload(state::snapshot_target{"", "", "op-0-0"});
  REQUIRE_MESSAGE(handles, handles.error().to_string());

  auto rocks = made.make("rocksdb", all_groups);
  REQUIRE(rocks->restore(*handles));
  internal_timer_service restored(*rocks, "window-timers", all_groups);
  restored.restore();
  // Processing-time timers that came due while the job was down fire at once.
  CHECK(restored.next_processing_time() == 5);
  fired_log log;
  restored.advance_processing_time(1'000, log.recorder());
  CHECK(log.fired == std::vector<timer>{{5, 100, "j", ""}});
  restored.advance_watermark(99, log.recorder());
  CHECK(log.fired.back() == timer{99, 9, "k", time_window_bytes});
}

TEST_CASE_TEMPLATE("a snapshot after a restore and firings holds exactly the timers still due", B,
                   hashmap_backend, rocksdb_backend) {
  backends made;
  auto first = made.make(B::type, all_groups);
  internal_timer_service before(*first, "t", all_groups);
  for (int i = 0; i < 50; ++i)
    before.register_event_time_timer(i % 128, "k" + std::to_string(i), "", i);
  before.register_processing_time_timer(3, "p", "", 7);
  auto backend = restored_copy(made, B::type, *first);
  internal_timer_service timers(*backend, "t", all_groups);
  timers.restore();
  REQUIRE(timers.num_event_time_timers() == 50);
  fired_log log;
  timers.advance_watermark(19, log.recorder());
  CHECK(log.fired.size() == 20);
  timers.register_event_time_timer(5, "new", "", 1'000);
  CHECK(timers.delete_event_time_timer(30 % 128, "k30", "", 30));

  // Twice: a snapshot must leave the service as it was, ready for the next one.
  for (int round = 0; round < 2; ++round) {
    auto copy = restored_copy(made, B::type, *backend);
    internal_timer_service again(*copy, "t", all_groups);
    again.restore();
    CHECK(again.num_event_time_timers() == 30);
    CHECK(again.num_processing_time_timers() == 1);
    fired_log rest;
    again.advance_watermark(INT64_MAX, rest.recorder());
    REQUIRE(rest.fired.size() == 30);
    CHECK(rest.fired.front().timestamp == 20);
    CHECK(rest.fired.back() == timer{1'000, 5, "new", ""});
  }
  CHECK(timers.num_event_time_timers() == 30);
}

TEST_CASE("with the hashmap backend timers reach the backend only for its snapshots") {
  backends made;
  auto backend = made.make("hashmap", all_groups);
  internal_timer_service timers(*backend, "t", all_groups);
  timers.register_event_time_timer(1, "k", "", 5);
  timers.register_processing_time_timer(2, "j", "", 6);
  CHECK(entries_of(*backend, "_timer_state/event_t") == 0);
  auto copy = restored_copy(made, "hashmap", *backend);
  // The snapshot has them in the backend's format, and they are out again.
  CHECK(entries_of(*copy, "_timer_state/event_t") == 1);
  CHECK(entries_of(*copy, "_timer_state/processing_t") == 1);
  CHECK(entries_of(*backend, "_timer_state/event_t") == 0);
  // A restoring service takes them into its index: the backend keeps no stale copy to fire or
  // snapshot twice.
  internal_timer_service restored(*copy, "t", all_groups);
  restored.restore();
  CHECK(restored.num_event_time_timers() == 1);
  CHECK(entries_of(*copy, "_timer_state/event_t") == 0);
  CHECK(entries_of(*copy, "_timer_state/processing_t") == 0);
  // The rocksdb backend keeps them in at all times.
  auto rocks = made.make("rocksdb", all_groups);
  internal_timer_service on_rocks(*rocks, "t", all_groups);
  on_rocks.register_event_time_timer(1, "k", "", 5);
  CHECK(entries_of(*rocks, "_timer_state/event_t") == 1);
}
