#pragma once
/// Nexmark's events (nexmark-flink's Person, Auction, Bid and Event), as Flint records: the
/// field names follow Nexmark's Flink DDL (`dateTime`, `emailAddress`, `creditCard`, `itemName`,
/// `initialBid`, ...) in snake_case; times are epoch milliseconds.

#include "runtime/streaming/record_type.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace flint::nexmark {

struct person {
  std::int64_t id = 0;
  std::string name;
  std::string email_address;
  std::string credit_card;
  std::string city;
  std::string state;
  std::int64_t date_time = 0;
  std::string extra;
  bool operator==(const person&) const = default;
};
FLINT_RECORD(person, id, name, email_address, credit_card, city, state, date_time, extra);

struct auction {
  std::int64_t id = 0;
  std::string item_name;
  std::string description;
  std::int64_t initial_bid = 0;
  std::int64_t reserve = 0;
  std::int64_t date_time = 0;
  std::int64_t expires = 0;
  std::int64_t seller = 0;
  std::int64_t category = 0;
  std::string extra;
  bool operator==(const auction&) const = default;
};
FLINT_RECORD(auction, id, item_name, description, initial_bid, reserve, date_time, expires, seller,
             category, extra);

struct bid {
  std::int64_t auction = 0;
  std::int64_t bidder = 0;
  std::int64_t price = 0;
  std::string channel;
  std::string url;
  std::int64_t date_time = 0;
  std::string extra;
  bool operator==(const bid&) const = default;
};
FLINT_RECORD(bid, auction, bidder, price, channel, url, date_time, extra);

/// Nexmark's Event: exactly one of person, auction and bid, as `event_type` says.
enum class event_type : std::int32_t { person = 0, auction = 1, bid = 2 };

struct event {
  event_type type = event_type::bid;
  std::optional<nexmark::person> new_person;
  std::optional<nexmark::auction> new_auction;
  std::optional<nexmark::bid> new_bid;
  /// The event's time (its person's, auction's or bid's date_time).
  std::int64_t timestamp() const {
    switch (type) {
      case event_type::person: return new_person ? new_person->date_time : 0;
      case event_type::auction: return new_auction ? new_auction->date_time : 0;
      case event_type::bid: return new_bid ? new_bid->date_time : 0;
    }
    return 0;
  }
  bool operator==(const event&) const = default;
};
FLINT_RECORD(event, type, new_person, new_auction, new_bid);

} // namespace flint::nexmark
