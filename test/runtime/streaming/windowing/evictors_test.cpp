#include "runtime/streaming/windowing/count_evictor.hpp"
#include "runtime/streaming/windowing/time_evictor.hpp"

#include "test/runtime/streaming/windowing/fake_trigger_context.hpp"

#include <doctest/doctest.h>

#include <chrono>

using namespace flint::streaming;
using namespace std::chrono_literals;
using flint::streaming::test::fake_trigger_context;
using values = std::vector<timestamped_value<int>>;

namespace {

values timestamped(std::initializer_list<std::pair<int, std::int64_t>> items) {
  values out;
  for (auto [v, ts] : items)
    out.emplace_back(v, ts);
  return out;
}

} // namespace

TEST_CASE("count evictor keeps the last n elements, before the window function by default") {
  fake_trigger_context ctx;
  time_window w{0, 100};
  auto before = count_evictor<int>::of(2);
  auto elements = timestamped({{1, 5}, {2, 1}, {3, 9}, {4, 2}});
  before->evict_after(elements, w, ctx);
  CHECK(elements.size() == 4);
  before->evict_before(elements, w, ctx);
  CHECK(elements == timestamped({{3, 9}, {4, 2}}));
  before->evict_before(elements, w, ctx);
  CHECK(elements.size() == 2);

  auto after = count_evictor<int>::of(1, true);
  after->evict_before(elements, w, ctx);
  CHECK(elements.size() == 2);
  after->evict_after(elements, w, ctx);
  CHECK(elements == timestamped({{4, 2}}));
  CHECK(after->to_string() == "CountEvictor(1)");

  values none;
  before->evict_before(none, w, ctx);
  CHECK(none.empty());
}

TEST_CASE("time evictor keeps what lies within the size before the newest timestamp") {
  fake_trigger_context ctx;
  time_window w{0, 100'000};
  auto before = time_evictor<int>::of(10ms);
  auto elements = timestamped({{1, 15}, {2, 30}, {3, 20}, {4, 21}, {5, 29}, {6, 5}});
  before->evict_after(elements, w, ctx);
  CHECK(elements.size() == 6);
  // Newest 30: 20 and earlier go (Flink's cutoff is inclusive).
  before->evict_before(elements, w, ctx);
  CHECK(elements == timestamped({{2, 30}, {4, 21}, {5, 29}}));

  auto after = time_evictor<int>::of(1ms, true);
  after->evict_after(elements, w, ctx);
  CHECK(elements == timestamped({{2, 30}}));
  CHECK(after->to_string() == "TimeEvictor(1)");
}

TEST_CASE("time evictor leaves elements without timestamps alone") {
  fake_trigger_context ctx;
  values elements;
  elements.emplace_back(1);
  elements.emplace_back(2);
  time_evictor<int>::of(1ms)->evict_before(elements, time_window{0, 10}, ctx);
  CHECK(elements.size() == 2);
}
