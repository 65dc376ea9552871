#include "runtime/streaming/time/timer_queue_set.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
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

TEST_CASE("the timer queue set keeps many keys of one timestamp in one bucket, fired in key order") {
  timer_queue_set q;
  // Keys registered in a scrambled order, two key groups, some longer than eight bytes and some
  // sharing their first eight bytes.
  std::vector<timer> expected;
  for (int i = 0; i < 1000; ++i) {
    int k = (i * 7919) % 1000;
    auto key = (k % 3 == 0 ? "prefix__" : "") + std::to_string(k);
    timer t{500, k % 2, key, k % 5 == 0 ? "w" : ""};
    CHECK(q.add(timer_view{t.timestamp, t.key_group, t.key, t.ns}));
    CHECK_FALSE(q.add(timer_view{t.timestamp, t.key_group, t.key, t.ns}));
    expected.push_back(t);
  }
  CHECK(q.add(timer_view{400, 1, "early", ""}));
  CHECK(q.add(timer_view{600, 0, "late", ""}));
  CHECK(q.num_timestamps() == 3);
  expected.push_back({400, 1, "early", ""});
  expected.push_back({600, 0, "late", ""});
  std::sort(expected.begin(), expected.end());
  std::vector<timer> order;
  while (!q.empty())
    order.push_back(q.poll());
  CHECK(order == expected);
  CHECK(q.num_timestamps() == 0);
}

TEST_CASE("the timer queue set deletes inside a bucket, before and while it is polled") {
  timer_queue_set q;
  for (int k = 0; k < 100; ++k)
    q.add(timer_view{7, 0, "k" + std::to_string(100 + k), ""});
  CHECK(q.remove(timer_view{7, 0, "k100", ""}));
  CHECK(q.remove(timer_view{7, 0, "k150", ""}));
  CHECK_FALSE(q.remove(timer_view{8, 0, "k151", ""}));
  CHECK(q.poll() == timer{7, 0, "k101", ""});
  // The head bucket is sorted now: delete its next timer and one further on, add one back.
  CHECK(q.remove(timer_view{7, 0, "k102", ""}));
  CHECK(q.remove(timer_view{7, 0, "k199", ""}));
  CHECK(q.add(timer_view{7, 0, "k100", ""}));
  CHECK(q.add(timer_view{7, 0, "k150", ""}));
  CHECK(q.size() == 97);
  std::vector<std::string> keys;
  while (!q.empty())
    keys.push_back(q.poll().key);
  std::vector<std::string> expected{"k100"};
  for (int k = 103; k < 199; ++k)
    expected.push_back("k" + std::to_string(k));
  CHECK(keys == expected);
}

TEST_CASE("the timer queue set adds to the bucket it is polling, in order") {
  timer_queue_set q;
  q.add(timer_view{5, 0, "b", ""});
  q.add(timer_view{5, 0, "d", ""});
  CHECK(q.poll() == timer{5, 0, "b", ""});
  // As a firing timer registers another one that is already due.
  q.add(timer_view{5, 0, "a", ""});
  q.add(timer_view{5, 0, "c", ""});
  q.add(timer_view{3, 0, "z", ""});
  CHECK(q.poll() == timer{3, 0, "z", ""});
  CHECK(q.poll() == timer{5, 0, "a", ""});
  CHECK(q.poll() == timer{5, 0, "c", ""});
  CHECK(q.poll() == timer{5, 0, "d", ""});
  CHECK(q.empty());
}

TEST_CASE("the timer queue set behaves as an ordered set under random operations") {
  std::mt19937_64 random(42);
  timer_queue_set q;
  std::set<timer> model;
  auto random_timer = [&] {
    // Few timestamps, many keys, keys of 1 to 12 bytes sharing prefixes.
    std::int64_t ts = static_cast<std::int64_t>(random() % 6) - 2;
    auto k = random() % 300;
    std::string key = std::string(random() % 10, 'p') + std::to_string(k);
    return timer{ts, static_cast<std::int32_t>(k % 3), key, random() % 4 == 0 ? "ns" : ""};
  };
  for (int round = 0; round < 40000; ++round) {
    auto op = random() % 10;
    if (op < 5) {
      auto t = random_timer();
      bool fresh = !model.count(t);
      CHECK(q.add(timer_view{t.timestamp, t.key_group, t.key, t.ns}) == fresh);
      model.insert(t);
    } else if (op < 8) {
      auto t = random_timer();
      CHECK(q.remove(timer_view{t.timestamp, t.key_group, t.key, t.ns}) == (model.erase(t) == 1));
    } else if (!model.empty()) {
      REQUIRE(q.peek() != nullptr);
      CHECK(*q.peek() == *model.begin());
      CHECK(q.peek_timestamp() == model.begin()->timestamp);
      CHECK(q.poll() == *model.begin());
      model.erase(model.begin());
    }
    REQUIRE(q.size() == model.size());
  }
  std::set<timer> all;
  q.for_each([&](const timer& t) { all.insert(t); });
  CHECK(all == model);
  while (!model.empty()) {
    CHECK(q.poll() == *model.begin());
    model.erase(model.begin());
  }
  CHECK(q.empty());
}
