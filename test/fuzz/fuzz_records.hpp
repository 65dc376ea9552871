#pragma once
/// The user record types the record_deserializer target reads each record as, and the corpus
/// generator writes seeds of: one field of every kind type_serializer supports, declared as a user
/// declares them (runtime/streaming/record_type.hpp).

#include "runtime/streaming/record_type.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace flint::fuzz {

enum class channel : std::uint8_t { web, app, store };
enum level : std::int16_t { low = 1, high = 7 };

struct money {
  std::int64_t cents = 0;
  std::string currency;
};
FLINT_RECORD(money, cents, currency);

/// Private members, declared inside the class.
class account {
public:
  account() = default;
  account(std::string id, std::vector<money> history)
    : id_(std::move(id)),
      history_(std::move(history)) {}
  FLINT_RECORD_MEMBERS(account, id_, history_);

private:
  std::string id_;
  std::vector<money> history_;
};

/// One field of every supported kind; records nest in it and in its containers.
struct every_kind {
  std::int32_t id = 0;
  std::uint16_t small = 0;
  char letter = 0;
  double weight = 0;
  bool paid = false;
  std::string customer;
  channel via = channel::web;
  level priority = low;
  std::optional<std::string> coupon;
  std::optional<money> discount;
  std::vector<money> items;
  std::vector<bool> flags;
  std::map<std::string, std::int32_t> counts;
  std::unordered_map<std::int64_t, std::vector<std::string>> tags;
  std::array<std::int16_t, 3> dims{};
  std::array<std::optional<money>, 2> slots;
  std::pair<std::string, money> owner;
  std::tuple<std::int8_t, std::string, std::optional<double>> misc;
  std::map<channel, account> accounts;
  money total;
};
FLINT_RECORD(every_kind, id, small, letter, weight, paid, customer, via, priority, coupon, discount,
             items, flags, counts, tags, dims, slots, owner, misc, accounts, total);

/// A record with every field set, at least one element in every container.
inline every_kind sample_every_kind() {
  every_kind r;
  r.id = -42;
  r.small = 65535;
  r.letter = 'x';
  r.weight = -1.5e300;
  r.paid = true;
  r.customer = "ada";
  r.via = channel::store;
  r.priority = high;
  r.coupon = "SPRING";
  r.discount = money{150, "EUR"};
  r.items = {money{1000, "EUR"}, money{-5, ""}};
  r.flags = {true, false, true};
  r.counts = {{"apples", 3}, {"pears", 0}};
  r.tags = {{7, {"a", "b"}}, {-1, {}}};
  r.dims = {1, -2, 32767};
  r.slots = {money{1, "CHF"}, std::nullopt};
  r.owner = {"bob", money{1, "USD"}};
  r.misc = {std::int8_t{-8}, "misc", 2.5};
  r.accounts = {{channel::app, account("acc-1", {money{2, "GBP"}})}};
  r.total = money{99999, "GBP"};
  return r;
}

} // namespace flint::fuzz
