#pragma once
/// Nexmark's source (nexmark-flink's NexmarkSource and its `datagen` table) as a Flint source:
/// an api::data_generator_source over `generate(n, config)`. Subtask i of p makes event numbers
/// i, i + p, i + 2p, ... (each subtask walks the same stretch of event time), so the set of
/// events is the same at any parallelism; its operator state is each split's next event number,
/// so a restore, at this or another parallelism, continues exactly. Timestamps are the events'
/// `dateTime`, watermarks lag it by 4 s (the DDL's `WATERMARK FOR dateTime AS dateTime -
/// INTERVAL '4' SECOND`, as Flink's bounded out-of-orderness: max − 4 s − 1 ms), per split.
///
///     auto events = nexmark::nexmark_source(env, config);   // api::data_stream<event>
///     auto bids = events.filter([](const nexmark::event& e) { return e.new_bid.has_value(); });

#include "api/data_generator_source.hpp"
#include "api/data_stream.hpp"
#include "api/stream_execution_environment.hpp"
#include "api/watermark_strategy.hpp"
#include "apps/nexmark/nexmark_generator.hpp"
#include "apps/nexmark/nexmark_model.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace flint::nexmark {

/// How long Nexmark's watermark lags the highest `dateTime` seen.
inline constexpr std::chrono::milliseconds watermark_delay{4000};

/// The source's watermark strategy: timestamps from `event::timestamp()`, watermarks 4 s behind.
inline api::watermark_strategy<event> nexmark_watermarks() {
  return api::watermark_strategy<event>::for_bounded_out_of_orderness(watermark_delay)
    .with_timestamp_assigner([](const event& e) { return e.timestamp(); });
}

/// The generator as a Flint source description (for tests and callers that pick their own
/// watermark strategy): `config.events_num` events, or without end when it is 0. A config no
/// stream can come from (tps or a proportion not positive, a negative count) throws
/// std::invalid_argument.
inline api::data_generator_source<event> nexmark_generator_source(const nexmark_config& config) {
  if (config.tps <= 0 || config.events_num < 0 || config.person_proportion <= 0
      || config.auction_proportion <= 0 || config.bid_proportion <= 0)
    throw std::invalid_argument("a Nexmark source needs tps > 0, events_num >= 0 and positive "
                                "person, auction and bid proportions");
  auto count = config.events_num > 0 ? config.events_num : api::unbounded_count;
  return api::data_generator_source<event>(
    [config](std::int64_t n) { return generate(n, config); }, count);
}

/// Nexmark's event stream at the environment's parallelism, with Nexmark's watermarks; its uid
/// is "nexmark-source", so a job makes one and splits it (filter persons, auctions, bids) as the
/// SQL views over `datagen` do.
inline api::data_stream<event> nexmark_source(api::stream_execution_environment& env,
                                              const nexmark_config& config,
                                              std::string name = "Nexmark Source") {
  auto stream =
    env.from_source(nexmark_generator_source(config), nexmark_watermarks(), std::move(name));
  stream.uid("nexmark-source");
  return stream;
}

} // namespace flint::nexmark
