// Two-input operators: connect with co_map, a keyed co-process function with state and timers
// shared by both inputs, and the interval join (bounds, exclusive bounds, late data to side
// outputs) — through a two-input harness and end to end, at -p 1, 2 and 4 on local and remote
// channels, the join's result equal to a nested loop over the inputs.

#include "operator_test_harness.hpp"
#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace flint;
using namespace std::chrono_literals;

namespace {

struct order {
  std::int64_t user = 0;
  std::int64_t at = 0;
  std::int64_t id = 0;
  bool operator==(const order&) const = default;
};
FLINT_RECORD(order, user, at, id);

struct payment {
  std::int64_t user = 0;
  std::int64_t at = 0;
  std::int64_t id = 0;
  bool operator==(const payment&) const = default;
};
FLINT_RECORD(payment, user, at, id);

/// (order id, payment id, joined timestamp)
using joined = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

struct pair_ids : api::process_join_function<order, payment, joined> {
  void process_element(const order& o, const payment& p, api::interval_join_context& ctx,
                       api::collector<joined>& out) override {
    if (ctx.left_timestamp() != o.at || ctx.right_timestamp() != p.at)
      throw std::logic_error("join context timestamps differ from the records'");
    out.collect({o.id, p.id, ctx.timestamp()});
  }
};

using join_harness = streaming::test::two_input_test_harness<order, payment, joined>;

std::unique_ptr<streaming::two_input_operator<order, payment>> make_join(
  join_harness& h, std::int64_t lower, std::int64_t upper, std::string left_late = {},
  std::string right_late = {}) {
  streaming::interval_join_bounds bounds{lower, upper, std::move(left_late), std::move(right_late)};
  return std::make_unique<streaming::interval_join_operator<std::int64_t, order, payment, joined>>(
    std::make_unique<pair_ids>(), [](const order& o) { return o.user; },
    [](const payment& p) { return p.user; }, bounds, h.context(), h.make_output());
}

std::set<joined> as_set(const std::vector<streaming::test::stamped<joined>>& records) {
  std::set<joined> out;
  for (const auto& r : records) {
    CHECK(r.timestamp == std::optional<std::int64_t>(std::get<2>(r.value)));
    out.insert(r.value);
  }
  return out;
}

} // namespace

TEST_CASE("the interval join pairs records of a key within [lower, upper], bounds inclusive") {
  join_harness h;
  h.open(make_join(h, -5, 10));
  h.process_element1({1, 100, 1}, 100);
  h.process_element2({1, 95, 10}, 95);  // at the lower bound
  h.process_element2({1, 110, 11}, 110); // at the upper bound
  h.process_element2({1, 111, 12}, 111); // past it
  h.process_element2({1, 94, 13}, 94);   // before the lower bound
  h.process_element2({2, 100, 14}, 100); // another key
  h.process_element1({1, 101, 2}, 101);  // a later left record finds the buffered rights
  CHECK(as_set(h.take_records())
        == std::set<joined>{{1, 10, 100}, {1, 11, 110}, {2, 11, 110}, {2, 12, 111}});
}

TEST_CASE("exclusive bounds move in by one") {
  join_harness h;
  h.open(make_join(h, -5 + 1, 10 - 1));
  h.process_element1({1, 100, 1}, 100);
  h.process_element2({1, 95, 10}, 95);
  h.process_element2({1, 110, 11}, 110);
  h.process_element2({1, 96, 12}, 96);
  CHECK(as_set(h.take_records()) == std::set<joined>{{1, 12, 100}});
}

TEST_CASE("records behind the watermark are late: counted, and sent to each side's late output") {
  join_harness h;
  std::vector<streaming::test::stamped<order>> late_orders;
  std::vector<streaming::test::stamped<payment>> late_payments;
  h.capture_side_output("late-orders", late_orders);
  h.capture_side_output("late-payments", late_payments);
  h.open(make_join(h, 0, 10, "late-orders", "late-payments"));
  h.process_watermark(50);
  h.process_element1({1, 49, 1}, 49);
  h.process_element2({1, 40, 2}, 40);
  h.process_element1({1, 50, 3}, 50); // at the watermark: in time
  CHECK(h.op().late_records_dropped() == 2);
  REQUIRE(late_orders.size() == 1);
  CHECK(late_orders[0].value.id == 1);
  REQUIRE(late_payments.size() == 1);
  CHECK(late_payments[0].value.id == 2);
  CHECK(h.emitted().watermarks == std::vector<std::int64_t>{50});
}

TEST_CASE("buffers are cleaned once the watermark passes the last time they can join") {
  join_harness h;
  h.open(make_join(h, -5, 10));
  h.process_element1({1, 100, 1}, 100);
  h.process_element2({1, 200, 2}, 200);
  // Left at 100 cleans at 110, right at 200 at 205.
  h.process_watermark(109);
  h.process_element2({1, 109, 3}, 109); // still joins the left at 100
  CHECK(as_set(h.take_records()) == std::set<joined>{{1, 3, 109}});
  h.process_watermark(205);
  // The right at 200 went at 205 (200 - lower): a left at 205, in time, would have joined it
  // ([200, 215]) had its bucket stayed.
  h.process_element1({1, 205, 4}, 205);
  CHECK(h.take_records().empty());
}

namespace {

std::vector<order> orders_of(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<order> out;
  for (int i = 0; i < n; ++i)
    out.push_back({static_cast<std::int64_t>(rng() % 17), 1000 + i * 3 + static_cast<std::int64_t>(rng() % 5), i});
  return out;
}

std::vector<payment> payments_of(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<payment> out;
  for (int i = 0; i < n; ++i)
    out.push_back({static_cast<std::int64_t>(rng() % 17), 1000 + i * 2 + static_cast<std::int64_t>(rng() % 7), 100000 + i});
  return out;
}

void run_interval_join(int parallelism, int task_managers) {
  auto orders = orders_of(1, 3000);
  auto payments = payments_of(2, 4500);
  api::stream_execution_environment env(api::configuration{
    {"parallelism.default", std::to_string(parallelism)}, {"pipeline.auto-watermark-interval", "5 ms"}});
  auto o = env.from_collection(orders).assign_timestamps_and_watermarks(
    api::watermark_strategy<order>::for_monotonous_timestamps().with_timestamp_assigner(
      [](const order& x) { return x.at; }));
  auto p = env.from_collection(payments).assign_timestamps_and_watermarks(
    api::watermark_strategy<payment>::for_monotonous_timestamps().with_timestamp_assigner(
      [](const payment& x) { return x.at; }));
  auto out = o.key_by([](const order& x) { return x.user; })
               .interval_join(p.key_by([](const payment& x) { return x.user; }))
               .between(-20ms, 30ms)
               .process<joined>(pair_ids{});
  auto into = test::collect(out);
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.task_managers = task_managers;
  options.slots_per_task_manager = (parallelism + task_managers - 1) / task_managers;
  options.remote_channels = task_managers > 1;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);

  // Monotonous timestamps per source: nothing is late, so the join is the nested loop's.
  std::multiset<joined> want;
  for (const auto& a : orders)
    for (const auto& b : payments)
      if (a.user == b.user && b.at >= a.at - 20 && b.at <= a.at + 30)
        want.insert({a.id, b.id, std::max(a.at, b.at)});
  std::multiset<joined> got(into->values.begin(), into->values.end());
  CHECK(got.size() == want.size());
  CHECK(got == want);
  test::check_resources_released(cluster);
}

} // namespace

TEST_CASE("an interval join over local channels equals the nested loop") {
  run_interval_join(1, 1);
  run_interval_join(2, 1);
}

TEST_CASE("an interval join over remote channels equals the nested loop") {
  run_interval_join(4, 2);
}

namespace {

struct user_name {
  std::int64_t user = 0;
  std::string name;
};
FLINT_RECORD(user_name, user, name);

/// Names arrive on input 1, clicks on input 2 (maybe before their user's name): a click is
/// emitted with the name once both are there; an event-time timer 10 ms after each click emits
/// a reminder, so timers and state serve both inputs.
struct enrich
  : api::keyed_co_process_function<std::int64_t, user_name, order, std::string> {
  std::optional<api::value_state<std::string>> name;
  std::optional<api::list_state<std::int64_t>> waiting;
  void open(api::keyed_context<std::int64_t>& ctx) override {
    name.emplace(ctx.get_state<std::string>("name"));
    waiting.emplace(ctx.get_list_state<std::int64_t>("waiting"));
  }
  void process_element1(const user_name& u, api::keyed_context<std::int64_t>&,
                        api::collector<std::string>& out) override {
    name->update(u.name);
    for (auto id : waiting->get())
      out.collect(u.name + ":" + std::to_string(id));
    waiting->clear();
  }
  void process_element2(const order& o, api::keyed_context<std::int64_t>& ctx,
                        api::collector<std::string>& out) override {
    if (auto n = name->value())
      out.collect(*n + ":" + std::to_string(o.id));
    else
      waiting->add(o.id);
    ctx.timer_service().register_event_time_timer(o.at + 10);
  }
  void on_timer(std::int64_t t, api::keyed_context<std::int64_t>& ctx,
                api::collector<std::string>& out) override {
    out.collect("timer:" + std::to_string(ctx.current_key()) + "@" + std::to_string(t));
  }
};

} // namespace

TEST_CASE("connect: co_map and a keyed co-process function with shared state and timers") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  std::vector<std::int64_t> numbers{1, 2, 3};
  std::vector<std::string> words{"a", "b"};
  auto mapped = env.from_collection(numbers).connect(env.from_collection(words)).map(
    [](const std::int64_t& n) { return "n" + std::to_string(n); },
    [](const std::string& w) { return "w" + w; });
  auto mapped_into = test::collect(mapped);

  std::vector<user_name> names;
  for (std::int64_t u = 0; u < 5; ++u)
    names.push_back({u, "user" + std::to_string(u)});
  auto clicks = orders_of(7, 200);
  auto enriched =
    env.from_collection(names)
      .connect(env.from_collection(clicks).assign_timestamps_and_watermarks(
        api::watermark_strategy<order>::for_monotonous_timestamps().with_timestamp_assigner(
          [](const order& o) { return o.at; })))
      .key_by([](const user_name& u) { return u.user; }, [](const order& o) { return o.user % 5; })
      .process<std::string>(enrich{});
  auto enriched_into = test::collect(enriched);
  auto program = test::graphs_of(env);
  int two_input_nodes = 0;
  for (const auto& [id, node] : program.stream->nodes())
    if (node.in_edges.size() == 2) {
      ++two_input_nodes;
      std::set<int> types;
      for (auto e : node.in_edges)
        types.insert(program.stream->edges()[e].type_number);
      CHECK(types == std::set<int>{1, 2});
    }
  CHECK(two_input_nodes == 2);

  streaming::local_cluster_options options;
  options.slots_per_task_manager = 4;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);

  auto got = mapped_into->values;
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>{"n1", "n2", "n3", "wa", "wb"});

  std::multiset<std::string> want;
  std::map<std::int64_t, std::set<std::int64_t>> timers;
  for (const auto& o : clicks) {
    want.insert("user" + std::to_string(o.user % 5) + ":" + std::to_string(o.id));
    timers[o.user % 5].insert(o.at + 10);
  }
  for (const auto& [u, ts] : timers)
    for (auto t : ts)
      want.insert("timer:" + std::to_string(u) + "@" + std::to_string(t));
  std::multiset<std::string> have(enriched_into->values.begin(), enriched_into->values.end());
  CHECK(have == want);
  test::check_resources_released(cluster);
}

TEST_CASE("a two-input operator heads its chain and keeps its ids from run to run") {
  auto build = [] {
    api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
    auto o = env.from_collection(orders_of(1, 10)).assign_timestamps_and_watermarks(
      api::watermark_strategy<order>::for_monotonous_timestamps().with_timestamp_assigner(
        [](const order& x) { return x.at; }));
    auto p = env.from_collection(payments_of(2, 10)).assign_timestamps_and_watermarks(
      api::watermark_strategy<payment>::for_monotonous_timestamps().with_timestamp_assigner(
        [](const payment& x) { return x.at; }));
    test::collect(o.key_by([](const order& x) { return x.user; })
                    .interval_join(p.key_by([](const payment& x) { return x.user; }))
                    .between(-1ms, 1ms)
                    .process<joined>(pair_ids{})
                    .map([](const joined& j) { return std::get<0>(j); }));
    return test::graphs_of(env);
  };
  auto a = build();
  auto b = build();
  REQUIRE(a.job->vertices.size() == b.job->vertices.size());
  bool found = false;
  for (std::size_t i = 0; i < a.job->vertices.size(); ++i) {
    CHECK(a.job->vertices[i].id == b.job->vertices[i].id);
    const auto& ops = a.job->vertices[i].operators;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      CHECK(ops[k].id == b.job->vertices[i].operators[k].id);
      if (ops[k].name == "Interval Join") {
        found = true;
        CHECK(k == 0); // the head of its vertex: two inputs never chain to either
        CHECK(a.job->vertices[i].inputs.size() == 2);
        // The map after it chains to it.
        CHECK(ops.size() >= 2);
      }
    }
  }
  CHECK(found);
}
