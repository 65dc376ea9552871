#include "runtime/streaming/windowing/global_window.hpp"
#include "runtime/streaming/windowing/time_window.hpp"

#include <doctest/doctest.h>

#include <utility>
#include <vector>

using namespace flint::streaming;

TEST_CASE("a time window ends before its end and touches its neighbours") {
  time_window w{0, 5};
  CHECK(w.max_timestamp() == 4);
  CHECK(w.intersects({5, 10}));
  CHECK(w.intersects({-3, 0}));
  CHECK(w.intersects({2, 3}));
  CHECK_FALSE(w.intersects({6, 10}));
  CHECK(w.cover({3, 9}) == time_window{0, 9});
  CHECK(time_window{-4, 2}.cover(w) == time_window{-4, 5});
  CHECK(time_window{0, 5} < time_window{0, 6});
  CHECK(time_window{-1, 9} < time_window{0, 1});
}

TEST_CASE("window starts with an offset floor, before the epoch too") {
  auto start = &time_window::get_window_start_with_offset;
  CHECK(start(7, 0, 5) == 5);
  CHECK(start(5, 0, 5) == 5);
  CHECK(start(4, 0, 5) == 0);
  CHECK(start(-1, 0, 5) == -5);
  CHECK(start(-5, 0, 5) == -5);
  CHECK(start(-6, 0, 5) == -10);
  CHECK(start(7, 2, 5) == 7);
  CHECK(start(6, 2, 5) == 2);
  CHECK(start(1, 2, 5) == -3);
  CHECK(start(0, -1, 5) == -1);
  CHECK(start(-1, -1, 5) == -1);
  CHECK(start(-2, -1, 5) == -6);
}

TEST_CASE("a window's bytes round-trip and order as the windows") {
  std::vector<time_window> windows = {{INT64_MIN, -5}, {-10, 0}, {-10, 3}, {0, 5}, {7, INT64_MAX}};
  for (std::size_t i = 0; i < windows.size(); ++i) {
    auto bytes = windows[i].to_bytes();
    CHECK(bytes.size() == time_window::serialized_size);
    CHECK(time_window::from_bytes(bytes) == windows[i]);
    if (i + 1 < windows.size())
      CHECK(bytes < windows[i + 1].to_bytes());
  }
  CHECK_FALSE(time_window::from_bytes("too short"));
  CHECK(global_window::from_bytes(global_window{}.to_bytes()) == global_window{});
  CHECK(global_window{}.max_timestamp() == INT64_MAX);
}

TEST_CASE("merge_windows merges overlapping and touching windows, each group once") {
  std::vector<std::pair<std::vector<time_window>, time_window>> merges;
  merge_windows({{20, 25}, {3, 8}, {12, 14}, {0, 5}, {30, 31}, {10, 12}, {21, 22}, {0, 5}},
                [&](const std::vector<time_window>& to_merge, const time_window& result) {
                  merges.emplace_back(to_merge, result);
                });
  REQUIRE(merges.size() == 3);
  CHECK(merges[0].first == std::vector<time_window>{{0, 5}, {3, 8}});
  CHECK(merges[0].second == time_window{0, 8});
  CHECK(merges[1].first == std::vector<time_window>{{10, 12}, {12, 14}});
  CHECK(merges[1].second == time_window{10, 14});
  CHECK(merges[2].first == std::vector<time_window>{{20, 25}, {21, 22}});
  CHECK(merges[2].second == time_window{20, 25});
}

TEST_CASE("a window that bridges two merges them all into one") {
  std::vector<time_window> result;
  merge_windows({{0, 10}, {20, 30}, {8, 22}},
                [&](const std::vector<time_window>& to_merge, const time_window& merged) {
                  CHECK(to_merge.size() == 3);
                  result.push_back(merged);
                });
  CHECK(result == std::vector<time_window>{{0, 30}});
}
