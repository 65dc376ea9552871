// q8's join (apps/nexmark/q8_join.hpp) in a two-input harness, record by record: a person's row
// as soon as both sides are in its TUMBLE(10 s) window, once per (id, name, window); late
// records dropped as the window operator drops them; a window's state gone once the watermark
// passes its end - 1; and what is kept surviving a snapshot and restore.

#include "apps/nexmark/q8_join.hpp"
#include "runtime/state/keyed_state_backend.hpp"
#include "test/runtime/streaming/operator_test_harness.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

using namespace flint;
using namespace flint::nexmark;

namespace {

using q8_harness = streaming::test::two_input_test_harness<new_person, new_auction, q8_row>;

/// The operator's keyed state (timers included) at a checkpoint, inline.
std::vector<state::keyed_state_handle> snapshot(q8_harness& h, std::int64_t checkpoint_id) {
  auto s = h.op().snapshot_state(checkpoint_id);
  REQUIRE(s.keyed_upload);
  auto handles = s.keyed_upload(state::snapshot_target{});
  REQUIRE(handles.has_value());
  return *handles;
}

std::unique_ptr<streaming::two_input_operator<new_person, new_auction>> make_join(
  q8_harness& h, const std::vector<state::keyed_state_handle>* restore_from = nullptr) {
  auto op =
    std::make_unique<streaming::keyed_co_process_operator<std::int64_t, new_person, new_auction,
                                                          q8_row>>(
      std::make_unique<q8_join>(), [](const new_person& p) { return p.id; },
      [](const new_auction& a) { return a.seller; }, h.context(), h.make_output());
  if (restore_from != nullptr) {
    state::operator_subtask_state s;
    s.keyed = *restore_from;
    op->initialize_state(state::operator_state_restore(std::move(s), false, true));
  }
  return op;
}

void add_person(q8_harness& h, std::int64_t id, const std::string& name, std::int64_t t) {
  h.process_element1({id, name, t}, t);
}

void add_auction(q8_harness& h, std::int64_t seller, std::int64_t t) {
  h.process_element2({seller, t}, t);
}

std::vector<q8_row> rows(q8_harness& h) {
  std::vector<q8_row> out;
  for (auto& r : h.take_records())
    out.push_back(std::move(r.value));
  std::sort(out.begin(), out.end());
  return out;
}

/// The keyed state of an operator that has seen nothing.
std::vector<state::keyed_state_handle> empty_state() {
  q8_harness h;
  h.open(make_join(h));
  return snapshot(h, 1);
}

} // namespace

TEST_CASE("nexmark q8 join: a person's row once both sides are in its window, once per name") {
  q8_harness h;
  h.open(make_join(h));
  add_person(h, 1, "Ann", 1'000);
  CHECK(rows(h).empty());
  add_auction(h, 1, 2'000);
  CHECK(rows(h) == std::vector<q8_row>{{1, "Ann", 0}});
  // More auctions and the same person again: nothing new (GROUP BY id, name, window).
  add_auction(h, 1, 3'000);
  add_person(h, 1, "Ann", 4'000);
  CHECK(rows(h).empty());
  // Another name under the same id is another row, at once.
  add_person(h, 1, "Bob", 5'000);
  CHECK(rows(h) == std::vector<q8_row>{{1, "Bob", 0}});
  // The auction first.
  add_auction(h, 2, 12'000);
  CHECK(rows(h).empty());
  add_person(h, 2, "Cy", 15'000);
  CHECK(rows(h) == std::vector<q8_row>{{2, "Cy", 10'000}});
  // The same id in neighbouring windows, or a seller's auction under another id: no row.
  add_person(h, 3, "Di", 9'999);
  add_auction(h, 3, 10'000);
  add_auction(h, 4, 9'000);
  add_person(h, 4, "Ed", 19'000);
  add_person(h, 5, "Fay", 8'000);
  add_auction(h, 6, 8'000);
  CHECK(rows(h).empty());
  // Windows start at multiples of 10 s before the epoch too.
  add_person(h, 7, "Gil", -1);
  add_auction(h, 7, -10'000);
  CHECK(rows(h) == std::vector<q8_row>{{7, "Gil", -10'000}});
}

TEST_CASE("nexmark q8 join: late records are dropped and a window is cleared when the watermark passes its "
          "end - 1") {
  q8_harness h;
  h.open(make_join(h));
  add_person(h, 1, "Ann", 1'000);
  add_auction(h, 2, 1'000);
  // 9'998 is before the window's max timestamp 9'999: not late.
  h.process_watermark(9'998);
  add_auction(h, 1, 9'000);
  add_person(h, 2, "Bea", 500);
  CHECK(rows(h) == std::vector<q8_row>{{1, "Ann", 0}, {2, "Bea", 0}});
  add_person(h, 3, "Cat", 2'000);
  add_auction(h, 4, 2'000);
  // At 9'999 the window [0, 10 s) is over: its state is gone and what comes for it is late.
  h.process_watermark(9'999);
  CHECK(snapshot(h, 1) == empty_state());
  add_person(h, 1, "Bob", 5'000);
  add_auction(h, 1, 6'000);
  add_auction(h, 3, 9'999);
  add_person(h, 4, "Dan", 3'000);
  CHECK(rows(h).empty());
  CHECK(snapshot(h, 2) == empty_state());
  // The next window is open.
  add_person(h, 5, "Eve", 10'000);
  add_auction(h, 5, 19'999);
  CHECK(rows(h) == std::vector<q8_row>{{5, "Eve", 10'000}});
}

TEST_CASE("nexmark q8 join: the last window before INT64_MAX joins and is cleared as any other") {
  // Its end - 1 is past INT64_MAX: cut there (as the window operator cuts), not wrapped to a
  // negative time that made every record of it late.
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t start = max - max % 10'000;
  q8_harness h;
  h.open(make_join(h));
  h.process_watermark(0);
  add_person(h, 1, "Ann", max - 1);
  add_auction(h, 1, start);
  CHECK(rows(h) == std::vector<q8_row>{{1, "Ann", start}});
  h.process_watermark(max);
  CHECK(snapshot(h, 1) == empty_state());
}

TEST_CASE("nexmark q8 join: the seen names, sellers and cleanup timers survive a snapshot and restore") {
  std::vector<state::keyed_state_handle> taken;
  {
    q8_harness h;
    h.open(make_join(h));
    add_person(h, 1, "Ann", 1'000);
    add_auction(h, 2, 1'000);
    add_person(h, 3, "Cy", 2'000);
    add_auction(h, 3, 3'000);
    CHECK(rows(h) == std::vector<q8_row>{{3, "Cy", 0}});
    taken = snapshot(h, 1);
    CHECK(taken != empty_state());
  }
  q8_harness h;
  h.open(make_join(h, &taken));
  add_auction(h, 1, 4'000);
  add_person(h, 2, "Bea", 5'000);
  // Already out before the snapshot: not again.
  add_person(h, 3, "Cy", 6'000);
  CHECK(rows(h) == std::vector<q8_row>{{1, "Ann", 0}, {2, "Bea", 0}});
  // The restored timers clear the restored windows.
  h.process_watermark(9'999);
  CHECK(snapshot(h, 2) == empty_state());
}
