// The window operator through the operator test harness: each assigner, trigger and evictor,
// session merging, allowed lateness, late data, per-window and global state, and
// processing-time windows on the harness's clock.

#include "../operator_test_harness.hpp"

#include "runtime/streaming/windowing/count_evictor.hpp"
#include "runtime/streaming/windowing/count_trigger.hpp"
#include "runtime/streaming/windowing/global_windows.hpp"
#include "runtime/streaming/windowing/session_windows.hpp"
#include "runtime/streaming/windowing/sliding_windows.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_operator.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace flint;
using namespace flint::streaming;
using namespace std::chrono_literals;

namespace {

using record = std::tuple<std::string, std::int64_t>;
using harness = test::operator_test_harness<record, record>;

record sum(const record& a, const record& b) {
  return {std::get<0>(a), std::get<1>(a) + std::get<1>(b)};
}
std::string key_of(const record& r) { return std::get<0>(r); }

template <class A>
window_settings<record, typename A::window_type> settings_of(A assigner) {
  window_settings<record, typename A::window_type> s;
  s.assigner = std::make_shared<A>(std::move(assigner));
  return s;
}

/// A reducing (summing) window operator under the harness.
template <class W>
void open_sum(harness& h, window_settings<record, W> s) {
  using contents = reducing_contents<record, record (*)(const record&, const record&)>;
  h.open(std::make_unique<window_operator<std::string, contents, record, W>>(
    std::move(s), contents(&sum), std::make_unique<pass_through_window_function<record, std::string, W>>(),
    key_of, h.context(), h.make_output()));
}

using fired = std::vector<test::stamped<record>>;

test::stamped<record> at(std::string key, std::int64_t n, std::int64_t ts) {
  return {{std::move(key), n}, ts};
}

} // namespace

TEST_CASE("tumbling event-time windows sum per key and fire at the watermark with end - 1") {
  harness h;
  open_sum(h, settings_of(tumbling_event_time_windows::of(10ms)));
  h.process_element({"a", 1}, 3);
  h.process_element({"a", 2}, 9);
  h.process_element({"b", 5}, 4);
  h.process_element({"a", 4}, 12);
  h.process_watermark(8);
  CHECK(h.take_records().empty());
  h.process_watermark(9);
  auto out = h.take_records();
  std::sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.value < y.value; });
  CHECK(out == fired{at("a", 3, 9), at("b", 5, 9)});
  CHECK(h.emitted().watermarks == std::vector<std::int64_t>{8, 9});
  h.end_input();
  CHECK(h.take_records() == fired{at("a", 4, 19)});
}
