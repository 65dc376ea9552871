// Windows through a snapshot and a restore at another parallelism (2 -> 3 and 3 -> 2), in the
// hashmap and the RocksDB backend: the contents of the open windows, the session windows'
// merging sets, the trigger state and the timers travel in the keyed state, so the restored
// subtasks fire every window exactly once with exactly the result of an uninterrupted run.

#include "../operator_test_harness.hpp"

#include "runtime/streaming/windowing/count_trigger.hpp"
#include "runtime/streaming/windowing/session_windows.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_operator.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace flint;
using namespace flint::streaming;
using namespace std::chrono_literals;

namespace {

/// (user, event time, value)
using event = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
/// (user, window max timestamp) -> sum
using results = std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t>;

constexpr std::int64_t bound = 100;

/// The windows under test: tumbling keeping their elements, tumbling reduced (their
/// accumulators typed on the heap between snapshots with the hashmap backend), sessions.
enum class kind { list, reduced, sessions };
constexpr std::int64_t gap = 30;

std::vector<event> events() {
  std::mt19937_64 rng(99);
  std::vector<std::pair<std::int64_t, event>> keyed;
  std::int64_t t = 10'000;
  for (int i = 0; i < 4000; ++i) {
    t += static_cast<std::int64_t>(rng() % 3);
    if (rng() % 300 == 0)
      t += 120;
    event e{static_cast<std::int64_t>(rng() % 17), t, static_cast<std::int64_t>(rng() % 50)};
    keyed.emplace_back(t - static_cast<std::int64_t>(rng() % bound), e);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<event> out;
  for (auto& [k, e] : keyed)
    out.push_back(e);
  return out;
}

results expected(bool sessions) {
  auto all = events();
  std::stable_sort(all.begin(), all.end(),
                   [](const event& a, const event& b) { return std::get<1>(a) < std::get<1>(b); });
  results out;
  if (!sessions) {
    for (const auto& [user, at, value] : all)
      out[{user, at / 100 * 100 + 99}] += value;
    return out;
  }
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> open; // user -> (last, sum)
  for (const auto& [user, at, value] : all) {
    auto it = open.find(user);
    if (it != open.end() && at - it->second.first > gap) {
      out[{user, it->second.first + gap - 1}] = it->second.second;
      open.erase(it);
    }
    auto& [last, sum] = open[user];
    last = at;
    sum += value;
  }
  for (const auto& [user, s] : open)
    out[{user, s.first + gap - 1}] = s.second;
  return out;
}

/// Keeps what the operator emits with the timestamp it carried.
struct stamped_output final : output<event> {
  const element_time* time = nullptr;
  std::vector<std::pair<event, std::int64_t>>* into = nullptr;
  void collect(event e) override {
    REQUIRE(time->has_timestamp);
    into->emplace_back(std::move(e), time->timestamp);
  }
};

event add(const event& a, const event& b) {
  return {std::get<0>(a), std::max(std::get<1>(a), std::get<1>(b)), std::get<2>(a) + std::get<2>(b)};
}

/// One subtask of the windows under test.
struct subtask {
  element_time time;
  std::unique_ptr<one_input_operator<event>> op;
};

std::unique_ptr<subtask> make_subtask(kind windows, int index, int parallelism,
                                      const std::string& backend, const std::filesystem::path& dir,
                                      std::vector<std::pair<event, std::int64_t>>& into) {
  auto s = std::make_unique<subtask>();
  operator_context ctx;
  ctx.subtask_index = index;
  ctx.parallelism = parallelism;
  ctx.key_group_max_parallelism = 128;
  ctx.key_groups = key_group_range_for_operator(128, parallelism, index);
  ctx.time = &s->time;
  ctx.state_backend.type = backend;
  ctx.state_backend.local_dir =
    (dir / ("p" + std::to_string(parallelism) + "-" + std::to_string(index))).string();
  auto out = std::make_unique<stamped_output>();
  out->time = &s->time;
  out->into = &into;
  auto key = [](const event& e) { return std::get<0>(e); };
  using reducing = reducing_contents<event, event (*)(const event&, const event&)>;
  if (windows == kind::reduced) {
    window_settings<event, time_window> settings;
    settings.assigner =
      std::make_shared<tumbling_event_time_windows>(tumbling_event_time_windows::of(100ms));
    s->op = std::make_unique<window_operator<std::int64_t, reducing, event, time_window>>(
      settings, reducing(&add),
      std::make_unique<pass_through_window_function<event, std::int64_t, time_window>>(), key,
      ctx, std::move(out));
  } else if (windows == kind::sessions) {
    window_settings<event, time_window> settings;
    settings.assigner =
      std::make_shared<event_time_session_windows>(event_time_session_windows::with_gap(30ms));
    s->op = std::make_unique<window_operator<std::int64_t, reducing, event, time_window>>(
      settings, reducing(&add),
      std::make_unique<pass_through_window_function<event, std::int64_t, time_window>>(), key,
      ctx, std::move(out));
  } else {
    window_settings<event, time_window> settings;
    settings.assigner =
      std::make_shared<tumbling_event_time_windows>(tumbling_event_time_windows::of(100ms));
    s->op = std::make_unique<window_operator<std::int64_t, list_contents<event>, event, time_window>>(
      settings, list_contents<event>(),
      std::make_unique<folding_window_function<event, event, event, std::int64_t, time_window>>(
        [](const std::vector<event>& v) {
          event acc = v.front();
          for (std::size_t i = 1; i < v.size(); ++i)
            acc = add(acc, v[i]);
          return acc;
        },
        std::make_unique<pass_through_window_function<event, std::int64_t, time_window>>()),
      key, ctx, std::move(out));
  }
  return s;
}

int owner(std::int64_t user, int parallelism) {
  return operator_index_for_key_group(128, parallelism, assign_to_key_group(key_hash(user), 128));
}

/// Feeds events [from, to) to the subtasks (each to its key's owner), with a watermark of the
/// largest timestamp so far minus the bound after every tenth event.
void feed(std::vector<std::unique_ptr<subtask>>& subtasks, const std::vector<event>& input,
          std::size_t from, std::size_t to, std::int64_t& max_seen) {
  const int p = static_cast<int>(subtasks.size());
  for (std::size_t i = from; i < to; ++i) {
    const auto& e = input[i];
    auto& s = *subtasks[static_cast<std::size_t>(owner(std::get<0>(e), p))];
    s.time.set(std::get<1>(e));
    s.op->process_element(e);
    max_seen = std::max(max_seen, std::get<1>(e));
    if (i % 10 == 9)
      for (auto& sub : subtasks)
        sub->op->process_watermark(max_seen - bound - 1);
  }
}

/// Snapshots `from_p` subtasks on `backend` halfway and restores `to_p` on `restore_backend`
/// (the same unless given).
void run_rescaled(kind windows, const std::string& backend, int from_p, int to_p,
                  std::string restore_backend = "") {
  if (restore_backend.empty())
    restore_backend = backend;
  const bool sessions = windows == kind::sessions;
  CAPTURE(static_cast<int>(windows));
  CAPTURE(backend);
  CAPTURE(restore_backend);
  CAPTURE(from_p);
  CAPTURE(to_p);
  auto dir = std::filesystem::temp_directory_path()
    / ("flint_window_restore_" + std::to_string(::getpid()) + "_" + backend);
  std::filesystem::remove_all(dir);
  auto input = events();
  std::vector<std::pair<event, std::int64_t>> emitted;
  std::int64_t max_seen = std::numeric_limits<std::int64_t>::min();
  const std::size_t half = input.size() / 2;

  std::vector<state::keyed_state_handle> handles;
  {
    std::vector<std::unique_ptr<subtask>> before;
    for (int i = 0; i < from_p; ++i) {
      before.push_back(make_subtask(windows, i, from_p, backend, dir / "a", emitted));
      before.back()->op->open();
    }
    feed(before, input, 0, half, max_seen);
    for (int i = 0; i < from_p; ++i) {
      auto snap = before[static_cast<std::size_t>(i)]->op->snapshot_state(1);
      REQUIRE(snap.keyed_upload);
      auto up = snap.keyed_upload(
        state::snapshot_target{(dir / "chk-1").string(), "", "window-" + std::to_string(i)});
      REQUIRE_MESSAGE(up.has_value(), up.error().to_string());
      handles.insert(handles.end(), up->begin(), up->end());
    }
  }
  CHECK_FALSE(emitted.empty());
  std::vector<std::unique_ptr<subtask>> after;
  for (int i = 0; i < to_p; ++i) {
    after.push_back(make_subtask(windows, i, to_p, restore_backend, dir / "b", emitted));
    after.back()->op->initialize_state(
      state::operator_state_restore(state::operator_subtask_state{{}, handles, {}}, false, true));
    after.back()->op->open();
  }
  feed(after, input, half, input.size(), max_seen);
  for (auto& s : after)
    s->op->process_watermark(max_watermark);

  results got;
  for (const auto& [e, ts] : emitted) {
    CHECK_MESSAGE(!got.count({std::get<0>(e), ts}), "fired twice: " << std::get<0>(e) << "@" << ts);
    got[{std::get<0>(e), ts}] = std::get<2>(e);
  }
  CHECK(got == expected(sessions));
  for (auto& s : after)
    CHECK(s->op->late_records_dropped() == 0);
  after.clear();
  std::filesystem::remove_all(dir);
}

} // namespace

TEST_CASE("tumbling windows keeping their elements restore at 2 -> 3 and 3 -> 2 exactly") {
  for (const std::string backend : {"hashmap", "rocksdb"}) {
    run_rescaled(kind::list, backend, 2, 3);
    run_rescaled(kind::list, backend, 3, 2);
  }
}

TEST_CASE("reduced tumbling windows restore at 2 -> 3 and 3 -> 2 exactly, also across backends") {
  for (const std::string backend : {"hashmap", "rocksdb"}) {
    run_rescaled(kind::reduced, backend, 2, 3);
    run_rescaled(kind::reduced, backend, 3, 2);
  }
  // The heap accumulators write the backend's format: either backend restores the other's.
  run_rescaled(kind::reduced, "hashmap", 2, 3, "rocksdb");
  run_rescaled(kind::reduced, "rocksdb", 3, 2, "hashmap");
}

TEST_CASE("session windows and their merging sets restore at 2 -> 3 and 3 -> 2 exactly") {
  for (const std::string backend : {"hashmap", "rocksdb"}) {
    run_rescaled(kind::sessions, backend, 2, 3);
    run_rescaled(kind::sessions, backend, 3, 2);
  }
}

TEST_CASE("processing-time windows due while the job was down fire right after the restore") {
  for (const std::string backend : {"hashmap", "rocksdb"}) {
    CAPTURE(backend);
    using harness = test::operator_test_harness<event, event>;
    using reducing = reducing_contents<event, event (*)(const event&, const event&)>;
    auto dir = std::filesystem::temp_directory_path()
      / ("flint_window_restore_pt_" + std::to_string(::getpid()) + "_" + backend);
    std::filesystem::remove_all(dir);
    window_settings<event, time_window> settings;
    settings.assigner = std::make_shared<tumbling_processing_time_windows>(
      tumbling_processing_time_windows::of(100ms));
    auto build = [&](harness& h, const std::string& name) {
      h.context().state_backend.type = backend;
      h.context().state_backend.local_dir = (dir / name).string();
      return std::make_unique<window_operator<std::int64_t, reducing, event, time_window>>(
        settings, reducing(&add),
        std::make_unique<pass_through_window_function<event, std::int64_t, time_window>>(),
        [](const event& e) { return std::get<0>(e); }, h.context(), h.make_output());
    };
    std::vector<state::keyed_state_handle> handles;
    {
      harness before;
      before.open(build(before, "a"));
      before.set_processing_time(10);
      before.process_element({1, 0, 5});
      before.process_element({2, 0, 7});
      before.process_element({1, 0, 1});
      auto snap = before.op().snapshot_state(1);
      auto up = snap.keyed_upload(state::snapshot_target{(dir / "chk-1").string(), "", "pt"});
      REQUIRE_MESSAGE(up.has_value(), up.error().to_string());
      handles = *up;
      CHECK(before.take_records().empty());
    }
    harness after;
    auto op = build(after, "b");
    op->initialize_state(
      state::operator_state_restore(state::operator_subtask_state{{}, handles, {}}, false, true));
    after.set_processing_time(500);
    after.open(std::move(op));
    after.set_processing_time(501);
    auto out = after.take_records();
    std::sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.value < y.value; });
    REQUIRE(out.size() == 2);
    CHECK(out[0].value == event{1, 0, 6});
    CHECK(out[1].value == event{2, 0, 7});
    CHECK(out[0].timestamp == std::optional<std::int64_t>(99));
    std::filesystem::remove_all(dir);
  }
}
