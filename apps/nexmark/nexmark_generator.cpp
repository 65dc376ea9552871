#include "apps/nexmark/nexmark_generator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flint::nexmark {

namespace {

constexpr std::uint64_t golden_gamma = 0x9e3779b97f4a7c15ULL;

constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// SplitMix64, the generator behind Java's SplittableRandom, in the calls Nexmark makes of it.
class random_stream {
public:
  explicit random_stream(std::uint64_t seed) noexcept : state_(seed) {}
  /// The stream of event `event_number` under `seed`: its start hashed from both, so streams of
  /// neighbouring events do not overlap.
  static random_stream for_event(std::uint64_t seed, std::int64_t event_number) noexcept {
    return random_stream(
      mix64(mix64(seed + golden_gamma) + static_cast<std::uint64_t>(event_number)));
  }
  std::uint64_t next_u64() noexcept { return mix64(state_ += golden_gamma); }
  /// Uniform in [0, bound), bound > 0 (multiply-shift; the bias is below 2^-32 × bound).
  std::int32_t next_int(std::int32_t bound) noexcept {
    auto x = next_u64() >> 32;
    return static_cast<std::int32_t>((x * static_cast<std::uint64_t>(bound)) >> 32);
  }
  /// Nexmark's LongGenerator.nextLong: uniform in [0, n), n > 0.
  std::int64_t next_long(std::int64_t n) noexcept {
    if (n < INT32_MAX)
      return next_int(static_cast<std::int32_t>(n));
    return static_cast<std::int64_t>(next_u64() % static_cast<std::uint64_t>(n));
  }
  /// Uniform in [0, 1).
  double next_double() noexcept {
    return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
  }

private:
  std::uint64_t state_;
};

constexpr int min_string_length = 3;
constexpr int person_id_lead = 10;
constexpr int auction_id_lead = 10;
constexpr int hot_seller_ratio = 100;
constexpr int hot_auction_ratio = 100;
constexpr int hot_bidder_ratio = 100;
constexpr int hot_channels_ratio = 2;
constexpr int channels_number = 10'000;
constexpr std::size_t reusable_extra_length = 1024 * 1024;

constexpr std::array<std::string_view, 6> us_states{"AZ", "CA", "ID", "OR", "WA", "WY"};
constexpr std::array<std::string_view, 10> us_cities{
  "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
  "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
constexpr std::array<std::string_view, 11> first_names{
  "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"};
constexpr std::array<std::string_view, 9> last_names{
  "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"};
constexpr std::array<std::string_view, 4> hot_channels{"Google", "Facebook", "Baidu", "Apple"};

/// One of `items`, uniformly.
template <class Items>
const auto& pick(random_stream& r, const Items& items) {
  return items[static_cast<std::size_t>(r.next_int(static_cast<std::int32_t>(items.size())))];
}

/// StringsGenerator.nextString: 3 to max_length − 1 letters, one in 13 `special`, trimmed of
/// spaces at both ends.
std::string next_string(random_stream& r, int max_length, char special = ' ') {
  auto len = min_string_length + r.next_int(max_length - min_string_length);
  std::string s;
  s.reserve(static_cast<std::size_t>(len));
  for (int i = 0; i < len; ++i)
    s.push_back(r.next_int(13) == 0 ? special
                                    : static_cast<char>('a' + r.next_int(26)));
  auto first = s.find_first_not_of(' ');
  if (first == std::string::npos)
    return {};
  auto last = s.find_last_not_of(' ');
  return s.substr(first, last - first + 1);
}

/// The strings Nexmark makes once per process (from an unseeded random there; from a fixed
/// seed here): the 1 MiB text `extra` is cut from, the four hot channels' URLs and the URLs of
/// the 10,000 other channels.
struct static_tables {
  std::string extra_text;
  std::array<std::string, 4> hot_urls;
  std::vector<std::string> channel_names;
  std::vector<std::string> channel_urls;
};

std::string base_url(random_stream& r) {
  std::string url = "https://www.nexmark.com/";
  for (int i = 0; i < 3; ++i) {
    url += next_string(r, 5, '_');
    url += '/';
  }
  url += "item.htm?query=1";
  return url;
}

/// Java's Math.abs(Integer.reverse(i)), Integer.MIN_VALUE staying negative.
std::int32_t abs_reversed_bits(std::int32_t i) {
  auto u = static_cast<std::uint32_t>(i);
  std::uint32_t v = 0;
  for (int b = 0; b < 32; ++b)
    v |= ((u >> b) & 1U) << (31 - b);
  auto s = static_cast<std::int32_t>(v);
  return s < 0 && s != INT32_MIN ? -s : s;
}

static_tables build_tables() {
  static_tables t;
  random_stream r(mix64(0x6e65786d61726bULL)); // "nexmark"
  t.extra_text.resize(reusable_extra_length);
  for (auto& c : t.extra_text)
    c = static_cast<char>('a' + r.next_int(26));
  for (auto& url : t.hot_urls)
    url = base_url(r);
  t.channel_names.reserve(channels_number);
  t.channel_urls.reserve(channels_number);
  for (std::int32_t i = 0; i < channels_number; ++i) {
    auto url = base_url(r);
    if (r.next_int(10) > 0)
      url += "&channel_id=" + std::to_string(abs_reversed_bits(i));
    t.channel_names.push_back("channel-" + std::to_string(i));
    t.channel_urls.push_back(std::move(url));
  }
  return t;
}

const static_tables& tables() {
  static const static_tables t = build_tables();
  return t;
}

/// StringsGenerator.nextExactString: a random cut of the reusable text.
std::string next_exact_string(random_stream& r, int length) {
  const auto& text = tables().extra_text;
  auto offset = r.next_int(static_cast<std::int32_t>(text.size()) - length);
  return text.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}

/// StringsGenerator.nextExtra: a string making current_size + its length desired_average on
/// average (uniform within ±20% of the gap).
std::string next_extra(random_stream& r, std::int64_t current_size, int desired_average) {
  if (current_size > desired_average)
    return {};
  auto gap = static_cast<int>(desired_average - current_size);
  auto delta = static_cast<int>(std::lround(gap * 0.2));
  auto size = gap - delta + (delta == 0 ? 0 : r.next_int(2 * delta));
  return next_exact_string(r, size);
}

/// PriceGenerator.nextPrice: 10^(6u) × 100 rounded, from 100 to 10^8.
std::int64_t next_price(random_stream& r) {
  // 10^x as e^(x ln 10): the same distribution, cheaper than pow.
  constexpr double ln10 = 2.302585092994045684;
  return std::llround(std::exp(r.next_double() * 6.0 * ln10) * 100.0);
}

/// PersonGenerator.nextBase0PersonId: one of the active people, or up to 10 not yet created.
std::int64_t next_base0_person_id(std::int64_t n, random_stream& r, const nexmark_config& c) {
  auto num_people = last_base0_person_id(n, c) + 1;
  auto active = std::min<std::int64_t>(num_people, c.num_active_people);
  auto k = r.next_long(active + person_id_lead);
  return num_people - active + k;
}

/// AuctionGenerator.nextBase0AuctionId: one of the in-flight auctions, or up to 10 ahead.
std::int64_t next_base0_auction_id(std::int64_t n, random_stream& r, const nexmark_config& c) {
  auto max_auction = last_base0_auction_id(n, c);
  auto min_auction = std::max<std::int64_t>(max_auction - c.num_in_flight_auctions, 0);
  return min_auction + r.next_long(max_auction - min_auction + 1 + auction_id_lead);
}

person next_person(std::int64_t n, random_stream& r, std::int64_t timestamp,
                   const nexmark_config& c) {
  person p;
  p.id = last_base0_person_id(n, c) + first_person_id;
  p.name = pick(r, first_names);
  p.name += ' ';
  p.name += pick(r, last_names);
  p.email_address = next_string(r, 7) + "@" + next_string(r, 5) + ".com";
  p.credit_card.reserve(19);
  for (int i = 0; i < 4; ++i) {
    if (i > 0)
      p.credit_card += ' ';
    auto group = std::to_string(r.next_int(10'000));
    p.credit_card.append(4 - group.size(), '0');
    p.credit_card += group;
  }
  p.city = pick(r, us_cities);
  p.state = pick(r, us_states);
  p.date_time = timestamp;
  auto size = 8 + p.name.size() + p.email_address.size() + p.credit_card.size() + p.city.size()
    + p.state.size();
  p.extra = next_extra(r, static_cast<std::int64_t>(size), c.avg_person_byte_size);
  return p;
}

/// AuctionGenerator.nextAuctionLengthMs: uniform in [1, 2 × the event time until
/// num_in_flight_auctions more auctions exist].
std::int64_t next_auction_length_ms(std::int64_t n, random_stream& r, std::int64_t timestamp,
                                    const nexmark_config& c) {
  auto events_for_auctions = static_cast<std::int64_t>(c.num_in_flight_auctions)
    * c.total_proportion() / c.auction_proportion;
  auto horizon = c.timestamp_for_event(n + events_for_auctions) - timestamp;
  return 1 + r.next_long(std::max<std::int64_t>(horizon * 2, 1));
}

auction next_auction(std::int64_t n, random_stream& r, std::int64_t timestamp,
                     const nexmark_config& c) {
  auction a;
  a.id = last_base0_auction_id(n, c) + first_auction_id;
  if (r.next_int(c.hot_sellers_ratio) > 0)
    a.seller = (last_base0_person_id(n, c) / hot_seller_ratio) * hot_seller_ratio;
  else
    a.seller = next_base0_person_id(n, r, c);
  a.seller += first_person_id;
  a.category = first_category_id + r.next_int(num_categories);
  a.initial_bid = next_price(r);
  a.date_time = timestamp;
  a.expires = timestamp + next_auction_length_ms(n, r, timestamp, c);
  a.item_name = next_string(r, 20);
  a.description = next_string(r, 100);
  a.reserve = a.initial_bid + next_price(r);
  auto size = 8 + a.item_name.size() + a.description.size() + 8 + 8 + 8 + 8 + 8;
  a.extra = next_extra(r, static_cast<std::int64_t>(size), c.avg_auction_byte_size);
  return a;
}

bid next_bid(std::int64_t n, random_stream& r, std::int64_t timestamp, const nexmark_config& c) {
  bid b;
  if (r.next_int(c.hot_auction_ratio) > 0)
    b.auction = (last_base0_auction_id(n, c) / hot_auction_ratio) * hot_auction_ratio;
  else
    b.auction = next_base0_auction_id(n, r, c);
  b.auction += first_auction_id;
  // The second person of the batch, so that hot bidders and hot sellers differ.
  if (r.next_int(c.hot_bidders_ratio) > 0)
    b.bidder = (last_base0_person_id(n, c) / hot_bidder_ratio) * hot_bidder_ratio + 1;
  else
    b.bidder = next_base0_person_id(n, r, c);
  b.bidder += first_person_id;
  b.price = next_price(r);
  const auto& t = tables();
  if (r.next_int(hot_channels_ratio) > 0) {
    auto i = static_cast<std::size_t>(r.next_int(static_cast<std::int32_t>(hot_channels.size())));
    b.channel = hot_channels[i];
    b.url = t.hot_urls[i];
  } else {
    auto i = static_cast<std::size_t>(r.next_int(channels_number));
    b.channel = t.channel_names[i];
    b.url = t.channel_urls[i];
  }
  if (c.double_bidder_offset)
    b.bidder += first_person_id;
  b.date_time = timestamp;
  b.extra = next_extra(r, 8 + 8 + 8 + 8, c.avg_bid_byte_size);
  return b;
}

} // namespace

std::int64_t nexmark_config::timestamp_for_event(std::int64_t event_number) const noexcept {
  // n × 1e6 / tps µs in 128 bits (no overflow for any event number), then to milliseconds.
  auto us = static_cast<__int128>(event_number) * 1'000'000 / tps;
  return base_time + static_cast<std::int64_t>(us / 1000);
}

event_type event_type_of(std::int64_t event_number, const nexmark_config& config) noexcept {
  auto rem = event_number % config.total_proportion();
  if (rem < config.person_proportion)
    return event_type::person;
  if (rem < config.person_proportion + config.auction_proportion)
    return event_type::auction;
  return event_type::bid;
}

std::int64_t last_base0_person_id(std::int64_t event_number, const nexmark_config& c) noexcept {
  auto epoch = event_number / c.total_proportion();
  auto offset = event_number % c.total_proportion();
  if (offset >= c.person_proportion)
    offset = c.person_proportion - 1;
  return epoch * c.person_proportion + offset;
}

std::int64_t last_base0_auction_id(std::int64_t event_number, const nexmark_config& c) noexcept {
  auto epoch = event_number / c.total_proportion();
  auto offset = event_number % c.total_proportion();
  if (offset < c.person_proportion) {
    --epoch;
    offset = c.auction_proportion - 1;
  } else if (offset >= c.person_proportion + c.auction_proportion) {
    offset = c.auction_proportion - 1;
  } else {
    offset -= c.person_proportion;
  }
  return epoch * c.auction_proportion + offset;
}

event generate(std::int64_t event_number, const nexmark_config& config) {
  auto r = random_stream::for_event(config.seed, event_number);
  auto timestamp = config.timestamp_for_event(event_number);
  event e;
  e.type = event_type_of(event_number, config);
  switch (e.type) {
    case event_type::person:
      e.new_person = next_person(event_number, r, timestamp, config);
      break;
    case event_type::auction:
      e.new_auction = next_auction(event_number, r, timestamp, config);
      break;
    case event_type::bid:
      e.new_bid = next_bid(event_number, r, timestamp, config);
      break;
  }
  return e;
}

std::int64_t estimated_size(const event& e) noexcept {
  if (e.new_person) {
    const auto& p = *e.new_person;
    return static_cast<std::int64_t>(8 + p.name.size() + p.email_address.size()
                                     + p.credit_card.size() + p.city.size() + p.state.size()
                                     + p.extra.size());
  }
  if (e.new_auction) {
    const auto& a = *e.new_auction;
    return static_cast<std::int64_t>(8 + a.item_name.size() + a.description.size() + 5 * 8
                                     + a.extra.size());
  }
  if (e.new_bid)
    return static_cast<std::int64_t>(4 * 8 + e.new_bid->extra.size());
  return 0;
}

} // namespace flint::nexmark
