// Nexmark's queries on the MiniCluster against the SQL computed here, plainly and in one thread,
// over the same generated events (apps/nexmark/nexmark_generator.hpp). 40'000 events at 1'000
// events per second of event time: 40 s, so the windows, sessions and auction lifetimes all
// turn over several times. Each query runs at -p 1 and -p 2.
//
// Late events: Nexmark's watermark is dateTime - 4 s per source split, and each split makes its
// event numbers in order with non-decreasing times, so no event is behind its own split's
// watermark, and an operator's watermark (the minimum over its inputs) is never ahead of an
// event's own split. The reference therefore drops nothing; the test checks that premise
// (nothing is late under the 4 s watermark in split order) rather than assuming it.

#include "apps/nexmark/nexmark_generator.hpp"
#include "apps/nexmark/nexmark_queries.hpp"
#include "apps/nexmark/nexmark_source.hpp"
#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace flint;
using namespace flint::nexmark;

namespace {

constexpr std::int64_t num_events = 40'000;
constexpr std::int64_t ten_s = 10'000;

nexmark_config test_config() {
  nexmark_config c;
  c.events_num = num_events;
  c.tps = 1'000;
  return c;
}

const std::vector<event>& all_events() {
  static const std::vector<event> events = [] {
    std::vector<event> out;
    auto config = test_config();
    for (std::int64_t n = 0; n < num_events; ++n)
      out.push_back(generate(n, config));
    return out;
  }();
  return events;
}

std::vector<bid> all_bids() {
  std::vector<bid> out;
  for (const auto& e : all_events())
    if (e.new_bid)
      out.push_back(*e.new_bid);
  return out;
}

/// Runs `build` on Nexmark's source at `parallelism` and returns what its rows' sink received.
template <class Row>
std::vector<Row> run_query(int parallelism,
                           const std::function<api::data_stream<Row>(api::data_stream<event>)>& build) {
  api::stream_execution_environment env(api::configuration{
    {"parallelism.default", std::to_string(parallelism)},
    {"pipeline.auto-watermark-interval", "5 ms"}});
  auto rows = build(nexmark_source(env, test_config()));
  auto into = test::collect(rows);
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = parallelism;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(3));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  std::lock_guard<std::mutex> guard{into->mutex};
  return into->values;
}

template <class Row>
std::vector<Row> sorted(std::vector<Row> v) {
  std::sort(v.begin(), v.end());
  return v;
}

template <class Row>
void check_query(const char* name,
                 const std::function<api::data_stream<Row>(api::data_stream<event>)>& build,
                 const std::vector<Row>& want) {
  auto expected = sorted(want);
  for (int p : {1, 2}) {
    CAPTURE(name);
    CAPTURE(p);
    auto got = sorted(run_query<Row>(p, build));
    CHECK(got.size() == expected.size());
    CHECK(got == expected);
  }
}

} // namespace

TEST_CASE("nexmark: no event is behind its split's 4 s watermark, at 1 or 2 splits") {
  const auto& events = all_events();
  REQUIRE(events.size() == static_cast<std::size_t>(num_events));
  for (int splits : {1, 2}) {
    for (int s = 0; s < splits; ++s) {
      std::int64_t watermark = std::numeric_limits<std::int64_t>::min();
      std::int64_t late = 0;
      for (std::size_t n = s; n < events.size(); n += splits) {
        auto t = events[n].timestamp();
        if (t <= watermark)
          ++late;
        watermark = std::max(watermark, t - 4000 - 1);
      }
      CHECK(late == 0);
    }
  }
  // The windows and sessions below turn over several times.
  CHECK(events.back().timestamp() - events.front().timestamp() >= 35'000);
}

TEST_CASE("nexmark q0: every bid") {
  std::vector<bid_row> want;
  for (const auto& b : all_bids())
    want.push_back({b.auction, b.bidder, b.price, b.date_time, b.extra});
  check_query<bid_row>("q0", q0, want);
}

TEST_CASE("nexmark q1: prices in euros, 0.908 * price to three decimals") {
  std::vector<q1_row> want;
  for (const auto& b : all_bids())
    want.push_back({b.auction, b.bidder, b.price * 908, b.date_time, b.extra});
  check_query<q1_row>("q1", q1, want);
  CHECK(to_json(q1_row{1, 2, 1234567, 3, "x"})
        == R"({"auction": 1, "bidder": 2, "price": 1234.567, "dateTime": 3, "extra": "x"})");
}

TEST_CASE("nexmark q2: the bids of auctions with MOD(auction, 123) = 0") {
  std::vector<q2_row> want;
  for (const auto& b : all_bids())
    if (b.auction % 123 == 0)
      want.push_back({b.auction, b.price});
  REQUIRE(!want.empty());
  check_query<q2_row>("q2", q2, want);
  CHECK(to_json(q2_row{123, 45}) == R"({"auction": 123, "price": 45})");
}

TEST_CASE("nexmark q3: category-10 auctions of sellers in OR, ID or CA") {
  std::map<std::int64_t, person> people;
  for (const auto& e : all_events())
    if (e.new_person)
      people[e.new_person->id] = *e.new_person;
  std::vector<q3_row> want;
  for (const auto& e : all_events()) {
    if (!e.new_auction || e.new_auction->category != 10)
      continue;
    auto p = people.find(e.new_auction->seller);
    if (p == people.end())
      continue;
    const auto& s = p->second.state;
    if (s == "OR" || s == "ID" || s == "CA")
      want.push_back({p->second.name, p->second.city, s, e.new_auction->id});
  }
  REQUIRE(!want.empty());
  check_query<q3_row>("q3", q3, want);
}

TEST_CASE("nexmark q4: winning bids within each auction's lifetime, averaged per category") {
  // MAX(B.price) per auction over bids with B.dateTime BETWEEN A.dateTime AND A.expires.
  std::map<std::int64_t, auction> auctions;
  for (const auto& e : all_events())
    if (e.new_auction)
      auctions[e.new_auction->id] = *e.new_auction;
  std::map<std::int64_t, std::int64_t> best;
  for (const auto& b : all_bids()) {
    auto a = auctions.find(b.auction);
    if (a == auctions.end() || b.date_time < a->second.date_time
        || b.date_time > a->second.expires)
      continue;
    auto& m = best.try_emplace(b.auction, b.price).first->second;
    m = std::max(m, b.price);
  }
  std::vector<closed_auction> closed;
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> per_category; // sum, count
  for (const auto& [id, price] : best) {
    auto category = auctions[id].category;
    closed.push_back({id, category, price});
    per_category[category].first += price;
    per_category[category].second += 1;
  }
  REQUIRE(closed.size() > 100);
  check_query<closed_auction>("q4 winning bids", q4_closed_auctions, closed);

  // AVG per category as an updating aggregate: one row per closed auction, each category's rows
  // count 1, 2, ... n in order, and the last one is the SQL's final AVG (BIGINT: truncated).
  for (int p : {1, 2}) {
    CAPTURE(p);
    auto rows = run_query<q4_row>(p, q4);
    CHECK(rows.size() == closed.size());
    std::map<std::int64_t, std::vector<q4_row>> by_category;
    for (const auto& r : rows)
      by_category[r.id].push_back(r);
    CHECK(by_category.size() == per_category.size());
    for (const auto& [category, rs] : by_category) {
      CAPTURE(category);
      for (std::size_t i = 0; i < rs.size(); ++i)
        CHECK(rs[i].auctions == static_cast<std::int64_t>(i + 1));
      auto [sum, count] = per_category[category];
      CHECK(rs.back().auctions == count);
      CHECK(rs.back().final == sum / count);
    }
  }
}

TEST_CASE("nexmark q5: the auctions with the most bids per HOP(10 s, 2 s) window") {
  // Window starts are multiples of 2 s; a bid at t is in every window with start <= t < start + 10 s.
  std::map<std::int64_t, std::map<std::int64_t, std::int64_t>> counts; // start -> auction -> n
  for (const auto& b : all_bids()) {
    auto last = b.date_time - b.date_time % 2000;
    for (auto start = last; start > b.date_time - ten_s; start -= 2000)
      ++counts[start][b.auction];
  }
  std::vector<q5_row> want;
  for (const auto& [start, per_auction] : counts) {
    std::int64_t max = 0;
    for (const auto& [a, n] : per_auction)
      max = std::max(max, n);
    for (const auto& [a, n] : per_auction)
      if (n >= max)
        want.push_back({a, n, start, start + ten_s});
  }
  REQUIRE(counts.size() > 15);
  check_query<q5_row>("q5", q5, want);
  CHECK(to_json(q5_row{7, 3, 0, 10}) == R"({"auction": 7, "num": 3})");
}

TEST_CASE("nexmark q7: the highest bids of each TUMBLE(10 s) window, joined back") {
  auto bids = all_bids();
  std::map<std::int64_t, std::int64_t> max_of; // window end -> MAX(price)
  for (const auto& b : bids) {
    auto end = b.date_time - b.date_time % ten_s + ten_s;
    auto& m = max_of.try_emplace(end, b.price).first->second;
    m = std::max(m, b.price);
  }
  // B.price = maxprice AND B.dateTime BETWEEN window_end - 10 s AND window_end.
  std::vector<bid_row> want;
  for (const auto& [end, max] : max_of)
    for (const auto& b : bids)
      if (b.price == max && b.date_time >= end - ten_s && b.date_time <= end)
        want.push_back({b.auction, b.bidder, b.price, b.date_time, b.extra});
  REQUIRE(max_of.size() >= 4);
  check_query<bid_row>("q7", q7, want);
}

TEST_CASE("nexmark q8: people who opened an auction in their registration's TUMBLE(10 s) window") {
  std::set<std::pair<std::int64_t, std::int64_t>> sellers; // (seller, window start)
  for (const auto& e : all_events())
    if (e.new_auction)
      sellers.insert({e.new_auction->seller, e.new_auction->date_time / ten_s * ten_s});
  std::vector<q8_row> want;
  for (const auto& e : all_events())
    if (e.new_person) {
      auto start = e.new_person->date_time / ten_s * ten_s;
      if (sellers.count({e.new_person->id, start}))
        want.push_back({e.new_person->id, e.new_person->name, start});
    }
  REQUIRE(!want.empty());
  check_query<q8_row>("q8", q8, want);
}

TEST_CASE("nexmark q11: bids per bidder per SESSION(10 s)") {
  std::map<std::int64_t, std::vector<std::int64_t>> times;
  for (const auto& b : all_bids())
    times[b.bidder].push_back(b.date_time);
  // A bid within 10 s of the session's last one (touching windows merge) extends it.
  std::vector<q11_row> want;
  for (auto& [bidder, ts] : times) {
    std::sort(ts.begin(), ts.end());
    q11_row s{bidder, 1, ts[0], ts[0] + ten_s};
    for (std::size_t i = 1; i < ts.size(); ++i) {
      if (ts[i] <= s.endtime) {
        ++s.bid_count;
        s.endtime = std::max(s.endtime, ts[i] + ten_s);
      } else {
        want.push_back(s);
        s = {bidder, 1, ts[i], ts[i] + ten_s};
      }
    }
    want.push_back(s);
  }
  check_query<q11_row>("q11", q11, want);
  CHECK(to_json(q11_row{2001, 4, 10, 20})
        == R"({"bidder": 2001, "bid_count": 4, "starttime": 10, "endtime": 20})");
}

// Late events, made on purpose: one source split emits the events with every 97th one held back
// by 6'000 events (6 s of event time, 2 s behind the 4 s watermark) and every 89th by 16'000
// (12 s behind), and a watermark after every
// event (max - 4 s - 1 ms), so what is late is fixed by the order alone. The windows drop what
// Flink's WindowOperator drops: an element for each of its windows whose end - 1 the watermark
// has reached; in a session, a lone element whose own session would already be over. At -p 1
// only: with several source subtasks (or one feeding several), an operator's watermark is the
// minimum over its inputs, so which events are late depends on how far each input has got, in
// Flink as here; at -p 2 the in-order runs above show that nothing is dropped.

namespace {

/// How many events later event n comes: every 97th 6 s (2 s behind the watermark: late for some
/// HOP windows, never for a session), every 89th 16 s (12 s behind: late for a session too).
std::int64_t held_back(std::size_t n) {
  if (n % 97 == 4)
    return 6'000;
  return n % 89 == 7 ? 16'000 : 0;
}

/// The events in the order the disordered source emits them.
const std::vector<event>& disordered_events() {
  static const std::vector<event> out = [] {
    const auto& events = all_events();
    std::vector<std::pair<std::int64_t, std::size_t>> order;
    for (std::size_t n = 0; n < events.size(); ++n)
      order.emplace_back(static_cast<std::int64_t>(n) + held_back(n), n);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<event> v;
    for (const auto& [key, n] : order)
      v.push_back(events[n]);
    return v;
  }();
  return out;
}

/// The watermark in force when each disordered event arrives.
std::vector<std::int64_t> watermarks_before() {
  std::vector<std::int64_t> out;
  std::int64_t max = std::numeric_limits<std::int64_t>::min() / 2;
  for (const auto& e : disordered_events()) {
    out.push_back(max - 4000 - 1);
    max = std::max(max, e.timestamp());
  }
  return out;
}

/// Emits max - 4 s - 1 ms after every event (punctuated).
struct every_event_watermarks final : api::watermark_generator<event> {
  std::int64_t max = std::numeric_limits<std::int64_t>::min() / 2;
  void on_event(const event&, std::int64_t ts, api::watermark_output& out) override {
    max = std::max(max, ts);
    out.emit_watermark(max - 4000 - 1);
  }
  void on_periodic_emit(api::watermark_output&) override {}
};

template <class Row>
std::vector<Row> run_disordered(
  const std::function<api::data_stream<Row>(api::data_stream<event>)>& build) {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "1"}});
  api::data_generator_source<event> source(
    [](std::int64_t i) { return disordered_events()[static_cast<std::size_t>(i)]; }, num_events);
  auto events = env.from_source(
    source,
    api::watermark_strategy<event>::for_generator([] {
      return std::make_unique<every_event_watermarks>();
    }).with_timestamp_assigner([](const event& e) { return e.timestamp(); }),
    "Disordered Nexmark");
  auto into = test::collect(build(events));
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(3));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  std::lock_guard<std::mutex> guard{into->mutex};
  return into->values;
}

template <class Row>
void check_disordered(const char* name,
                      const std::function<api::data_stream<Row>(api::data_stream<event>)>& build,
                      const std::vector<Row>& want, const std::vector<Row>& in_order) {
  CAPTURE(name);
  auto expected = sorted(want);
  // The late events change the result: the test would see a window that kept them.
  CHECK(expected != sorted(in_order));
  auto got = sorted(run_disordered<Row>(build));
  CHECK(got.size() == expected.size());
  CHECK(got == expected);
}

} // namespace

// q5 and q11 only: their windows read one input channel at -p 1. q8's join (a keyed co-process) reads two (the
// people and the auctions, unioned), whose watermarks arrive independently, so which event is late
// would depend on how the two channels interleave.
TEST_CASE("nexmark q5 and q11 drop what is late under the 4 s watermark, as Flink's windows") {
  const auto& events = disordered_events();
  auto watermarks = watermarks_before();
  std::int64_t late = 0;
  for (std::size_t k = 0; k < events.size(); ++k)
    late += events[k].timestamp() <= watermarks[k] ? 1 : 0;
  REQUIRE(late > 100);

  // q5: a bid counts in each of its HOP windows whose end - 1 is after the watermark.
  std::map<std::int64_t, std::map<std::int64_t, std::int64_t>> counts, all_counts;
  for (std::size_t k = 0; k < events.size(); ++k) {
    if (!events[k].new_bid)
      continue;
    const auto& b = *events[k].new_bid;
    auto last = b.date_time - b.date_time % 2000;
    for (auto start = last; start > b.date_time - ten_s; start -= 2000) {
      ++all_counts[start][b.auction];
      if (start + ten_s - 1 > watermarks[k])
        ++counts[start][b.auction];
    }
  }
  auto hottest = [](const std::map<std::int64_t, std::map<std::int64_t, std::int64_t>>& c) {
    std::vector<q5_row> out;
    for (const auto& [start, per_auction] : c) {
      std::int64_t max = 0;
      for (const auto& [a, n] : per_auction)
        max = std::max(max, n);
      for (const auto& [a, n] : per_auction)
        if (n >= max)
          out.push_back({a, n, start, start + ten_s});
    }
    return out;
  };
  check_disordered<q5_row>("q5", q5, hottest(counts), hottest(all_counts));

  // q11: sessions per bidder in arrival order. Sessions whose end - 1 the watermark reached are
  // over; a bid joins (and bridges) the live sessions it touches, and a bid that touches none is
  // dropped when its own session [t, t + 10 s) would be over already.
  auto q11_of = [&](bool drop_late) {
    std::map<std::int64_t, std::vector<q11_row>> live;
    std::vector<q11_row> out;
    for (std::size_t k = 0; k < events.size(); ++k) {
      if (!events[k].new_bid)
        continue;
      const auto& b = *events[k].new_bid;
      auto wm = drop_late ? watermarks[k] : std::numeric_limits<std::int64_t>::min();
      auto& sessions = live[b.bidder];
      std::vector<q11_row> kept;
      for (const auto& s : sessions)
        (s.endtime - 1 <= wm ? out : kept).push_back(s);
      q11_row merged{b.bidder, 1, b.date_time, b.date_time + ten_s};
      std::vector<q11_row> rest;
      bool touched = false;
      for (const auto& s : kept) {
        if (s.starttime <= merged.endtime && s.endtime >= merged.starttime) {
          touched = true;
          merged.bid_count += s.bid_count;
          merged.starttime = std::min(merged.starttime, s.starttime);
          merged.endtime = std::max(merged.endtime, s.endtime);
        } else {
          rest.push_back(s);
        }
      }
      if (touched || merged.endtime - 1 > wm)
        rest.push_back(merged);
      sessions = rest;
    }
    for (const auto& [bidder, sessions] : live)
      out.insert(out.end(), sessions.begin(), sessions.end());
    return out;
  };
  check_disordered<q11_row>("q11", q11, q11_of(true), q11_of(false));
}
