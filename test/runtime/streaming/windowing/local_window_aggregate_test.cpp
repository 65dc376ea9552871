// The two-phase window aggregate at the operator level: the slices of tumbling and sliding
// assigners (with offsets), the LocalWindowAggregate's flushes (at watermarks before forwarding
// them, at the pre-barrier hook, at the end, over its memory bound), late records forwarded at
// once, and the local operator chained to a window operator over global_window_contents giving
// exactly what the window operator alone gives — results, late firings and dropped records —
// also through a checkpoint taken at the pre-barrier flush and restored.

#include "../operator_test_harness.hpp"

#include "runtime/streaming/windowing/local_window_aggregate_operator.hpp"
#include "runtime/streaming/windowing/session_windows.hpp"
#include "runtime/streaming/windowing/sliding_windows.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_operator.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
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

/// (key, value)
using event = std::tuple<std::int64_t, std::int64_t>;
event add(const event& a, const event& b) { return {std::get<0>(a), std::get<1>(a) + std::get<1>(b)}; }
std::int64_t key_of(const event& e) { return std::get<0>(e); }

using reducing = reducing_contents<event, event (*)(const event&, const event&)>;
using partial = std::pair<std::int64_t, event>;
using local_op = local_window_aggregate_operator<std::int64_t, reducing>;
using global = global_window_contents<std::int64_t, reducing>;

/// Sum and count of the values: an aggregate with a two-field accumulator.
struct sum_count {
  std::pair<std::int64_t, std::int64_t> create_accumulator() const { return {0, 0}; }
  std::pair<std::int64_t, std::int64_t> add(const event& e,
                                            std::pair<std::int64_t, std::int64_t> acc) const {
    return {acc.first + std::get<1>(e), acc.second + 1};
  }
  std::int64_t get_result(const std::pair<std::int64_t, std::int64_t>& acc) const {
    return acc.first * 1000 + acc.second;
  }
  std::pair<std::int64_t, std::int64_t> merge(std::pair<std::int64_t, std::int64_t> a,
                                              std::pair<std::int64_t, std::int64_t> b) const {
    return {a.first + b.first, a.second + b.second};
  }
};

std::vector<time_window> windows_at(const window_assigner<time_window>& a, std::int64_t t) {
  std::vector<time_window> out;
  a.append_windows(t, 0, out);
  std::sort(out.begin(), out.end(),
            [](const time_window& x, const time_window& y) { return x.start < y.start; });
  return out;
}

/// One input step: an element (key, value at timestamp) or a watermark.
struct step {
  bool watermark = false;
  event value;
  std::int64_t time = 0;
};

/// Out-of-order input: `n` events of `keys` keys, timestamps drifting forward with jitter of up
/// to `disorder` ms, a watermark (the max timestamp so far - `lag`) after every few events — so
/// some events are late for the local operator and for the windows.
std::vector<step> input(std::uint64_t seed, int n, int keys, std::int64_t disorder,
                        std::int64_t lag) {
  std::mt19937_64 rng(seed);
  std::vector<step> out;
  std::int64_t t = -50;
  std::int64_t max = std::numeric_limits<std::int64_t>::min();
  for (int i = 0; i < n; ++i) {
    t += static_cast<std::int64_t>(rng() % 4);
    auto ts = t - static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(disorder));
    out.push_back({false, {static_cast<std::int64_t>(rng() % keys), 1 + static_cast<std::int64_t>(rng() % 9)}, ts});
    max = std::max(max, ts);
    if (rng() % 5 == 0)
      out.push_back({true, {}, max - lag});
  }
  out.push_back({true, {}, max_watermark});
  return out;
}

template <class Contents, class Out>
using window_of = window_operator<std::int64_t, Contents, Out, time_window>;

/// The window operator alone (one phase) over `steps`: its output (sorted) and late drops.
template <class Contents, class Out>
std::pair<std::vector<test::stamped<Out>>, std::int64_t> one_phase(
  const std::vector<step>& steps, window_settings<event, time_window> settings, Contents contents) {
  test::operator_test_harness<event, Out> h;
  h.open(std::make_unique<window_of<Contents, Out>>(
    settings, contents, std::make_unique<pass_through_window_function<Out, std::int64_t, time_window>>(),
    key_of, h.context(), h.make_output()));
  for (const auto& s : steps) {
    if (s.watermark)
      h.process_watermark(s.time);
    else
      h.process_element(s.value, s.time);
  }
  h.op().finish();
  auto out = h.take_records();
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.timestamp, a.value) < std::tie(b.timestamp, b.value);
  });
  return {out, h.op().late_records_dropped()};
}

/// The local operator chained (as the exchange would connect them, in order) to the window
/// operator over the partials.
template <class Local, class Out>
class two_phase_chain {
public:
  using state_type = typename Local::state_type;
  using partial_type = std::pair<std::int64_t, state_type>;
  using global_type = global_window_contents<std::int64_t, Local>;

  two_phase_chain(window_settings<event, time_window> settings, Local contents,
                  std::size_t max_entries = local_window_aggregate_operator<std::int64_t, Local>::default_max_entries,
                  std::string backend = "hashmap", std::string dir = {})
    : settings_(std::move(settings)),
      contents_(std::move(contents)),
      backend_(std::move(backend)),
      dir_(std::move(dir)) {
    auto slicing = window_slicing::of(*settings_.assigner);
    REQUIRE(slicing.has_value());
    local_ = std::make_unique<test::operator_test_harness<event, partial_type>>();
    local_->open(std::make_unique<local_window_aggregate_operator<std::int64_t, Local>>(
      *slicing, contents_, key_of, local_->context(), local_->make_output(), max_entries));
    open_global(std::nullopt);
  }

  void run(const step& s) {
    if (s.watermark)
      local_->process_watermark(s.time);
    else
      local_->process_element(s.value, s.time);
    forward();
  }
  void finish() {
    local_->op().finish();
    forward();
    global_->op().finish();
  }
  /// A checkpoint as the task takes it: the pre-barrier hook, then the snapshots; the window
  /// operator's keyed state is written under `dir`.
  std::vector<state::keyed_state_handle> checkpoint(std::int64_t id) {
    local_->op().prepare_snapshot_pre_barrier(id);
    forward();
    auto local_snapshot = local_->op().snapshot_state(id);
    CHECK_FALSE(local_snapshot.keyed_upload);
    CHECK(local_snapshot.list_entries.empty());
    // What the window operator emitted up to the barrier is committed (a sink committing with
    // checkpoints); so are its drops.
    auto more = global_->take_records();
    results_.insert(results_.end(), more.begin(), more.end());
    dropped_at_checkpoint_ = dropped_before_ + global_->op().late_records_dropped();
    auto snap = global_->op().snapshot_state(id);
    auto up = snap.keyed_upload(
      state::snapshot_target{dir_ + "/chk-" + std::to_string(id), "", "global"});
    REQUIRE_MESSAGE(up.has_value(), up.error().to_string());
    return *up;
  }
  /// A failover: fresh local and window operators, the window operator restored from `handles`;
  /// what the old ones emitted after the checkpoint is lost (never committed).
  void restore(std::vector<state::keyed_state_handle> handles) {
    auto slicing = window_slicing::of(*settings_.assigner);
    local_ = std::make_unique<test::operator_test_harness<event, partial_type>>();
    local_->open(std::make_unique<local_window_aggregate_operator<std::int64_t, Local>>(
      *slicing, contents_, key_of, local_->context(), local_->make_output()));
    watermarks_seen_ = 0;
    (void)global_->take_records();
    global_.reset();
    dropped_before_ = dropped_at_checkpoint_;
    open_global(std::move(handles));
  }
  local_window_aggregate_operator<std::int64_t, Local>& local() {
    return static_cast<local_window_aggregate_operator<std::int64_t, Local>&>(local_->op());
  }
  std::vector<test::stamped<Out>> results() {
    auto out = results_;
    auto more = global_->take_records();
    out.insert(out.end(), more.begin(), more.end());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::tie(a.timestamp, a.value) < std::tie(b.timestamp, b.value);
    });
    return out;
  }
  std::int64_t late_dropped() const { return dropped_before_ + global_->op().late_records_dropped(); }

private:
  void open_global(std::optional<std::vector<state::keyed_state_handle>> handles) {
    if (global_) {
      auto more = global_->take_records();
      results_.insert(results_.end(), more.begin(), more.end());
    }
    global_ = std::make_unique<test::operator_test_harness<partial_type, Out>>();
    global_->context().state_backend.type = backend_;
    if (!dir_.empty())
      global_->context().state_backend.local_dir = dir_ + "/backend-" + std::to_string(++opened_);
    window_settings<partial_type, time_window> s;
    s.assigner = settings_.assigner;
    s.allowed_lateness = settings_.allowed_lateness;
    auto op = std::make_unique<window_operator<std::int64_t, global_type, Out, time_window>>(
      s, global_type(contents_),
      std::make_unique<pass_through_window_function<Out, std::int64_t, time_window>>(),
      [](const partial_type& p) { return p.first; }, global_->context(), global_->make_output());
    if (handles)
      op->initialize_state(state::operator_state_restore(
        state::operator_subtask_state{{}, std::move(*handles), {}}, false, true));
    global_->open(std::move(op));
  }

  /// What the local operator emitted since the last call, in order: its records, then its
  /// watermarks (it emits a watermark's partials before the watermark).
  void forward() {
    for (auto& r : local_->take_records()) {
      REQUIRE(r.timestamp.has_value());
      global_->process_element(r.value, r.timestamp);
    }
    auto& w = local_->emitted().watermarks;
    for (; watermarks_seen_ < w.size(); ++watermarks_seen_)
      global_->process_watermark(w[watermarks_seen_]);
  }

  window_settings<event, time_window> settings_;
  Local contents_;
  std::string backend_;
  std::string dir_;
  int opened_ = 0;
  std::unique_ptr<test::operator_test_harness<event, partial_type>> local_;
  std::unique_ptr<test::operator_test_harness<partial_type, Out>> global_;
  std::size_t watermarks_seen_ = 0;
  std::vector<test::stamped<Out>> results_;
  std::int64_t dropped_before_ = 0;
  std::int64_t dropped_at_checkpoint_ = 0;
};

template <class A>
window_settings<event, time_window> settings_of(A assigner, std::int64_t lateness = 0) {
  window_settings<event, time_window> s;
  s.assigner = std::make_shared<A>(std::move(assigner));
  s.allowed_lateness = lateness;
  return s;
}

} // namespace

TEST_CASE("slices: a record's windows are exactly those of its slice's max timestamp") {
  auto check = [](const window_assigner<time_window>& a, std::int64_t expected_slice) {
    auto slicing = window_slicing::of(a);
    REQUIRE(slicing.has_value());
    CHECK(slicing->slice == expected_slice);
    for (std::int64_t t = -1000; t <= 1000; ++t) {
      auto max = slicing->slice_max_timestamp(t);
      CAPTURE(t);
      CHECK(max >= t);
      CHECK(max - t < slicing->slice);
      // The slice ends where the next one starts: max + 1 is the first timestamp of another slice.
      CHECK(slicing->slice_max_timestamp(max + 1) == max + slicing->slice);
      CHECK(windows_at(a, t) == windows_at(a, max));
    }
  };
  check(tumbling_event_time_windows::of(10ms), 10);
  check(tumbling_event_time_windows::of(10ms, 3ms), 10);
  check(tumbling_event_time_windows::of(10ms, -7ms), 10);
  check(sliding_event_time_windows::of(10ms, 4ms), 2);
  check(sliding_event_time_windows::of(10ms, 4ms, 1ms), 2);
  check(sliding_event_time_windows::of(10ms, 4ms, -3ms), 2);
  check(sliding_event_time_windows::of(15ms, 6ms, 5ms), 3);
  check(sliding_event_time_windows::of(12ms, 12ms, 5ms), 12);
  // Windows with gaps (size < slide) stay one phase: a record in a gap belongs to no window.
  CHECK_FALSE(window_slicing::of(sliding_event_time_windows::of(10ms, 20ms, 7ms)));
  CHECK_FALSE(window_slicing::of(tumbling_processing_time_windows::of(10ms)));
  CHECK_FALSE(window_slicing::of(sliding_processing_time_windows::of(10ms, 5ms)));
  CHECK_FALSE(window_slicing::of(event_time_session_windows::with_gap(10ms)));
}

TEST_CASE("the local aggregate emits a slice's partials before the watermark that passes it") {
  test::operator_test_harness<event, partial> h;
  auto slicing = window_slicing::of(tumbling_event_time_windows::of(10ms, 2ms));
  h.open(std::make_unique<local_op>(*slicing, reducing(&add), key_of, h.context(), h.make_output()));
  // Slices [2, 12), [12, 22).
  h.process_element({1, 5}, 3);
  h.process_element({1, 7}, 11);
  h.process_element({2, 1}, 13);
  h.process_element({1, 100}, 12);
  CHECK(h.take_records().empty());
  CHECK(h.op().current_output_watermark() == min_watermark);
  h.process_watermark(10);
  CHECK(h.take_records().empty());
  h.process_watermark(11);
  auto first = h.take_records();
  REQUIRE(first.size() == 1);
  CHECK(first[0].value == partial{1, {1, 12}});
  CHECK(first[0].timestamp == std::optional<std::int64_t>(11));
  CHECK(h.emitted().watermarks == std::vector<std::int64_t>{10, 11});

  // Late here (its slice [2, 12) is over): on at once, with its own slice's max timestamp.
  h.process_element({3, 4}, 5);
  auto late = h.take_records();
  REQUIRE(late.size() == 1);
  CHECK(late[0].value == partial{3, {3, 4}});
  CHECK(late[0].timestamp == std::optional<std::int64_t>(11));

  // The pre-barrier hook emits what is held, whatever the watermark.
  CHECK(static_cast<local_op&>(h.op()).buffered() == 2);
  h.op().prepare_snapshot_pre_barrier(1);
  auto flushed = h.take_records();
  std::sort(flushed.begin(), flushed.end(),
            [](const auto& a, const auto& b) { return a.value < b.value; });
  REQUIRE(flushed.size() == 2);
  CHECK(flushed[0].value == partial{1, {1, 100}});
  CHECK(flushed[1].value == partial{2, {2, 1}});
  CHECK(flushed[0].timestamp == std::optional<std::int64_t>(21));
  CHECK(static_cast<local_op&>(h.op()).buffered() == 0);
  CHECK_FALSE(h.op().snapshot_state(1).keyed_upload);

  // The end of the input emits the rest.
  h.process_element({4, 2}, 30);
  h.op().finish();
  auto rest = h.take_records();
  REQUIRE(rest.size() == 1);
  CHECK(rest[0].value == partial{4, {4, 2}});
  CHECK(rest[0].timestamp == std::optional<std::int64_t>(31));
}

TEST_CASE("an input going idle sends what the local aggregate holds, then the status") {
  // The window operator's watermark leaves an idle channel out, so it may pass slices held here.
  test::operator_test_harness<event, partial> h;
  auto slicing = window_slicing::of(tumbling_event_time_windows::of(10ms));
  h.open(std::make_unique<local_op>(*slicing, reducing(&add), key_of, h.context(), h.make_output()));
  h.process_element({1, 5}, 3);
  h.process_element({1, 7}, 4);
  CHECK(h.take_records().empty());
  h.process_watermark_status(true);
  auto flushed = h.take_records();
  REQUIRE(flushed.size() == 1);
  CHECK(flushed[0].value == partial{1, {1, 12}});
  CHECK(static_cast<local_op&>(h.op()).buffered() == 0);
  CHECK(h.emitted().statuses == std::vector<bool>{true});
  // Active again: nothing held, nothing sent, the status on.
  h.process_watermark_status(false);
  CHECK(h.take_records().empty());
  CHECK(h.emitted().statuses == std::vector<bool>{true, false});
}

TEST_CASE("the local aggregate emits everything when it holds more than its bound") {
  test::operator_test_harness<event, partial> h;
  auto slicing = window_slicing::of(tumbling_event_time_windows::of(10ms));
  h.open(std::make_unique<local_op>(*slicing, reducing(&add), key_of, h.context(), h.make_output(), 3));
  h.process_element({1, 1}, 1);
  h.process_element({2, 1}, 2);
  h.process_element({1, 1}, 3);
  h.process_element({3, 1}, 15);
  CHECK(h.take_records().empty());
  h.process_element({4, 1}, 4);
  CHECK(h.take_records().size() == 4);
  CHECK(static_cast<local_op&>(h.op()).buffered() == 0);
}

TEST_CASE("a record without a timestamp fails the local aggregate as it fails the assigner") {
  test::operator_test_harness<event, partial> h;
  auto slicing = window_slicing::of(tumbling_event_time_windows::of(10ms));
  h.open(std::make_unique<local_op>(*slicing, reducing(&add), key_of, h.context(), h.make_output()));
  CHECK_THROWS_WITH_AS(h.process_element({1, 1}), doctest::Contains("no timestamp marker"),
                       std::runtime_error);
}

TEST_CASE("two phases give what one phase gives: results, late firings and dropped records") {
  for (std::int64_t lateness : {0, 7}) {
    for (int variant = 0; variant < 4; ++variant) {
      CAPTURE(lateness);
      CAPTURE(variant);
      auto steps = input(11 + static_cast<std::uint64_t>(variant), 3000, 13, 25, 3);
      auto settings = variant == 0 ? settings_of(tumbling_event_time_windows::of(10ms), lateness)
        : variant == 1 ? settings_of(tumbling_event_time_windows::of(10ms, 4ms), lateness)
        : variant == 2 ? settings_of(sliding_event_time_windows::of(10ms, 4ms, 1ms), lateness)
                       : settings_of(sliding_event_time_windows::of(9ms, 6ms, -2ms), lateness);
      {
        auto [expected, dropped] = one_phase<reducing, event>(steps, settings, reducing(&add));
        two_phase_chain<reducing, event> chain(settings, reducing(&add));
        for (const auto& s : steps)
          chain.run(s);
        chain.finish();
        CHECK(chain.results() == expected);
        CHECK(chain.late_dropped() == dropped);
        // The input has late records, and (with lateness) late firings.
        CHECK(dropped > 0);
        CHECK(expected.size() > 13 * 30);
      }
      {
        using aggregating = aggregating_contents<event, sum_count>;
        auto [expected, dropped] =
          one_phase<aggregating, std::int64_t>(steps, settings, aggregating(sum_count{}));
        two_phase_chain<aggregating, std::int64_t> chain(settings, aggregating(sum_count{}), 5);
        for (const auto& s : steps)
          chain.run(s);
        chain.finish();
        CHECK(chain.results() == expected);
        CHECK(chain.late_dropped() == dropped);
      }
    }
  }
}

TEST_CASE("a checkpoint at the pre-barrier flush restores to the exact result") {
  for (const std::string backend : {"hashmap", "rocksdb"}) {
    CAPTURE(backend);
    auto dir = std::filesystem::temp_directory_path()
      / ("flint_local_window_agg_" + std::to_string(::getpid()) + "_" + backend);
    std::filesystem::remove_all(dir);
    auto steps = input(5, 4000, 17, 20, 2);
    auto settings = settings_of(sliding_event_time_windows::of(10ms, 4ms, 1ms), 3);
    auto [expected, dropped] = one_phase<reducing, event>(steps, settings, reducing(&add));

    two_phase_chain<reducing, event> chain(settings, reducing(&add),
                                           local_op::default_max_entries, backend, dir.string());
    const auto half = steps.size() / 2;
    for (std::size_t i = 0; i < half; ++i)
      chain.run(steps[i]);
    // The local operator holds partials at the barrier: the hook sends them into the snapshot.
    REQUIRE(chain.local().buffered() > 0);
    auto handles = chain.checkpoint(1);
    CHECK(chain.local().buffered() == 0);
    // What runs between the checkpoint and the failure is lost, then replayed from the barrier.
    for (std::size_t i = half; i < half + 500; ++i)
      chain.run(steps[i]);
    chain.restore(std::move(handles));
    for (std::size_t i = half; i < steps.size(); ++i)
      chain.run(steps[i]);
    chain.finish();
    CHECK(chain.results() == expected);
    CHECK(chain.late_dropped() == dropped);
    std::filesystem::remove_all(dir);
  }
}
