#pragma once
/// Nexmark's event generator (nexmark-flink's GeneratorConfig, NexmarkGenerator and the
/// Person/Auction/Bid/Price/Strings generators), as a pure function of the event number:
/// `generate(n, config)` is the n-th event of the stream, so any source subtask can make its own
/// share of the event numbers and the set of events never depends on the parallelism.
///
/// Event n is a Person when n mod 50 is 0, an Auction when it is 1-3, a Bid otherwise (the
/// proportions 1/3/46 of nexmark.yaml); its time is `base_time + n * 1e6 / tps` microseconds,
/// truncated to milliseconds. Ids start at 1000, categories are 10-14; bids go to hot auctions
/// half the time and to hot bidders three times in four, auctions to hot sellers three times in
/// four; `extra` pads each record to the average sizes (200 / 500 / 100 bytes, Nexmark's own
/// size estimates). Each event draws from its own random stream, seeded from (seed, event
/// number) — the values are not Java's, the distributions are (docs/nexmark.md).

#include "apps/nexmark/nexmark_model.hpp"

#include <cstdint>

namespace flint::nexmark {

/// Nexmark's GeneratorConfig/NexmarkConfiguration, the knobs a run may set; the defaults are
/// nexmark-flink's (with `tps` at the V1 suite's 10 M).
struct nexmark_config {
  /// Events per second of event time (`nexmark.tps`, the source's `first-event.rate`).
  std::int64_t tps = 10'000'000;
  /// Events in the stream, numbers [0, events_num); 0: without end (`nexmark.events.num`).
  std::int64_t events_num = 0;
  /// Seeds every event's random stream: the same seed, the same events.
  std::uint64_t seed = 0;
  /// Event time of event 0, epoch milliseconds (Nexmark takes the wall clock at job start; a
  /// fixed default keeps runs reproducible): 2026-01-01T00:00:00Z.
  std::int64_t base_time = 1'767'225'600'000;

  int person_proportion = 1;
  int auction_proportion = 3;
  int bid_proportion = 46;

  int avg_person_byte_size = 200;
  int avg_auction_byte_size = 500;
  int avg_bid_byte_size = 100;

  /// One bid in `hot_auction_ratio` goes to a random in-flight auction, the others to the hot
  /// one; likewise bidders (of bids) and sellers (of auctions).
  int hot_auction_ratio = 2;
  int hot_bidders_ratio = 4;
  int hot_sellers_ratio = 4;

  /// Auctions a bid may pick from (the latest ones), and people a bid or auction may pick from.
  int num_in_flight_auctions = 100;
  int num_active_people = 1000;

  /// nexmark-flink's BidGenerator adds FIRST_PERSON_ID to `bidder` twice (bidders start at
  /// 2000); kept by default so that results match Nexmark's, off for the intended ids.
  bool double_bidder_offset = true;

  int total_proportion() const noexcept {
    return person_proportion + auction_proportion + bid_proportion;
  }
  /// The event time of event `event_number`, epoch milliseconds.
  std::int64_t timestamp_for_event(std::int64_t event_number) const noexcept;
};

inline constexpr std::int64_t first_person_id = 1000;
inline constexpr std::int64_t first_auction_id = 1000;
inline constexpr std::int64_t first_category_id = 10;
inline constexpr int num_categories = 5;

/// What event `event_number` is (person, auction or bid), from its place in the proportions.
event_type event_type_of(std::int64_t event_number, const nexmark_config& config) noexcept;

/// The event numbered `event_number` (>= 0) of the stream `config` describes; a pure function.
event generate(std::int64_t event_number, const nexmark_config& config);

/// The last person id created up to event `event_number`, without FIRST_PERSON_ID (the event's
/// own when it makes a person); Nexmark's PersonGenerator.lastBase0PersonId.
std::int64_t last_base0_person_id(std::int64_t event_number, const nexmark_config& config) noexcept;
/// The last auction id created up to event `event_number`, without FIRST_AUCTION_ID;
/// Nexmark's AuctionGenerator.lastBase0AuctionId.
std::int64_t last_base0_auction_id(std::int64_t event_number,
                                   const nexmark_config& config) noexcept;

/// Nexmark's own size estimate of a record (what `extra` pads to the average): person 8 +
/// its strings; auction 8 + name + description + 5 × 8; bid 4 × 8; each plus `extra`.
std::int64_t estimated_size(const event& e) noexcept;

} // namespace flint::nexmark
