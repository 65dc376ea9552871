#pragma once
/// Nexmark's queries q0, q1, q2, q3, q4, q5, q7, q8 and q11 (nexmark-flink's
/// `queries/qN.sql`) as DataStream pipelines: each function takes the event stream (with its
/// timestamps and watermarks, as `nexmark_source` gives it) and returns the query's result rows.
/// A row's fields are the SQL result's columns, times in epoch milliseconds; `to_json` writes
/// one as a JSON object with the SQL's column names.

#include "api/data_stream.hpp"
#include "apps/nexmark/nexmark_model.hpp"
#include "runtime/streaming/record_type.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace flint::nexmark {

/// q0 (pass-through) and q7's rows: a bid's auction, bidder, price, dateTime and extra.
struct bid_row {
  std::int64_t auction = 0;
  std::int64_t bidder = 0;
  std::int64_t price = 0;
  std::int64_t date_time = 0;
  std::string extra;
  bool operator==(const bid_row&) const = default;
  auto operator<=>(const bid_row&) const = default;
};
FLINT_RECORD(bid_row, auction, bidder, price, date_time, extra);

/// q1: a bid with its price in euros, `0.908 * price` as the SQL's DECIMAL(23, 3), held exactly
/// in thousandths (`price_milli` = 908 * price).
struct q1_row {
  std::int64_t auction = 0;
  std::int64_t bidder = 0;
  std::int64_t price_milli = 0;
  std::int64_t date_time = 0;
  std::string extra;
  bool operator==(const q1_row&) const = default;
  auto operator<=>(const q1_row&) const = default;
};
FLINT_RECORD(q1_row, auction, bidder, price_milli, date_time, extra);

/// q2: the bids on every 123rd auction.
struct q2_row {
  std::int64_t auction = 0;
  std::int64_t price = 0;
  bool operator==(const q2_row&) const = default;
  auto operator<=>(const q2_row&) const = default;
};
FLINT_RECORD(q2_row, auction, price);

/// q3: sellers in OR, ID or CA with their auctions of category 10.
struct q3_row {
  std::string name;
  std::string city;
  std::string state;
  std::int64_t id = 0;
  bool operator==(const q3_row&) const = default;
  auto operator<=>(const q3_row&) const = default;
};
FLINT_RECORD(q3_row, name, city, state, id);

/// q4's first stage: an auction closed (the watermark passed `expires`) with its winning bid,
/// the highest price among its bids within [dateTime, expires].
struct closed_auction {
  std::int64_t auction = 0;
  std::int64_t category = 0;
  std::int64_t final = 0;
  bool operator==(const closed_auction&) const = default;
  auto operator<=>(const closed_auction&) const = default;
};
FLINT_RECORD(closed_auction, auction, category, final);

/// q4: a category (`id`) and the average winning price of its auctions closed so far (`final`,
/// AVG of BIGINT as Flink SQL computes it: the truncated quotient). `auctions` counts them; it is
/// not a column of the SQL.
struct q4_row {
  std::int64_t id = 0;
  std::int64_t final = 0;
  std::int64_t auctions = 0;
  bool operator==(const q4_row&) const = default;
  auto operator<=>(const q4_row&) const = default;
};
FLINT_RECORD(q4_row, id, final, auctions);

/// q5's first stage: bids of an auction in one HOP window.
struct auction_count {
  std::int64_t auction = 0;
  std::int64_t num = 0;
  std::int64_t starttime = 0;
  std::int64_t endtime = 0;
  bool operator==(const auction_count&) const = default;
  auto operator<=>(const auction_count&) const = default;
};
FLINT_RECORD(auction_count, auction, num, starttime, endtime);

/// q5: an auction with the most bids of its HOP(10 s, 2 s) window (all of them on a tie). The
/// SQL's columns are `auction` and `num`; the window travels along for checking.
using q5_row = auction_count;

/// q8: a person who opened an auction within the TUMBLE(10 s) window they registered in.
struct q8_row {
  std::int64_t id = 0;
  std::string name;
  std::int64_t stime = 0;
  bool operator==(const q8_row&) const = default;
  auto operator<=>(const q8_row&) const = default;
};
FLINT_RECORD(q8_row, id, name, stime);

/// q11: a bidder's session of bids (gap 10 s): how many, and its start and end (last bid + 10 s).
struct q11_row {
  std::int64_t bidder = 0;
  std::int64_t bid_count = 0;
  std::int64_t starttime = 0;
  std::int64_t endtime = 0;
  bool operator==(const q11_row&) const = default;
  auto operator<=>(const q11_row&) const = default;
};
FLINT_RECORD(q11_row, bidder, bid_count, starttime, endtime);

/// The rows as JSON objects with the SQL's column names (`dateTime`, `price`, ...).
std::string to_json(const bid_row& r);
std::string to_json(const q1_row& r);
std::string to_json(const q2_row& r);
std::string to_json(const q3_row& r);
std::string to_json(const q4_row& r);
std::string to_json(const q5_row& r);
std::string to_json(const q8_row& r);
std::string to_json(const q11_row& r);

/// The bids of the event stream (the SQL's `bid` view).
api::data_stream<nexmark::bid> bids_of(api::data_stream<event> events);
/// The people (the `person` view).
api::data_stream<nexmark::person> persons_of(api::data_stream<event> events);
/// The auctions (the `auction` view).
api::data_stream<nexmark::auction> auctions_of(api::data_stream<event> events);

/// q0: every bid, unchanged.
api::data_stream<bid_row> q0(api::data_stream<event> events);
/// q1: every bid with `price` converted to euros.
api::data_stream<q1_row> q1(api::data_stream<event> events);
/// q2: the bids with `auction % 123 == 0`.
api::data_stream<q2_row> q2(api::data_stream<event> events);
/// q3: auctions of category 10 joined with their sellers from OR, ID or CA; an incremental join
/// (a keyed co-process function on person id = seller) that keeps each seller and the auctions
/// that arrived before it.
api::data_stream<q3_row> q3(api::data_stream<event> events);
/// q4's first stage: each auction's winning bid, emitted when the watermark passes its expiry.
api::data_stream<closed_auction> q4_closed_auctions(api::data_stream<event> events);
/// q4: the running average winning price per category, one row per closed auction with bids.
api::data_stream<q4_row> q4(api::data_stream<event> events);
/// q5: the hot auctions of each HOP(10 s, 2 s) window.
api::data_stream<q5_row> q5(api::data_stream<event> events);
/// q7: the bids with the highest price of each TUMBLE(10 s) window, joined back: bids with that
/// price whose dateTime is within [window end - 10 s, window end] (both ends, as the SQL's
/// BETWEEN). The SQL's select list swaps bidder and price against its sink's columns; the rows
/// here keep each field's meaning.
api::data_stream<bid_row> q7(api::data_stream<event> events);
/// q8: people who opened an auction in the TUMBLE(10 s) window they registered in.
api::data_stream<q8_row> q8(api::data_stream<event> events);
/// q11: bids per bidder per SESSION(10 s).
api::data_stream<q11_row> q11(api::data_stream<event> events);

/// The query names `build_query` knows: q0 q1 q2 q3 q4 q5 q7 q8 q11.
const std::vector<std::string>& query_names();

/// Builds query `name` on `events` and returns its rows as JSON lines; empty `name` unknown.
api::data_stream<std::string> query_as_json(const std::string& name, api::data_stream<event> events);

/// Builds query `name` on `events` ending in a sink that discards its rows (Flink's blackhole
/// connector); false if `name` is unknown.
bool query_to_blackhole(const std::string& name, api::data_stream<event> events);

} // namespace flint::nexmark
