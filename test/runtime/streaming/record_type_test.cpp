// User structs declared with FLINT_RECORD / FLINT_RECORD_MEMBERS: every supported field kind
// round-trips, the bytes are only the fields', and truncated or garbage bytes are refused with a
// runtime_error (never a crash, never an allocation larger than the bytes could hold).
//
// A field type the serializer cannot write fails the build. Checked by hand (ctest cannot watch a
// compile fail): uncommenting
//
//   struct with_callback {
//     std::function<void()> on_done;
//   };
//   FLINT_RECORD(with_callback, on_done);
//
// stops GCC 12 with
//   error: static assertion failed: a FLINT_RECORD field has a type type_serializer cannot
//   write: it is `Field` in check_field<Field, Record> above ...
//   In instantiation of 'struct flint::streaming::detail::check_field<std::function<void()>,
//   shop::with_callback>'
// an enum field without a fixed underlying type (`enum level { low, high };`, where reading a
// value outside its range would be undefined) with
//   error: static assertion failed: a FLINT_RECORD field's enum needs a fixed underlying type
//   (`enum e : int`) ...
// and listing fewer names than an aggregate has fields (FLINT_RECORD(money, cents)) with
//   error: only 1 name provided for structured binding ... 'shop::money' decomposes into 2
//   elements

#include "runtime/streaming/record_format.hpp"
#include "runtime/streaming/record_type.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace shop {

enum class channel : std::uint8_t { web, app, store };
enum level : std::int16_t { low = 1, high = 7 };

struct money {
  std::int64_t cents = 0;
  std::string currency;
  bool operator==(const money&) const = default;
};
FLINT_RECORD(money, cents, currency);

/// One field of every supported kind, nested records among them.
struct order {
  std::int32_t id = 0;
  std::uint16_t small = 0;
  char letter = 0;
  float ratio = 0;
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
  std::array<std::string, 2> names;
  std::pair<std::string, money> owner;
  std::tuple<std::int8_t, std::string, std::optional<double>> misc;
  money total;
  bool operator==(const order&) const = default;
};
FLINT_RECORD(order, id, small, letter, ratio, weight, paid, customer, via, priority, coupon,
             discount, items, flags, counts, tags, dims, names, owner, misc, total);

/// Private members: declared inside the class.
class account {
public:
  account() = default;
  account(std::string id, std::int64_t balance, std::vector<money> history)
    : id_(std::move(id)),
      balance_(balance),
      history_(std::move(history)) {}
  bool operator==(const account&) const = default;
  FLINT_RECORD_MEMBERS(account, id_, balance_, history_);

private:
  std::string id_;
  std::int64_t balance_ = 0;
  std::vector<money> history_;
};

/// A class template: declared inside the class as well.
template <class T>
struct boxed {
  T value{};
  std::optional<T> other;
  bool operator==(const boxed&) const = default;
  FLINT_RECORD_MEMBERS(boxed, value, other);
};

struct empty {
  bool operator==(const empty&) const = default;
};
FLINT_RECORD(empty);

order sample_order() {
  order o;
  o.id = -42;
  o.small = 65535;
  o.letter = 'x';
  o.ratio = 0.25f;
  o.weight = -1.5e300;
  o.paid = true;
  o.customer = "ada";
  o.via = channel::store;
  o.priority = high;
  o.coupon = "SPRING";
  o.discount = money{150, "EUR"};
  o.items = {money{1000, "EUR"}, money{-5, ""}, money{}};
  o.flags = {true, false, true, true};
  o.counts = {{"apples", 3}, {"", -1}, {"pears", 0}};
  o.tags = {{7, {"a", "b"}}, {-1, {}}, {1LL << 40, {"long"}}};
  o.dims = {1, -2, 32767};
  o.names = {"first", ""};
  o.owner = {"bob", money{1, "USD"}};
  o.misc = {std::int8_t{-8}, "misc", std::nullopt};
  o.total = money{99999, "GBP"};
  return o;
}

} // namespace shop

using namespace flint::streaming;

namespace {

template <class T>
std::vector<char> bytes_of(const T& value) {
  std::vector<char> out;
  type_serializer<T>::write(value, out);
  return out;
}

/// Reads `bytes` as a T both ways; both must read all of it.
template <class T>
void check_reads_back(const std::vector<char>& bytes, const T& expected) {
  byte_reader in(bytes);
  CHECK(type_serializer<T>::read(in) == expected);
  CHECK(in.at_end());
  byte_reader again(bytes);
  T reused{};
  type_serializer<T>::read_into(again, reused);
  CHECK(reused == expected);
  CHECK(again.at_end());
}

/// What reading `bytes` as a T says: "read" or the runtime_error's text. Anything else thrown
/// (bad_alloc, length_error, logic_error) fails the test.
template <class T>
std::string outcome_of(const std::vector<char>& bytes, bool into) {
  byte_reader in(bytes);
  try {
    if (into) {
      T out{};
      type_serializer<T>::read_into(in, out);
      // What was read writes again, in as many bytes as were consumed.
      CHECK(type_serializer<T>::size(out) == bytes.size() - in.remaining());
    } else {
      (void)type_serializer<T>::read(in);
    }
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "read";
}

} // namespace

TEST_CASE("a record with a field of every supported kind reads back equal") {
  static_assert(record_type<shop::order> && is_serializable_v<shop::order>);
  static_assert(!record_type<std::tuple<int>>);
  auto o = shop::sample_order();
  auto bytes = bytes_of(o);
  CHECK(bytes.size() == type_serializer<shop::order>::size(o));
  check_reads_back(bytes, o);

  // read_into over a value that already holds other things (reused storage, an optional set
  // that must be emptied, a map with other keys) still gives exactly the record written.
  auto other = shop::sample_order();
  other.coupon = std::nullopt;
  other.discount = std::nullopt;
  other.items.clear();
  other.counts = {{"only", 1}};
  other.misc = {std::int8_t{1}, "", 2.5};
  auto target = o;
  auto other_bytes = bytes_of(other);
  byte_reader other_in(other_bytes);
  type_serializer<shop::order>::read_into(other_in, target);
  CHECK(target == other);
  CHECK(other_in.at_end());

  // A default record, and records inside containers.
  check_reads_back(bytes_of(shop::order{}), shop::order{});
  std::vector<shop::order> orders{o, shop::order{}, other};
  check_reads_back(bytes_of(orders), orders);
  std::map<std::string, shop::money> by_name{{"a", {1, "X"}}, {"b", {2, "Y"}}};
  check_reads_back(bytes_of(by_name), by_name);
  std::optional<shop::order> maybe = o;
  check_reads_back(bytes_of(maybe), maybe);
}

TEST_CASE("a record writes its fields in the listed order and nothing else") {
  shop::money m{5, "EUR"};
  std::vector<char> expected(8 + 4 + 3);
  std::int64_t cents = 5;
  std::uint32_t length = 3;
  std::memcpy(expected.data(), &cents, 8);
  std::memcpy(expected.data() + 8, &length, 4);
  std::memcpy(expected.data() + 12, "EUR", 3);
  CHECK(bytes_of(m) == expected);
  // Same bytes as the tuple of its fields: a record costs no more than a tuple.
  CHECK(bytes_of(std::tuple<std::int64_t, std::string>(5, "EUR")) == expected);
  // Enums as their underlying type, bool as one byte, an optional as a tag byte then the value,
  // an array without a count, a map with one.
  CHECK(bytes_of(shop::channel::app) == std::vector<char>{1});
  CHECK(bytes_of(std::optional<std::int8_t>{}) == std::vector<char>{0});
  CHECK(bytes_of(std::optional<std::int8_t>{9}) == std::vector<char>{1, 9});
  CHECK(bytes_of(std::array<std::int8_t, 3>{4, 5, 6}) == std::vector<char>{4, 5, 6});
  CHECK(bytes_of(std::map<std::int8_t, bool>{{2, true}}) == std::vector<char>{1, 0, 0, 0, 2, 1});
  CHECK(bytes_of(shop::empty{}).empty());
  check_reads_back(bytes_of(shop::empty{}), shop::empty{});
}

TEST_CASE("records with private members and record templates round trip") {
  shop::account a("acc-1", -300, {shop::money{1, "EUR"}, shop::money{2, "CHF"}});
  check_reads_back(bytes_of(a), a);
  shop::boxed<shop::account> box{a, shop::account{}};
  check_reads_back(bytes_of(box), box);
  shop::boxed<std::int32_t> ints{3, std::nullopt};
  CHECK(bytes_of(ints).size() == 4 + 1);
  check_reads_back(bytes_of(ints), ints);
}

TEST_CASE("a record keys like Objects.hash of its fields, the same in every process") {
  shop::money m{5, "EUR"};
  auto expected = static_cast<std::int32_t>(
    31u * (31u * 1u + 5u) + static_cast<std::uint32_t>(java_string_hash("EUR", 3)));
  CHECK(key_hash(m) == expected);
  CHECK(key_hash(shop::money{5, "EUR"}) == key_hash(m));
  CHECK(key_hash(shop::channel::store) == 2);
  CHECK(key_hash(std::optional<std::int32_t>{}) == 0);
  CHECK(key_hash(std::optional<std::int32_t>{17}) == 17);
  // Map.hashCode: the order of the entries does not matter.
  std::unordered_map<std::int32_t, std::int32_t> a{{1, 2}, {3, 4}}, b{{3, 4}, {1, 2}};
  CHECK(key_hash(a) == ((1 ^ 2) + (3 ^ 4)));
  CHECK(key_hash(a) == key_hash(b));
  CHECK(key_hash(shop::sample_order()) == key_hash(shop::sample_order()));
  CHECK(key_hasher<shop::money>{}(m) == key_hasher<shop::money>{}(shop::money{5, "EUR"}));
}

TEST_CASE("a record without an operator<< prints as the tuple of its fields") {
  auto text = [](const auto& value) {
    std::string out;
    format_record(out, value);
    return out;
  };
  CHECK(text(shop::money{5, "EUR"}) == "(5,EUR)");
  CHECK(text(shop::boxed<shop::money>{{1, "X"}, std::nullopt}) == "((1,X),null)");
  CHECK(text(shop::boxed<std::map<std::string, shop::channel>>{
          {{"a", shop::channel::app}, {"b", shop::channel::store}}, std::nullopt})
        == "({a=1, b=2},null)");
  CHECK(text(std::array<std::int32_t, 2>{3, 4}) == "[3, 4]");
  CHECK(text(shop::sample_order()).starts_with("(-42,65535,x,0.25,-1.5e+300,true,ada,2,7,SPRING,"));
}

TEST_CASE("every truncation of a record's bytes is refused") {
  auto bytes = bytes_of(shop::sample_order());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::vector<char> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    CAPTURE(n);
    CHECK(outcome_of<shop::order>(prefix, false) != "read");
    CHECK(outcome_of<shop::order>(prefix, true) != "read");
  }
}

TEST_CASE("a bool or an optional's tag other than 0 or 1 is refused") {
  CHECK(outcome_of<bool>({2}, false)
        == "record holds 2 where a bool must be 0 or 1 (corrupt or mismatched record)");
  CHECK(outcome_of<std::vector<bool>>({1, 0, 0, 0, char(0xff)}, true)
        == "record holds 255 where a bool must be 0 or 1 (corrupt or mismatched record)");
  CHECK(outcome_of<std::optional<std::string>>({7}, false)
        == "record holds 7 where an optional's tag must be 0 or 1 (corrupt or mismatched record)");
  CHECK(outcome_of<std::optional<std::string>>({7}, true) != "read");
}

TEST_CASE(
  "a map claiming 2^32 - 1 entries is refused before it allocates, one repeating a key at all") {
  std::vector<char> bytes{char(0xff), char(0xff), char(0xff), char(0xff), 1, 2, 3, 4, 5};
  CHECK(outcome_of<std::map<std::int32_t, shop::money>>(bytes, false)
        == "record claims a map of 4294967295 elements of at least 16 bytes each, but 5 bytes "
           "are left (corrupt or mismatched record)");
  CHECK(outcome_of<std::unordered_map<std::string, bool>>(bytes, true)
        == "record claims a map of 4294967295 elements of at least 5 bytes each, but 5 bytes "
           "are left (corrupt or mismatched record)");
  // Two entries with one key: no writer makes those.
  std::vector<char> twice{2, 0, 0, 0, 5, 1, 5, 0};
  CHECK(outcome_of<std::map<std::int8_t, bool>>(twice, false)
        == "record holds a map whose entry 1 repeats an earlier key (corrupt or mismatched "
           "record)");
  CHECK(outcome_of<std::unordered_map<std::int8_t, bool>>(twice, true) != "read");
  // The minimum size of a record is the sum of its fields': a vector of them is checked so.
  CHECK(outcome_of<std::vector<shop::money>>(bytes, false)
        == "record claims a vector of 4294967295 elements of at least 12 bytes each, but 5 bytes "
           "are left (corrupt or mismatched record)");
}

TEST_CASE("random and mutated bytes are refused or read, never a crash") {
  std::mt19937_64 rng(27);
  auto valid = bytes_of(shop::sample_order());
  std::size_t refused = 0, read = 0;
  auto count = [&](const std::string& outcome) { ++(outcome == "read" ? read : refused); };
  for (int round = 0; round < 20000; ++round) {
    std::vector<char> bytes;
    if (round % 2 == 0) {
      // Noise of any length up to twice a real record's.
      bytes.resize(rng() % (2 * valid.size()));
      for (auto& b : bytes)
        b = static_cast<char>(rng());
    } else {
      // A real record with a few bytes changed: lengths, counts and tags go wrong in place.
      bytes = valid;
      for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips)
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    count(outcome_of<shop::order>(bytes, round % 4 < 2));
    count(outcome_of<std::vector<shop::account>>(bytes, round % 4 >= 2));
  }
  // Most noise is refused; some mutations (a changed number or character) still read.
  CHECK(refused > 20000);
  CHECK(read > 0);
}
