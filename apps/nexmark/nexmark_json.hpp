#pragma once
/// Nexmark's events as JSON, with the field names of Nexmark's Flink DDL (`ddl_gen.sql`):
/// `{"event_type": 0|1|2, "person"|"auction"|"bid": {...}}`, times as epoch milliseconds. What
/// `flint-nexmark dump` writes one a line, and what tests read back.

#include "apps/nexmark/nexmark_model.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace flint::nexmark {

inline nlohmann::json to_json(const person& p) {
  return {{"id", p.id},       {"name", p.name},   {"emailAddress", p.email_address},
          {"creditCard", p.credit_card},           {"city", p.city},
          {"state", p.state}, {"dateTime", p.date_time}, {"extra", p.extra}};
}

inline nlohmann::json to_json(const auction& a) {
  return {{"id", a.id},
          {"itemName", a.item_name},
          {"description", a.description},
          {"initialBid", a.initial_bid},
          {"reserve", a.reserve},
          {"dateTime", a.date_time},
          {"expires", a.expires},
          {"seller", a.seller},
          {"category", a.category},
          {"extra", a.extra}};
}

inline nlohmann::json to_json(const bid& b) {
  return {{"auction", b.auction}, {"bidder", b.bidder},      {"price", b.price},
          {"channel", b.channel}, {"url", b.url},            {"dateTime", b.date_time},
          {"extra", b.extra}};
}

/// The event's object: `event_type` and the one record it holds.
inline nlohmann::json to_json(const event& e) {
  nlohmann::json j;
  j["event_type"] = static_cast<int>(e.type);
  switch (e.type) {
    case event_type::person:
      if (e.new_person)
        j["person"] = to_json(*e.new_person);
      break;
    case event_type::auction:
      if (e.new_auction)
        j["auction"] = to_json(*e.new_auction);
      break;
    case event_type::bid:
      if (e.new_bid)
        j["bid"] = to_json(*e.new_bid);
      break;
  }
  return j;
}

inline person person_from_json(const nlohmann::json& j) {
  person p;
  p.id = j.at("id").get<std::int64_t>();
  p.name = j.at("name").get<std::string>();
  p.email_address = j.at("emailAddress").get<std::string>();
  p.credit_card = j.at("creditCard").get<std::string>();
  p.city = j.at("city").get<std::string>();
  p.state = j.at("state").get<std::string>();
  p.date_time = j.at("dateTime").get<std::int64_t>();
  p.extra = j.at("extra").get<std::string>();
  return p;
}

inline auction auction_from_json(const nlohmann::json& j) {
  auction a;
  a.id = j.at("id").get<std::int64_t>();
  a.item_name = j.at("itemName").get<std::string>();
  a.description = j.at("description").get<std::string>();
  a.initial_bid = j.at("initialBid").get<std::int64_t>();
  a.reserve = j.at("reserve").get<std::int64_t>();
  a.date_time = j.at("dateTime").get<std::int64_t>();
  a.expires = j.at("expires").get<std::int64_t>();
  a.seller = j.at("seller").get<std::int64_t>();
  a.category = j.at("category").get<std::int64_t>();
  a.extra = j.at("extra").get<std::string>();
  return a;
}

inline bid bid_from_json(const nlohmann::json& j) {
  bid b;
  b.auction = j.at("auction").get<std::int64_t>();
  b.bidder = j.at("bidder").get<std::int64_t>();
  b.price = j.at("price").get<std::int64_t>();
  b.channel = j.at("channel").get<std::string>();
  b.url = j.at("url").get<std::string>();
  b.date_time = j.at("dateTime").get<std::int64_t>();
  b.extra = j.at("extra").get<std::string>();
  return b;
}

/// The event a `to_json(event)` object describes; nlohmann's exceptions (or
/// std::invalid_argument for an unknown event_type) when it is not one.
inline event event_from_json(const nlohmann::json& j) {
  event e;
  auto type = j.at("event_type").get<int>();
  switch (type) {
    case 0:
      e.type = event_type::person;
      e.new_person = person_from_json(j.at("person"));
      break;
    case 1:
      e.type = event_type::auction;
      e.new_auction = auction_from_json(j.at("auction"));
      break;
    case 2:
      e.type = event_type::bid;
      e.new_bid = bid_from_json(j.at("bid"));
      break;
    default: throw std::invalid_argument("unknown Nexmark event_type " + std::to_string(type));
  }
  return e;
}

/// One line of a dump (no newline).
inline std::string to_json_line(const event& e) { return to_json(e).dump(); }

} // namespace flint::nexmark
