#pragma once
/// Nexmark q8's join as a KeyedCoProcessFunction: people (input 1, keyed by id) and auctions
/// (input 2, keyed by seller) meet per TUMBLE(10 s) window. Instead of the windows' lists of
/// people and auctions it keeps, per key and window, whether an auction of that seller came and
/// the distinct names of the people with that id (the SQL groups by id, name, window): a person's
/// row goes out as soon as both sides are in its window, once per name. What the window operator
/// would drop is dropped here too: a record is late when its window's max timestamp (end - 1) is
/// at or behind the watermark, and an event-time timer at that max timestamp clears the window,
/// so no state outlives the time its window could still take records.

#include "api/api.hpp"
#include "apps/nexmark/nexmark_queries.hpp"
#include "runtime/streaming/windowing/time_window.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flint::nexmark {

/// q8's P side: a new person's id, name and time.
struct new_person {
  std::int64_t id = 0;
  std::string name;
  std::int64_t date_time = 0;
};
FLINT_RECORD(new_person, id, name, date_time);

/// q8's A side: a new auction's seller and time.
struct new_auction {
  std::int64_t seller = 0;
  std::int64_t date_time = 0;
};
FLINT_RECORD(new_auction, seller, date_time);

/// What q8 keeps of one person id (= seller) and window.
struct q8_window {
  /// An auction of the seller fell in the window: every name below has had its row.
  bool auction_seen = false;
  /// The distinct names of the window's people with this id (Nexmark gives each id one).
  std::vector<std::string> names;
};
FLINT_RECORD(q8_window, auction_seen, names);

struct q8_join
  : api::keyed_co_process_function<std::int64_t, new_person, new_auction, q8_row> {
  static constexpr std::int64_t window_size = 10'000;

  /// Per window, by its max timestamp (end - 1: the cleanup timer's time).
  std::optional<api::map_state<std::int64_t, q8_window>> windows;

  void open(api::keyed_context<std::int64_t>& ctx) override {
    windows.emplace(ctx.get_map_state<std::int64_t, q8_window>("windows"));
  }
  void process_element1(const new_person& p, api::keyed_context<std::int64_t>& ctx,
                        api::collector<q8_row>& out) override {
    auto start = window_start(p.date_time);
    auto max_ts = max_timestamp(start);
    if (late(max_ts, ctx))
      return;
    auto w = window(max_ts, ctx);
    if (std::find(w.names.begin(), w.names.end(), p.name) != w.names.end())
      return;
    w.names.push_back(p.name);
    if (w.auction_seen)
      out.collect({p.id, p.name, start});
    windows->put(max_ts, w);
  }
  void process_element2(const new_auction& a, api::keyed_context<std::int64_t>& ctx,
                        api::collector<q8_row>& out) override {
    auto start = window_start(a.date_time);
    auto max_ts = max_timestamp(start);
    if (late(max_ts, ctx))
      return;
    auto w = window(max_ts, ctx);
    if (w.auction_seen)
      return;
    w.auction_seen = true;
    for (const auto& name : w.names)
      out.collect({a.seller, name, start});
    windows->put(max_ts, w);
  }
  void on_timer(std::int64_t t, api::keyed_context<std::int64_t>&,
                api::collector<q8_row>&) override {
    windows->remove(t);
  }

private:
  static std::int64_t window_start(std::int64_t t) {
    return streaming::time_window::get_window_start_with_offset(t, 0, window_size);
  }
  /// end - 1, cut at INT64_MAX as the window operator's windows are (no overflow at the limit).
  static std::int64_t max_timestamp(std::int64_t start) {
    return streaming::time_window_detail::clamp(streaming::time_window_detail::wide{start}
                                                + window_size - 1);
  }
  /// As the window operator's isWindowLate: the window's max timestamp is not after the
  /// watermark (its timer fired, or would fire at once).
  static bool late(std::int64_t max_ts, api::keyed_context<std::int64_t>& ctx) {
    return max_ts <= ctx.timer_service().current_watermark();
  }
  /// The key's window ending at `max_ts`; a new one gets its cleanup timer there.
  q8_window window(std::int64_t max_ts, api::keyed_context<std::int64_t>& ctx) {
    if (auto w = windows->get(max_ts))
      return std::move(*w);
    ctx.timer_service().register_event_time_timer(max_ts);
    return {};
  }
};

} // namespace flint::nexmark
