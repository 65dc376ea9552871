// User record types in jobs: text lines mapped to a FLINT_RECORD struct cross hash exchanges
// (local channels, then remote ones between two TaskExecutors), are keyed by a field, live in
// value, list and map state and in a keyed reduce, and reach the sink intact.

#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace flint;

namespace {

enum class channel : std::uint8_t { web, app, store };

struct purchase {
  std::string user;
  std::int64_t cents = 0;
  channel via = channel::web;
  std::optional<std::string> coupon;
  bool operator==(const purchase&) const = default;
};
FLINT_RECORD(purchase, user, cents, via, coupon);

/// A record as a key: hashed by key_hash (Objects.hash of its fields), compared with ==.
struct user_channel {
  std::string user;
  channel via = channel::web;
  bool operator==(const user_channel&) const = default;
  auto operator<=>(const user_channel&) const = default;
};
FLINT_RECORD(user_channel, user, via);

/// What the keyed process function keeps per user and emits after each purchase.
struct summary {
  std::string user;
  std::int64_t count = 0;
  std::int64_t total = 0;
  std::map<channel, std::int64_t> per_channel;
  std::optional<purchase> largest;
  std::vector<std::string> coupons;
  bool operator==(const summary&) const = default;
};
FLINT_RECORD(summary, user, count, total, per_channel, largest, coupons);

constexpr int purchases = 3000;
constexpr int users = 7;

/// "u<i%7>,<cents>,<channel>[,<coupon>]": the text a source would read.
std::vector<std::string> purchase_lines() {
  std::vector<std::string> lines;
  for (int i = 0; i < purchases; ++i) {
    auto line = "u" + std::to_string(i % users) + "," + std::to_string((i * 37) % 1000) + ","
      + std::to_string(i % 3);
    if (i % 11 == 0)
      line += ",c" + std::to_string(i);
    lines.push_back(line);
  }
  return lines;
}

purchase parse(const std::string& line) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (auto comma = line.find(','); comma != std::string::npos; comma = line.find(',', at)) {
    parts.push_back(line.substr(at, comma - at));
    at = comma + 1;
  }
  parts.push_back(line.substr(at));
  purchase p;
  p.user = parts.at(0);
  p.cents = std::stoll(parts.at(1));
  p.via = static_cast<channel>(std::stoi(parts.at(2)));
  if (parts.size() > 3)
    p.coupon = parts[3];
  return p;
}

void add(summary& s, const purchase& p) {
  s.user = p.user;
  ++s.count;
  s.total += p.cents;
  s.per_channel[p.via] += p.cents;
  if (!s.largest || p.cents > s.largest->cents)
    s.largest = p;
  if (p.coupon)
    s.coupons.push_back(*p.coupon);
}

/// Each user's summary after all purchases, computed without a job.
std::map<std::string, summary> expected_summaries() {
  std::map<std::string, summary> out;
  for (const auto& line : purchase_lines()) {
    auto p = parse(line);
    add(out[p.user], p);
  }
  return out;
}

/// The summary in a value state; the purchases in a list state; per-channel totals in a map state
/// (checked against the summary's own, so all three states must agree).
struct summarize : api::keyed_process_function<std::string, purchase, summary> {
  std::optional<api::value_state<summary>> current;
  std::optional<api::list_state<purchase>> history;
  std::optional<api::map_state<channel, std::int64_t>> per_channel;
  void open(api::keyed_context<std::string>& ctx) override {
    current.emplace(ctx.get_state<summary>("summary"));
    history.emplace(ctx.get_list_state<purchase>("history"));
    per_channel.emplace(ctx.get_map_state<channel, std::int64_t>("per_channel"));
  }
  void process_element(const purchase& p, api::keyed_context<std::string>& ctx,
                       api::collector<summary>& out) override {
    if (p.user != ctx.current_key())
      throw std::logic_error("a purchase of " + p.user + " under key " + ctx.current_key());
    auto s = current->value().value_or(summary{});
    add(s, p);
    current->update(s);
    history->add(p);
    per_channel->put(p.via, per_channel->get(p.via).value_or(0) + p.cents);
    auto kept = history->get();
    if (static_cast<std::int64_t>(kept.size()) != s.count || kept.back() != p
        || per_channel->get(p.via) != s.per_channel.at(p.via))
      throw std::logic_error("the states of " + p.user + " disagree");
    out.collect(s);
  }
};

struct record_job {
  std::shared_ptr<test::collected<summary>> summaries;
  std::shared_ptr<test::collected<purchase>> largest_per_channel;
  std::shared_ptr<test::collected<purchase>> total_per_user_channel;
  test::program program;
};

/// Lines → purchases (rebalanced over 2 subtasks) → key_by user → summaries; the same purchases
/// → key_by channel (an enum) → reduce to the largest purchase, and → key_by (user, channel) (a
/// record) → reduce to the total.
record_job purchases_job(const std::string& backend = "hashmap") {
  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", "2"}, {"state.backend.type", backend}});
  auto parsed = env.from_collection(purchase_lines()).rebalance().map([](const std::string& line) {
    return parse(line);
  });
  auto summaries =
    parsed.key_by([](const purchase& p) { return p.user; }).process<summary>(summarize{});
  auto largest =
    parsed.key_by([](const purchase& p) { return p.via; })
      .reduce([](const purchase& a, const purchase& b) { return b.cents > a.cents ? b : a; });
  auto totals = parsed.key_by([](const purchase& p) {
                        return user_channel{p.user, p.via};
                      })
                  .reduce([](const purchase& a, const purchase& b) {
                    return purchase{a.user, a.cents + b.cents, a.via, std::nullopt};
                  });
  auto into = test::collect(summaries);
  auto largest_into = test::collect(largest);
  auto totals_into = test::collect(totals);
  return {into, largest_into, totals_into, test::graphs_of(env)};
}

void check_results(const record_job& job) {
  auto expected = expected_summaries();
  // One summary per purchase; for each user every count from 1 to the last appears once, and the
  // last summary equals the one computed without a job, field by field.
  REQUIRE(job.summaries->values.size() == purchases);
  std::map<std::string, std::vector<std::int64_t>> counts;
  std::map<std::string, summary> last;
  for (const auto& s : job.summaries->values) {
    counts[s.user].push_back(s.count);
    if (s.count > last[s.user].count)
      last[s.user] = s;
  }
  // The two map subtasks interleave a user's purchases in any order: the coupons are a set.
  for (auto& [user, s] : last)
    std::sort(s.coupons.begin(), s.coupons.end());
  for (auto& [user, s] : expected)
    std::sort(s.coupons.begin(), s.coupons.end());
  CHECK(last.size() == users);
  CHECK(last == expected);
  for (auto& [user, seen] : counts) {
    std::sort(seen.begin(), seen.end());
    std::vector<std::int64_t> all(seen.size());
    std::iota(all.begin(), all.end(), 1);
    CHECK_MESSAGE(seen == all, user);
  }
  // The reduce emits the running largest purchase per channel, so its largest word per channel
  // is the channel's largest purchase (amounts do not repeat within a channel).
  std::map<channel, purchase> largest_expected;
  auto keep_larger = [](std::map<channel, purchase>& into, const purchase& p) {
    auto [it, fresh] = into.try_emplace(p.via, p);
    if (!fresh && p.cents > it->second.cents)
      it->second = p;
  };
  for (const auto& line : purchase_lines())
    keep_larger(largest_expected, parse(line));
  REQUIRE(job.largest_per_channel->values.size() == purchases);
  std::map<channel, purchase> largest_seen;
  for (const auto& p : job.largest_per_channel->values)
    keep_larger(largest_seen, p);
  CHECK(largest_seen.size() == 3);
  CHECK(largest_seen == largest_expected);

  // Keyed by a record: the running total per (user, channel); the largest is the final one.
  std::map<user_channel, std::int64_t> totals_expected, totals_seen;
  for (const auto& line : purchase_lines()) {
    auto p = parse(line);
    totals_expected[{p.user, p.via}] += p.cents;
  }
  REQUIRE(job.total_per_user_channel->values.size() == purchases);
  for (const auto& p : job.total_per_user_channel->values) {
    auto& seen = totals_seen[{p.user, p.via}];
    seen = std::max(seen, p.cents);
  }
  CHECK(totals_seen.size() == users * 3);
  CHECK(totals_seen == totals_expected);
}

} // namespace

TEST_CASE("a user struct crosses local channels, is keyed by a field and lives in keyed state") {
  auto job = purchases_job();
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(job.program.stream, job.program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  check_results(job);
  test::check_resources_released(cluster);
}

TEST_CASE("a user struct lives in RocksDB keyed state as its bytes") {
  auto job = purchases_job("rocksdb");
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(job.program.stream, job.program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  check_results(job);
  test::check_resources_released(cluster);
}

TEST_CASE("a user struct crosses remote channels between two TaskExecutors") {
  auto job = purchases_job();
  streaming::local_cluster_options options;
  options.task_managers = 2;
  options.slots_per_task_manager = 1;
  options.remote_channels = true;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(job.program.stream, job.program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  check_results(job);
  CHECK(test::remote_connections(cluster.streaming(0))
          + test::remote_connections(cluster.streaming(1))
        > 0);
  test::check_resources_released(cluster);
}
