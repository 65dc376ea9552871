// The slicing window operator's snapshot on the hashmap backend is written by the upload after
// the synchronous part only shared the slices (copy on write): whatever the operator does
// between the two — merging into a captured slice, opening a new one, firing and dropping one —
// the restored state is the state at the snapshot.

#include "runtime/streaming/windowing/slicing_window_operator.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_contents.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace flint;
using namespace flint::streaming;

namespace {

using partial = std::pair<std::int64_t, std::int64_t>;
using sum_fn = std::int64_t (*)(const std::int64_t&, const std::int64_t&);
using local = reducing_contents<std::int64_t, sum_fn>;
/// (key, window start, window end, sum)
using row = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

std::int64_t sum(const std::int64_t& a, const std::int64_t& b) { return a + b; }

struct labelled final : internal_window_function<std::int64_t, row, std::int64_t, time_window> {
  void process(const std::int64_t& key, const time_window& w, window_context<time_window>&,
               const std::int64_t& input, output<row>& out) override {
    out.collect({key, w.start, w.end, input});
  }
};

struct collect_rows final : output<row> {
  std::vector<row>* into = nullptr;
  void collect(row r) override { into->push_back(std::move(r)); }
};

struct subtask {
  element_time time;
  std::unique_ptr<slicing_window_operator<std::int64_t, local, row>> op;
  void add(std::int64_t key, std::int64_t value, std::int64_t timestamp) {
    time.set(timestamp);
    op->process_element({key, value});
  }
};

std::unique_ptr<subtask> make_subtask(const std::filesystem::path& dir, std::vector<row>& into) {
  auto s = std::make_unique<subtask>();
  operator_context ctx;
  ctx.key_group_max_parallelism = 128;
  ctx.key_groups = state::key_group_range_for_operator(128, 1, 0);
  ctx.time = &s->time;
  ctx.state_backend.type = "hashmap";
  ctx.state_backend.local_dir = dir.string();
  auto out = std::make_unique<collect_rows>();
  out->into = &into;
  tumbling_event_time_windows windows =
    tumbling_event_time_windows::of(std::chrono::milliseconds(100), std::chrono::milliseconds(0));
  s->op = std::make_unique<slicing_window_operator<std::int64_t, local, row>>(
    *sliced_windows::of(windows), 0, local(&sum), std::make_unique<labelled>(), ctx,
    std::move(out));
  return s;
}

} // namespace

TEST_CASE("a slicing window snapshot holds the state at its synchronous part, whatever the "
          "operator does before the upload writes it") {
  auto dir = std::filesystem::temp_directory_path()
    / ("flint_slicing_snapshot_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::vector<row> rows;
  auto before = make_subtask(dir / "a", rows);
  before->op->open();
  before->add(1, 5, 10); // window [0, 100)
  before->add(2, 3, 15);
  before->add(1, 1, 120); // window [100, 200)
  auto snap = before->op->snapshot_state(1);
  REQUIRE(snap.keyed_upload);
  // Between the synchronous part and the upload: a merge into a captured slice, a new key in
  // one, a new slice, and a slice fired and dropped.
  before->add(1, 100, 12);
  before->add(4, 9, 50);
  before->add(1, 40, 130);
  before->add(5, 7, 250);
  before->op->process_watermark(150);
  std::sort(rows.begin(), rows.end());
  CHECK(rows == std::vector<row>{{1, 0, 100, 105}, {2, 0, 100, 3}, {4, 0, 100, 9}});
  CHECK(before->op->num_slices() == std::pair<std::size_t, std::size_t>{2, 2});
  auto handles =
    snap.keyed_upload(state::snapshot_target{(dir / "chk-1").string(), "", "window-0-0"});
  REQUIRE_MESSAGE(handles, handles.error().to_string());
  // The operator goes on as if nothing happened: its copies are its own.
  before->add(1, 1000, 140);
  rows.clear();
  before->op->process_watermark(max_watermark);
  CHECK(rows == std::vector<row>{{1, 100, 200, 1041}, {5, 200, 300, 7}});
  before.reset();

  rows.clear();
  auto after = make_subtask(dir / "b", rows);
  after->op->initialize_state(state::operator_state_restore(
    state::operator_subtask_state{{}, *handles, {}}, false, true));
  after->op->open();
  CHECK(after->op->num_slices() == std::pair<std::size_t, std::size_t>{2, 3});
  after->op->process_watermark(max_watermark);
  std::sort(rows.begin(), rows.end());
  CHECK(rows == std::vector<row>{{1, 0, 100, 5}, {1, 100, 200, 1}, {2, 0, 100, 3}});
  after.reset();
  std::filesystem::remove_all(dir);
}
