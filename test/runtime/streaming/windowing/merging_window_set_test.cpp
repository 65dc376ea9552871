#include "runtime/streaming/windowing/merging_window_set.hpp"
#include "runtime/streaming/windowing/session_windows.hpp"
#include "runtime/streaming/windowing/time_window.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <vector>

using namespace flint;
using namespace flint::streaming;
using namespace std::chrono_literals;
using windows = std::vector<time_window>;

namespace {

/// One call of the merge function.
struct merge_call {
  time_window merge_result;
  windows merged_windows;
  time_window state_window_result;
  windows merged_state_windows;
  friend bool operator==(const merge_call&, const merge_call&) = default;
};

struct recorder {
  std::vector<merge_call> calls;
  merging_window_set<time_window>::merge_function function() {
    return [this](const time_window& result, const windows& merged, const time_window& state,
                  const windows& merged_state) {
      calls.push_back({result, merged, state, merged_state});
    };
  }
};

const auto sessions = event_time_session_windows::with_gap(3ms);

} // namespace

TEST_CASE("windows apart stay apart, each its own state window") {
  merging_window_set<time_window> set(sessions);
  recorder merges;
  CHECK(set.add_window({0, 3}, merges.function()) == time_window{0, 3});
  CHECK(set.add_window({10, 13}, merges.function()) == time_window{10, 13});
  CHECK(merges.calls.empty());
  CHECK(set.get_state_window({0, 3}) == time_window{0, 3});
  CHECK(set.get_state_window({10, 13}) == time_window{10, 13});
  CHECK_FALSE(set.get_state_window({0, 13}));
}

TEST_CASE("a new window overlapping one in flight merges, the old state window stays") {
  merging_window_set<time_window> set(sessions);
  recorder merges;
  set.add_window({0, 3}, merges.function());
  CHECK(set.add_window({2, 5}, merges.function()) == time_window{0, 5});
  // The new window had no state: it is not among the merged windows.
  REQUIRE(merges.calls.size() == 1);
  CHECK(merges.calls[0] == merge_call{{0, 5}, {{0, 3}}, {0, 3}, {}});
  CHECK(set.mapping() == std::map<time_window, time_window>{{{0, 5}, {0, 3}}});
}

TEST_CASE("a record that bridges two sessions merges them into one") {
  merging_window_set<time_window> set(sessions);
  recorder merges;
  set.add_window({0, 3}, merges.function());
  set.add_window({10, 13}, merges.function());
  CHECK(set.add_window({2, 11}, merges.function()) == time_window{0, 13});
  REQUIRE(merges.calls.size() == 1);
  CHECK(merges.calls[0] == merge_call{{0, 13}, {{0, 3}, {10, 13}}, {0, 3}, {{10, 13}}});
  CHECK(set.mapping() == std::map<time_window, time_window>{{{0, 13}, {0, 3}}});
}

TEST_CASE("a new window inside one in flight joins it without a merge") {
  merging_window_set<time_window> set(sessions);
  recorder merges;
  set.add_window({0, 10}, merges.function());
  CHECK(set.add_window({2, 5}, merges.function()) == time_window{0, 10});
  CHECK(set.add_window({0, 10}, merges.function()) == time_window{0, 10});
  CHECK(merges.calls.empty());
  CHECK(set.mapping() == std::map<time_window, time_window>{{{0, 10}, {0, 10}}});
}

TEST_CASE("a new window equal to a merged one keeps the merged one's state window") {
  merging_window_set<time_window> set(sessions);
  recorder merges;
  set.add_window({0, 10}, merges.function());
  set.add_window({5, 15}, merges.function());
  CHECK(set.add_window({0, 15}, merges.function()) == time_window{0, 15});
  CHECK(set.get_state_window({0, 15}) == time_window{0, 10});
}

TEST_CASE("a growing session keeps its first state window through many merges") {
  merging_window_set<time_window> set(sessions);
  recorder merges;
  for (std::int64_t t = 0; t < 20; t += 2)
    set.add_window({t, t + 3}, merges.function());
  CHECK(set.mapping() == std::map<time_window, time_window>{{{0, 21}, {0, 3}}});
  CHECK(merges.calls.size() == 9);
  CHECK(merges.calls.back() == merge_call{{0, 21}, {{0, 19}}, {0, 3}, {}});
}

TEST_CASE("retiring a window removes it, retiring one not in flight is a bug") {
  merging_window_set<time_window> set(sessions);
  recorder merges;
  set.add_window({0, 3}, merges.function());
  set.retire_window({0, 3});
  CHECK(set.empty());
  CHECK_THROWS_AS(set.retire_window({0, 3}), std::logic_error);
}

TEST_CASE("the mapping persists as bytes when it changed and restores") {
  merging_window_set<time_window> set(sessions);
  recorder merges;
  set.add_window({-10, -7}, merges.function());
  set.add_window({-8, -5}, merges.function());
  set.add_window({100, 103}, merges.function());
  auto bytes = set.persist();
  REQUIRE(bytes);
  CHECK(bytes->size() == 2 * 2 * time_window::serialized_size);
  CHECK_FALSE(set.persist());

  auto restored = merging_window_set<time_window>::restore(sessions, *bytes);
  REQUIRE(restored);
  CHECK(restored->mapping() == set.mapping());
  CHECK_FALSE(restored->persist());
  // The restored set goes on merging with the state windows it had.
  CHECK(restored->add_window({102, 110}, merges.function()) == time_window{100, 110});
  CHECK(restored->get_state_window({100, 110}) == time_window{100, 103});
  auto changed = restored->persist();
  REQUIRE(changed);
  CHECK(*changed != *bytes);

  restored->retire_window({-10, -5});
  restored->retire_window({100, 110});
  CHECK(restored->persist() == std::string());
  auto empty = merging_window_set<time_window>::restore(sessions, "");
  REQUIRE(empty);
  CHECK(empty->empty());
}

TEST_CASE("bytes that are no mapping do not restore") {
  auto restored = merging_window_set<time_window>::restore(sessions, "seventeen bytes!!");
  REQUIRE_FALSE(restored);
  CHECK(restored.error().code == errc::malformed_message);
}
