// A user record as the key and the values of keyed state, through a checkpoint: snapshotted by
// two subtasks, restored by three (the key groups dealt out anew), in both state backends.

#include "runtime/streaming/keyed_process_operator.hpp"
#include "runtime/streaming/record_type.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

using namespace flint;
using namespace flint::streaming;

namespace {

enum class kind : std::int8_t { view, click, buy };

struct visitor {
  std::string site;
  std::int32_t id = 0;
  bool operator==(const visitor&) const = default;
};
FLINT_RECORD(visitor, site, id);

struct event {
  visitor who;
  kind what = kind::view;
  std::int64_t at = 0;
};
FLINT_RECORD(event, who, what, at);

struct visit_stats {
  std::map<kind, std::int32_t> counts;
  std::optional<std::int64_t> first_buy;
  std::vector<std::int64_t> times;
  bool operator==(const visit_stats&) const = default;
};
FLINT_RECORD(visit_stats, counts, first_buy, times);

/// The stats in a value state, each event in a list state, the last time per kind in a map state;
/// emits the stats with the list's and map's view of them folded in.
struct stats_function : keyed_process_function<visitor, event, visit_stats> {
  std::optional<value_state<visit_stats>> stats;
  std::optional<list_state<event>> events;
  std::optional<map_state<kind, std::int64_t>> last_at;

  void open(keyed_context<visitor>& ctx) override {
    stats.emplace(ctx.get_state<visit_stats>("stats"));
    events.emplace(ctx.get_list_state<event>("events"));
    last_at.emplace(ctx.get_map_state<kind, std::int64_t>("last_at"));
  }
  void process_element(const event& e, keyed_context<visitor>& ctx,
                       output<visit_stats>& out) override {
    if (!(e.who == ctx.current_key()))
      throw std::logic_error("an event under another visitor's key");
    auto s = stats->value().value_or(visit_stats{});
    ++s.counts[e.what];
    if (e.what == kind::buy && !s.first_buy)
      s.first_buy = e.at;
    s.times.push_back(e.at);
    stats->update(s);
    events->add(e);
    last_at->put(e.what, e.at);
    // What the other two states hold must agree with the value state.
    auto all = events->get();
    if (all.size() != s.times.size() || last_at->get(e.what) != e.at)
      throw std::logic_error("the states disagree");
    out.collect(s);
  }
};

template <class T>
struct vector_output : output<T> {
  std::vector<T> values;
  void collect(T value) override { values.push_back(std::move(value)); }
};

operator_context context(int subtask, int parallelism) {
  operator_context ctx;
  ctx.subtask_index = subtask;
  ctx.parallelism = parallelism;
  ctx.key_group_max_parallelism = 128;
  ctx.key_groups = key_group_range_for_operator(128, parallelism, subtask);
  return ctx;
}

event event_of(std::int64_t i) {
  return event{visitor{"site" + std::to_string(i % 3), static_cast<std::int32_t>(i % 5)},
               static_cast<kind>(i % 3), i};
}

} // namespace

TEST_CASE("a record key and record values in keyed state survive a rescaled restore") {
  for (const std::string backend : {"hashmap", "rocksdb"}) {
    CAPTURE(backend);
    auto dir = std::filesystem::temp_directory_path()
      / ("flint_record_state_" + std::to_string(::getpid()) + "_" + backend);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto ctx_of = [&](int subtask, int parallelism, const std::string& name) {
      auto ctx = context(subtask, parallelism);
      ctx.state_backend.type = backend;
      ctx.state_backend.local_dir = (dir / name).string();
      return ctx;
    };
    auto key = [](const event& e) { return e.who; };
    auto owner = [](const visitor& v, int p) {
      return operator_index_for_key_group(128, p, assign_to_key_group(key_hash(v), 128));
    };
    // Each visitor's stats after events 0..59, computed without the operator.
    auto fold = [](visit_stats& s, const event& e) {
      ++s.counts[e.what];
      if (e.what == kind::buy && !s.first_buy)
        s.first_buy = e.at;
      s.times.push_back(e.at);
    };
    std::map<std::pair<std::string, std::int32_t>, visit_stats> by_visitor;
    for (std::int64_t i = 0; i < 60; ++i) {
      auto e = event_of(i);
      fold(by_visitor[{e.who.site, e.who.id}], e);
    }
    REQUIRE(by_visitor.size() == 15);

    std::vector<state::keyed_state_handle> handles;
    for (int i = 0; i < 2; ++i) {
      keyed_process_operator<visitor, event, visit_stats> op(
        std::make_unique<stats_function>(), key, ctx_of(i, 2, "a" + std::to_string(i)),
        std::make_unique<vector_output<visit_stats>>());
      op.open();
      for (std::int64_t v = 0; v < 60; ++v)
        if (owner(event_of(v).who, 2) == i)
          op.process_element(event_of(v));
      auto s = op.snapshot_state(1);
      REQUIRE(s.keyed_upload);
      auto up = s.keyed_upload(
        state::snapshot_target{(dir / "chk-1").string(), "", "op-" + std::to_string(i)});
      REQUIRE_MESSAGE(up.has_value(), up.error().to_string());
      handles.insert(handles.end(), up->begin(), up->end());
    }
    // Three subtasks restore; each visitor gets one more event (a buy) at its new owner.
    std::size_t checked = 0;
    for (int i = 0; i < 3; ++i) {
      auto out = std::make_unique<vector_output<visit_stats>>();
      auto* seen = out.get();
      keyed_process_operator<visitor, event, visit_stats> op(
        std::make_unique<stats_function>(), key, ctx_of(i, 3, "b" + std::to_string(i)),
        std::move(out));
      op.initialize_state(
        state::operator_state_restore(state::operator_subtask_state{{}, handles, {}}, false, true));
      op.open();
      for (auto& [who, stats] : by_visitor) {
        visitor v{who.first, who.second};
        if (owner(v, 3) != i)
          continue;
        event more{v, kind::buy, 1000};
        op.process_element(more);
        auto after = stats;
        fold(after, more);
        REQUIRE(!seen->values.empty());
        CHECK(seen->values.back() == after);
        ++checked;
      }
    }
    CHECK(checked == by_visitor.size());
    std::filesystem::remove_all(dir);
  }
}
