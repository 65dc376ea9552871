/// `nexmark.so --query qN [--sink blackhole|FILE] [--events N] [--tps T] [--seed S] [--rate R]`:
/// one of
/// Nexmark's queries (apps/nexmark/nexmark_queries.hpp: q0 q1 q2 q3 q4 q5 q7 q8 q11) over
/// Nexmark's generated events as a job library: `flint run build/jobs/nexmark.so --query q5
/// --events 10000000 --sink out.json`. The rows go to a sink that discards them (Flink's
/// blackhole connector, the default) or to FILE as JSON lines with the SQL's column names;
/// without --events the source never ends; --rate paces it to R events per second of wall time
/// (for failover tests; unpaced by default, as Nexmark's).

#include "api/job_entry.hpp"
#include "apps/nexmark/nexmark_queries.hpp"
#include "apps/nexmark/nexmark_source.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr const char* usage =
  "nexmark --query q0|q1|q2|q3|q4|q5|q7|q8|q11 [--sink blackhole|FILE] [--events N] [--tps T] "
  "[--seed S] [--rate R]";

std::int64_t number(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    auto v = std::stoll(text, &used);
    if (used == text.size() && v >= 0)
      return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(flag + " takes a number >= 0, not '" + text + "'; usage: " + usage);
}

/// nexmark_source at `rate` events per second of wall time.
flint::api::data_stream<flint::nexmark::event> paced_source(
  flint::api::stream_execution_environment& env, const flint::nexmark::nexmark_config& config,
  std::int64_t rate) {
  flint::api::data_generator_source<flint::nexmark::event> source(
    [config](std::int64_t n) { return flint::nexmark::generate(n, config); },
    config.events_num > 0 ? config.events_num : flint::api::unbounded_count,
    flint::api::rate_limiter_strategy::per_second(static_cast<double>(rate)));
  auto stream = env.from_source(source, flint::nexmark::nexmark_watermarks(), "Nexmark Source");
  stream.uid("nexmark-source");
  return stream;
}

void nexmark_main(flint::api::job_context& ctx) {
  std::string query;
  std::string sink = "blackhole";
  flint::nexmark::nexmark_config config;
  std::int64_t rate = 0;
  const auto& args = ctx.args();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& flag = args[i];
    if (i + 1 >= args.size())
      throw std::invalid_argument(flag + " needs a value; usage: " + usage);
    const auto& value = args[++i];
    if (flag == "--query")
      query = value;
    else if (flag == "--sink")
      sink = value;
    else if (flag == "--events")
      config.events_num = number(flag, value);
    else if (flag == "--tps")
      config.tps = std::max<std::int64_t>(1, number(flag, value));
    else if (flag == "--rate")
      rate = number(flag, value);
    else if (flag == "--seed")
      config.seed = static_cast<std::uint64_t>(number(flag, value));
    else
      throw std::invalid_argument("unknown flag " + flag + "; usage: " + usage);
  }
  const auto& names = flint::nexmark::query_names();
  if (std::find(names.begin(), names.end(), query) == names.end())
    throw std::invalid_argument("unknown or missing --query '" + query + "'; usage: " + usage);

  auto events = rate > 0 ? paced_source(ctx.env(), config, rate)
                         : flint::nexmark::nexmark_source(ctx.env(), config);
  if (sink == "blackhole")
    flint::nexmark::query_to_blackhole(query, events);
  else
    flint::nexmark::query_as_json(query, events).write_as_text(sink).uid("nexmark-sink");
  ctx.set_job_name("Nexmark " + query);
}

} // namespace

FLINT_JOB_ENTRY(nexmark_main)
