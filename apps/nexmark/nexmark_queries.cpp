#include "apps/nexmark/nexmark_queries.hpp"

#include "api/api.hpp"
#include "apps/nexmark/q8_join.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <utility>

namespace flint::nexmark {

namespace {

using namespace std::chrono_literals;

constexpr std::int64_t ten_seconds_ms = 10'000;

// --- JSON -------------------------------------------------------------------------------------

void append_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

/// Writes `{"k": v, ...}` field by field.
class json_object {
public:
  json_object& field(const char* name, std::int64_t v) {
    key(name);
    out_ += std::to_string(v);
    return *this;
  }
  json_object& field(const char* name, const std::string& v) {
    key(name);
    append_string(out_, v);
    return *this;
  }
  /// A DECIMAL(_, 3) held in thousandths.
  json_object& milli(const char* name, std::int64_t thousandths) {
    key(name);
    if (thousandths < 0) {
      out_ += '-';
      thousandths = -thousandths;
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(thousandths / 1000),
                  static_cast<long long>(thousandths % 1000));
    out_ += buf;
    return *this;
  }
  std::string str() { return out_ + "}"; }

private:
  void key(const char* name) {
    out_ += out_.size() == 1 ? "\"" : ", \"";
    out_ += name;
    out_ += "\": ";
  }
  std::string out_ = "{";
};

// --- q3 ---------------------------------------------------------------------------------------

struct seller {
  std::string name;
  std::string city;
  std::string state;
};
FLINT_RECORD(seller, name, city, state);

/// person.id = auction.seller, both sides already filtered: a seller is kept once it arrives;
/// auctions that come before their seller (another source split ran ahead) wait for it.
struct join_sellers
  : api::keyed_co_process_function<std::int64_t, nexmark::person, nexmark::auction, q3_row> {
  std::optional<api::value_state<seller>> person;
  std::optional<api::list_state<std::int64_t>> waiting;
  void open(api::keyed_context<std::int64_t>& ctx) override {
    person.emplace(ctx.get_state<seller>("seller"));
    waiting.emplace(ctx.get_list_state<std::int64_t>("waiting-auctions"));
  }
  void process_element1(const nexmark::person& p, api::keyed_context<std::int64_t>&,
                        api::collector<q3_row>& out) override {
    person->update({p.name, p.city, p.state});
    for (auto id : waiting->get())
      out.collect({p.name, p.city, p.state, id});
    waiting->clear();
  }
  void process_element2(const nexmark::auction& a, api::keyed_context<std::int64_t>&,
                        api::collector<q3_row>& out) override {
    if (auto p = person->value())
      out.collect({p->name, p->city, p->state, a.id});
    else
      waiting->add(a.id);
  }
};

// --- q4 ---------------------------------------------------------------------------------------

struct open_auction {
  std::int64_t date_time = 0;
  std::int64_t expires = 0;
  std::int64_t category = 0;
  /// The highest price among the bids within [date_time, expires]; -1 without one.
  std::int64_t best = -1;
};
FLINT_RECORD(open_auction, date_time, expires, category, best);

struct early_bid {
  std::int64_t date_time = 0;
  std::int64_t price = 0;
};
FLINT_RECORD(early_bid, date_time, price);

/// Keyed by auction id: auctions on input 1, bids on input 2. A bid within an open auction's
/// lifetime raises its best price; an event-time timer at `expires` closes the auction and emits
/// its winning bid (none without bids, as the SQL's inner join). A bid that comes before its
/// auction (another split ran ahead, or the bid names one of the next auctions, as Nexmark's
/// AUCTION_ID_LEAD allows) waits for it until the watermark passes the bid's time: by then an
/// auction it could belong to (dateTime <= the bid's) has arrived.
struct winning_bids
  : api::keyed_co_process_function<std::int64_t, nexmark::auction, nexmark::bid, closed_auction> {
  std::optional<api::value_state<open_auction>> auction;
  std::optional<api::list_state<early_bid>> early;
  void open(api::keyed_context<std::int64_t>& ctx) override {
    auction.emplace(ctx.get_state<open_auction>("auction"));
    early.emplace(ctx.get_list_state<early_bid>("early-bids"));
  }
  void process_element1(const nexmark::auction& a, api::keyed_context<std::int64_t>& ctx,
                        api::collector<closed_auction>&) override {
    open_auction state{a.date_time, a.expires, a.category, -1};
    for (const auto& b : early->get())
      if (b.date_time >= a.date_time && b.date_time <= a.expires && b.price > state.best)
        state.best = b.price;
    early->clear();
    auction->update(state);
    ctx.timer_service().register_event_time_timer(a.expires);
  }
  void process_element2(const nexmark::bid& b, api::keyed_context<std::int64_t>& ctx,
                        api::collector<closed_auction>&) override {
    if (auto state = auction->value()) {
      if (b.date_time >= state->date_time && b.date_time <= state->expires && b.price > state->best) {
        state->best = b.price;
        auction->update(*state);
      }
      return;
    }
    if (b.date_time <= ctx.timer_service().current_watermark())
      return; // its auction closed already, or it has none in time
    early->add({b.date_time, b.price});
    ctx.timer_service().register_event_time_timer(b.date_time);
  }
  void on_timer(std::int64_t t, api::keyed_context<std::int64_t>& ctx,
                api::collector<closed_auction>& out) override {
    if (auto state = auction->value()) {
      if (t < state->expires)
        return;
      if (state->best >= 0)
        out.collect({ctx.current_key(), state->category, state->best});
      auction->clear();
      return;
    }
    auto waiting = early->get();
    std::vector<early_bid> kept;
    for (const auto& b : waiting)
      if (b.date_time > t)
        kept.push_back(b);
    if (kept.empty())
      early->clear();
    else if (kept.size() != waiting.size())
      early->update(kept);
  }
};

struct category_sum {
  std::int64_t sum = 0;
  std::int64_t count = 0;
};
FLINT_RECORD(category_sum, sum, count);

/// Keyed by category: the running AVG(final) of its closed auctions.
struct average_per_category
  : api::keyed_process_function<std::int64_t, closed_auction, q4_row> {
  std::optional<api::value_state<category_sum>> totals;
  void open(api::keyed_context<std::int64_t>& ctx) override {
    totals.emplace(ctx.get_state<category_sum>("totals"));
  }
  void process_element(const closed_auction& c, api::keyed_context<std::int64_t>&,
                       api::collector<q4_row>& out) override {
    auto t = totals->value().value_or(category_sum{});
    t.sum += c.final;
    ++t.count;
    totals->update(t);
    out.collect({c.category, t.sum / t.count, t.count});
  }
};

// --- q5 ---------------------------------------------------------------------------------------

struct count_bids : api::aggregate_function<nexmark::bid, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() override { return 0; }
  std::int64_t add(const nexmark::bid&, std::int64_t acc) override { return acc + 1; }
  std::int64_t get_result(const std::int64_t& acc) override { return acc; }
  std::int64_t merge(std::int64_t a, std::int64_t b) override { return a + b; }
};

/// The count of an auction's HOP window as a row with the window's bounds.
struct label_hop_window
  : api::process_window_function<std::int64_t, auction_count, std::int64_t> {
  void process(const std::int64_t& auction, api::window_context<>& ctx,
               const std::vector<std::int64_t>& counts, api::collector<auction_count>& out) override {
    out.collect({auction, counts.front(), ctx.window().start, ctx.window().end});
  }
};

/// The largest count of a window and the auctions that have it.
struct hottest {
  std::int64_t num = -1;
  std::int64_t starttime = 0;
  std::int64_t endtime = 0;
  std::vector<std::int64_t> auctions;
};
FLINT_RECORD(hottest, num, starttime, endtime, auctions);

struct keep_hottest : api::aggregate_function<auction_count, hottest, hottest> {
  hottest create_accumulator() override { return {}; }
  hottest add(const auction_count& c, hottest acc) override {
    if (c.num > acc.num) {
      acc.num = c.num;
      acc.starttime = c.starttime;
      acc.endtime = c.endtime;
      acc.auctions.assign(1, c.auction);
    } else if (c.num == acc.num) {
      acc.auctions.push_back(c.auction);
    }
    return acc;
  }
  hottest get_result(const hottest& acc) override { return acc; }
  hottest merge(hottest a, hottest b) override {
    if (b.num > a.num)
      return b;
    if (b.num == a.num)
      a.auctions.insert(a.auctions.end(), b.auctions.begin(), b.auctions.end());
    return a;
  }
};

// --- q7 ---------------------------------------------------------------------------------------

/// A bid with the end of the window it is checked against.
struct windowed_bid {
  std::int64_t window_end = 0;
  bid_row bid;
};
FLINT_RECORD(windowed_bid, window_end, bid);

struct highest_bids {
  /// The window's highest price; -1 before its first bid.
  std::int64_t max = -1;
  /// The window's bids with that price.
  std::vector<bid_row> best;
  /// Bids at exactly the window's end: in the next window, but within the SQL's BETWEEN.
  std::vector<bid_row> at_end;
};
FLINT_RECORD(highest_bids, max, best, at_end);

/// Keyed by window end: the window's maximum and the bids that have it, emitted when the
/// watermark reaches the window's end (so the bids at the end itself are in).
struct max_bids_per_window : api::keyed_process_function<std::int64_t, windowed_bid, bid_row> {
  std::optional<api::value_state<highest_bids>> state;
  void open(api::keyed_context<std::int64_t>& ctx) override {
    state.emplace(ctx.get_state<highest_bids>("highest"));
  }
  void process_element(const windowed_bid& w, api::keyed_context<std::int64_t>& ctx,
                       api::collector<bid_row>&) override {
    // A bid after its window fired (the watermark passed the window's end) is late: dropped, as
    // the SQL's window aggregate drops it (the generator, in order per split, makes none).
    if (w.window_end <= ctx.timer_service().current_watermark())
      return;
    auto s = state->value();
    if (!s) {
      s.emplace();
      ctx.timer_service().register_event_time_timer(w.window_end);
    }
    if (w.bid.date_time == w.window_end) {
      s->at_end.push_back(w.bid);
    } else if (w.bid.price > s->max) {
      s->max = w.bid.price;
      s->best.assign(1, w.bid);
    } else if (w.bid.price == s->max) {
      s->best.push_back(w.bid);
    } else {
      return;
    }
    state->update(*s);
  }
  void on_timer(std::int64_t, api::keyed_context<std::int64_t>&,
                api::collector<bid_row>& out) override {
    auto s = state->value();
    if (!s)
      return;
    if (s->max >= 0) {
      for (const auto& b : s->best)
        out.collect(b);
      for (const auto& b : s->at_end)
        if (b.price == s->max)
          out.collect(b);
    }
    state->clear();
  }
};

// --- q11 --------------------------------------------------------------------------------------

struct label_session : api::process_window_function<std::int64_t, q11_row, std::int64_t> {
  void process(const std::int64_t& bidder, api::window_context<>& ctx,
               const std::vector<std::int64_t>& counts, api::collector<q11_row>& out) override {
    out.collect({bidder, counts.front(), ctx.window().start, ctx.window().end});
  }
};

// --- sinks ------------------------------------------------------------------------------------

template <class T>
class blackhole_operator final : public streaming::one_input_operator<T> {
public:
  void process_element(const T&) override { ++records_; }

private:
  std::int64_t records_ = 0;
};

template <class T>
class blackhole_factory final : public api::named_operator_factory {
public:
  blackhole_factory() : api::named_operator_factory("sink.blackhole") {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context&) const override {
    return std::make_unique<blackhole_operator<T>>();
  }
};

template <class T>
void to_blackhole(api::data_stream<T> rows) {
  rows.template transform<T>("Sink: Blackhole", std::make_shared<blackhole_factory<T>>());
}

template <class T>
api::data_stream<std::string> as_json(api::data_stream<T> rows) {
  return rows.map([](const T& r) { return to_json(r); });
}

} // namespace

std::string to_json(const bid_row& r) {
  return json_object()
    .field("auction", r.auction)
    .field("bidder", r.bidder)
    .field("price", r.price)
    .field("dateTime", r.date_time)
    .field("extra", r.extra)
    .str();
}

std::string to_json(const q1_row& r) {
  return json_object()
    .field("auction", r.auction)
    .field("bidder", r.bidder)
    .milli("price", r.price_milli)
    .field("dateTime", r.date_time)
    .field("extra", r.extra)
    .str();
}

std::string to_json(const q2_row& r) {
  return json_object().field("auction", r.auction).field("price", r.price).str();
}

std::string to_json(const q3_row& r) {
  return json_object()
    .field("name", r.name)
    .field("city", r.city)
    .field("state", r.state)
    .field("id", r.id)
    .str();
}

std::string to_json(const q4_row& r) {
  return json_object().field("id", r.id).field("final", r.final).str();
}

std::string to_json(const q5_row& r) {
  return json_object().field("auction", r.auction).field("num", r.num).str();
}

std::string to_json(const q8_row& r) {
  return json_object().field("id", r.id).field("name", r.name).field("stime", r.stime).str();
}

std::string to_json(const q11_row& r) {
  return json_object()
    .field("bidder", r.bidder)
    .field("bid_count", r.bid_count)
    .field("starttime", r.starttime)
    .field("endtime", r.endtime)
    .str();
}

api::data_stream<nexmark::bid> bids_of(api::data_stream<event> events) {
  return events.flat_map<nexmark::bid>([](const event& e, api::collector<nexmark::bid>& out) {
    if (e.type == event_type::bid && e.new_bid)
      out.collect_ref(*e.new_bid);
  });
}

api::data_stream<nexmark::person> persons_of(api::data_stream<event> events) {
  return events.flat_map<nexmark::person>(
    [](const event& e, api::collector<nexmark::person>& out) {
      if (e.type == event_type::person && e.new_person)
        out.collect_ref(*e.new_person);
    });
}

api::data_stream<nexmark::auction> auctions_of(api::data_stream<event> events) {
  return events.flat_map<nexmark::auction>(
    [](const event& e, api::collector<nexmark::auction>& out) {
      if (e.type == event_type::auction && e.new_auction)
        out.collect_ref(*e.new_auction);
    });
}

api::data_stream<bid_row> q0(api::data_stream<event> events) {
  return events.flat_map<bid_row>([](const event& e, api::collector<bid_row>& out) {
    if (e.type == event_type::bid && e.new_bid) {
      const auto& b = *e.new_bid;
      out.collect({b.auction, b.bidder, b.price, b.date_time, b.extra});
    }
  });
}

api::data_stream<q1_row> q1(api::data_stream<event> events) {
  return events.flat_map<q1_row>([](const event& e, api::collector<q1_row>& out) {
    if (e.type == event_type::bid && e.new_bid) {
      const auto& b = *e.new_bid;
      out.collect({b.auction, b.bidder, b.price * 908, b.date_time, b.extra});
    }
  });
}

api::data_stream<q2_row> q2(api::data_stream<event> events) {
  return events.flat_map<q2_row>([](const event& e, api::collector<q2_row>& out) {
    if (e.type == event_type::bid && e.new_bid && e.new_bid->auction % 123 == 0)
      out.collect({e.new_bid->auction, e.new_bid->price});
  });
}

api::data_stream<q3_row> q3(api::data_stream<event> events) {
  auto sellers = persons_of(events).filter([](const nexmark::person& p) {
    return p.state == "OR" || p.state == "ID" || p.state == "CA";
  });
  auto auctions =
    auctions_of(events).filter([](const nexmark::auction& a) { return a.category == 10; });
  return sellers.connect(auctions)
    .key_by([](const nexmark::person& p) { return p.id; },
            [](const nexmark::auction& a) { return a.seller; })
    .process<q3_row>(join_sellers{});
}

api::data_stream<closed_auction> q4_closed_auctions(api::data_stream<event> events) {
  return auctions_of(events)
    .connect(bids_of(events))
    .key_by([](const nexmark::auction& a) { return a.id; },
            [](const nexmark::bid& b) { return b.auction; })
    .process<closed_auction>(winning_bids{});
}

api::data_stream<q4_row> q4(api::data_stream<event> events) {
  return q4_closed_auctions(events)
    .key_by([](const closed_auction& c) { return c.category; })
    .process<q4_row>(average_per_category{});
}

api::data_stream<q5_row> q5(api::data_stream<event> events) {
  // Two-phase (pipeline.window.agg-phase-strategy AUTO): each source subtask counts its bids
  // per auction and 2 s slice before the key_by, so the window operator sees partial counts.
  auto counts = bids_of(events)
                  .key_by([](const nexmark::bid& b) { return b.auction; })
                  .window(api::sliding_event_time_windows::of(10s, 2s))
                  .aggregate(count_bids{}, label_hop_window{});
  // Each count carries its window's end - 1 as timestamp: a tumbling 2 s window holds exactly
  // the counts of one HOP window.
  return counts.key_by([](const auction_count& c) { return c.endtime; })
    .window(api::tumbling_event_time_windows::of(2s))
    .aggregate(keep_hottest{})
    .flat_map<q5_row>([](const hottest& h, api::collector<q5_row>& out) {
      for (auto a : h.auctions)
        out.collect({a, h.num, h.starttime, h.endtime});
    });
}

api::data_stream<bid_row> q7(api::data_stream<event> events) {
  auto windowed = events.flat_map<windowed_bid>(
    [](const event& e, api::collector<windowed_bid>& out) {
      if (e.type != event_type::bid || !e.new_bid)
        return;
      const auto& b = *e.new_bid;
      bid_row row{b.auction, b.bidder, b.price, b.date_time, b.extra};
      auto end = b.date_time - b.date_time % ten_seconds_ms + ten_seconds_ms;
      // A bid at a window's end also qualifies for that window (BETWEEN includes both ends).
      if (b.date_time % ten_seconds_ms == 0)
        out.collect({b.date_time, row});
      out.collect({end, std::move(row)});
    });
  return windowed.key_by([](const windowed_bid& w) { return w.window_end; })
    .process<bid_row>(max_bids_per_window{});
}

api::data_stream<q8_row> q8(api::data_stream<event> events) {
  auto people = events.flat_map<new_person>([](const event& e, api::collector<new_person>& out) {
    if (e.type == event_type::person && e.new_person)
      out.collect({e.new_person->id, e.new_person->name, e.new_person->date_time});
  });
  auto auctions =
    events.flat_map<new_auction>([](const event& e, api::collector<new_auction>& out) {
      if (e.type == event_type::auction && e.new_auction)
        out.collect({e.new_auction->seller, e.new_auction->date_time});
    });
  // The SQL's two GROUP BYs and their join in one keyed step: per id and window only whether
  // the seller had an auction and the names seen (q8_join.hpp), not the windows' records.
  return people.connect(auctions)
    .key_by([](const new_person& p) { return p.id; },
            [](const new_auction& a) { return a.seller; })
    .process<q8_row>(q8_join{});
}

api::data_stream<q11_row> q11(api::data_stream<event> events) {
  return bids_of(events)
    .key_by([](const nexmark::bid& b) { return b.bidder; })
    .window(api::event_time_session_windows::with_gap(10s))
    .aggregate(count_bids{}, label_session{});
}

const std::vector<std::string>& query_names() {
  static const std::vector<std::string> names{"q0", "q1", "q2", "q3", "q4",
                                              "q5", "q7", "q8", "q11"};
  return names;
}

namespace {

template <class Visit>
bool with_query(const std::string& name, api::data_stream<event> events, Visit visit) {
  if (name == "q0") visit(q0(events));
  else if (name == "q1") visit(q1(events));
  else if (name == "q2") visit(q2(events));
  else if (name == "q3") visit(q3(events));
  else if (name == "q4") visit(q4(events));
  else if (name == "q5") visit(q5(events));
  else if (name == "q7") visit(q7(events));
  else if (name == "q8") visit(q8(events));
  else if (name == "q11") visit(q11(events));
  else return false;
  return true;
}

} // namespace

api::data_stream<std::string> query_as_json(const std::string& name,
                                            api::data_stream<event> events) {
  std::optional<api::data_stream<std::string>> out;
  if (!with_query(name, events, [&](auto rows) { out.emplace(as_json(rows)); }))
    throw std::invalid_argument("unknown Nexmark query: " + name);
  return *out;
}

bool query_to_blackhole(const std::string& name, api::data_stream<event> events) {
  return with_query(name, events, [](auto rows) { to_blackhole(rows); });
}

} // namespace flint::nexmark
