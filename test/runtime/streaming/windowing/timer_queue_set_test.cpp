#include "runtime/streaming/time/timer_queue_set.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace flint::streaming;

TEST_CASE("the timer queue set hands out timers earliest first, each once") {
  timer_queue_set q;
  CHECK(q.peek() == nullptr);
  CHECK(q.add(timer_view{20, 1, "b", ""}));
  CHECK(q.add(timer_view{10, 2, "a", "x"}));
  CHECK(q.add(timer_view{10, 2, "a", ""}));
  CHECK(q.add(timer_view{10, 1, "z", ""}));
  CHECK_FALSE(q.add(timer_view{10, 2, "a", "x"}));
  CHECK_FALSE(q.add(timer{20, 1, "b", ""}));
  CHECK(q.size() == 4);
  REQUIRE(q.peek() != nullptr);
  CHECK(*q.peek() == timer{10, 1, "z", ""});

  std::vector<timer> order;
  while (!q.empty())
    order.push_back(q.poll());
  CHECK(order == std::vector<timer>{{10, 1, "z", ""}, {10, 2, "a", ""}, {10, 2, "a", "x"},
                                    {20, 1, "b", ""}});
}

TEST_CASE("the timer queue set removes any timer, and a removed one can come back") {
  timer_queue_set q;
  for (std::int64_t t = 0; t < 100; ++t)
    q.add(timer_view{t % 10, 0, "k" + std::to_string(t), ""});
  CHECK(q.remove(timer_view{0, 0, "k0", ""}));
  CHECK_FALSE(q.remove(timer_view{0, 0, "k0", ""}));
  CHECK_FALSE(q.remove(timer_view{1, 0, "k0", ""}));
  CHECK(q.size() == 99);
  CHECK(*q.peek() == timer{0, 0, "k10", ""});
  CHECK(q.add(timer_view{0, 0, "k0", ""}));
  CHECK(*q.peek() == timer{0, 0, "k0", ""});
  q.clear();
  CHECK(q.empty());
  CHECK(q.peek() == nullptr);
}
