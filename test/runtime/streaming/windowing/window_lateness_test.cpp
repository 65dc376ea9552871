#include "runtime/streaming/windowing/global_window.hpp"
#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/window_lateness.hpp"

#include <doctest/doctest.h>

using namespace flint::streaming;

TEST_CASE("an event-time window is cleaned up at its end plus the allowed lateness") {
  time_window w{0, 10};
  CHECK(cleanup_time(w, 0, true) == 9);
  CHECK(cleanup_time(w, 5, true) == 14);
  CHECK(cleanup_time(w, 5, false) == 9);
  CHECK(is_cleanup_time(w, 14, 5, true));
  CHECK_FALSE(is_cleanup_time(w, 9, 5, true));
  // Never past the end of time: the global window stays.
  CHECK(cleanup_time(global_window{}, 1'000, true) == INT64_MAX);
  CHECK(cleanup_time(time_window{0, INT64_MAX - 2}, 1'000, true) == INT64_MAX);
}

TEST_CASE("windows and elements are late once the watermark passed their cleanup") {
  time_window w{0, 10};
  CHECK_FALSE(is_window_late(w, 5, true, 13));
  CHECK(is_window_late(w, 5, true, 14));
  CHECK_FALSE(is_window_late(w, 5, false, 1'000));
  CHECK_FALSE(is_element_late(9, 5, true, 13));
  CHECK(is_element_late(9, 5, true, 14));
  CHECK_FALSE(is_element_late(9, 5, false, 14));
  CHECK_FALSE(is_element_late(INT64_MAX - 1, 5, true, INT64_MAX - 1));
}
