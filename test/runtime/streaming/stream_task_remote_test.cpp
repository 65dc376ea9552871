// Stream tasks with remote input channels: a consumer task whose producer never registers (the
// test coordinator's clock drives the back-off), one whose producer's server goes away, and a
// task reading across two actor systems over CAF's middleman and loopback.

#include "runtime/actors/task_executor/task.hpp"
#include "runtime/graph/execution_graph.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"
#include "runtime/network/transport/partition_request_server.hpp"
#include "runtime/network/transport/connection_cache.hpp"
#include "runtime/network/transport/transport_messages.hpp"
#include "runtime/streaming/stream_task.hpp"
#include "test/runtime/network/transport/transport_test_util.hpp"
#include "test/runtime/streaming/streaming_test_util.hpp"
#include "test/support/test_fixture.hpp"

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/send.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace flint;
using namespace std::chrono_literals;

namespace flint::test {

std::size_t remote_connections(streaming::streaming_environment& env) {
  auto connections = env.shuffle().connections();
  return connections ? connections->num_connections() : 0;
}

} // namespace flint::test

namespace {

/// A consuming stream task on the deterministic scheduler, reading from a producer "elsewhere"
/// whose partition request server is an actor of the same system.
struct consumer_task_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{flint::test::deterministic_config(cfg)};
  caf::scheduler::test_coordinator& sched =
    dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  std::shared_ptr<network::shuffle_environment> consumer_env =
    std::make_shared<network::shuffle_environment>();
  std::shared_ptr<network::shuffle_environment> producer_env =
    std::make_shared<network::shuffle_environment>();
  caf::actor server;
  std::vector<caf::actor> actors;
  std::vector<cluster::task_execution_state> states;
  /// Checkpoints the task acknowledged, and the ones it declined with their causes.
  std::vector<std::int64_t> acknowledged;
  /// What each acknowledgement measured, and the task's metrics.
  std::vector<state::checkpoint_metrics> measured;
  std::shared_ptr<metrics::task_io_metrics> io = std::make_shared<metrics::task_io_metrics>();
  std::vector<std::pair<std::int64_t, std::string>> declined;
  std::size_t connects = 0;

  consumer_task_fixture() {
    server = network::spawn_partition_server(sys, producer_env, true);
    actors.push_back(server);
    consumer_env->set_connections(std::make_shared<network::transport::connection_cache>(
      "consumer-host", 7001, caf::actor{},
      [this](const std::string& host, std::uint16_t port) -> expected<caf::actor> {
        ++connects;
        CHECK(host == "producer-host");
        CHECK(port == 7002);
        return server;
      }));
    sched.run();
  }

  ~consumer_task_fixture() {
    for (auto& a : actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
    sched.clock().cancel_all();
    sched.run();
    consumer_env->set_connections(nullptr);
  }

  /// The partition the producing (first) vertex of `program` writes, as its source task would.
  static network::result_partition_id produced_partition_id(const flint::test::program& program) {
    auto eg = graph::execution_graph::build(*program.job);
    REQUIRE(eg.has_value());
    auto producer_tdd = graph::make_task_deployment_descriptor(*eg, 0);
    REQUIRE(producer_tdd.has_value());
    REQUIRE(producer_tdd->produced_partitions.size() == 1);
    const auto& produced = producer_tdd->produced_partitions[0];
    return {produced.result_id, produced.partition_number};
  }

  /// Deploys the consuming vertex of `program` with every producer on "producer-host:7002".
  caf::actor deploy_consumer(const flint::test::program& program) {
    auto eg = graph::execution_graph::build(*program.job);
    REQUIRE(eg.has_value());
    auto locate = [](std::uint32_t) -> std::optional<graph::producer_location> {
      return graph::producer_location{"tm-producer", "producer-host", 7002};
    };
    std::optional<graph::task_deployment_descriptor> consumer;
    for (std::uint32_t v = 0; v < eg->vertices().size() && !consumer; ++v) {
      auto tdd = graph::make_task_deployment_descriptor(*eg, v, locate);
      REQUIRE(tdd.has_value());
      if (!tdd->input_gates.empty())
        consumer = *tdd;
    }
    REQUIRE(consumer);
    task_executor::task_setup setup;
    setup.tdd = *consumer;
    streaming::job_program compiled{program.stream, program.job};
    auto env = consumer_env;
    setup.invokables = [compiled, env](const graph::task_deployment_descriptor& tdd) {
      return std::make_unique<streaming::stream_task>(compiled, tdd, env, [](std::string_view) {});
    };
    setup.report = [this](const cluster::task_execution_state& s) { states.push_back(s); };
    setup.io = io;
    setup.acknowledge_checkpoint = [this](std::int64_t id, state::task_state_snapshot,
                                          const state::checkpoint_metrics& m) {
      acknowledged.push_back(id);
      measured.push_back(m);
    };
    setup.decline_checkpoint = [this](std::int64_t id, const std::string& cause, bool) {
      declined.emplace_back(id, cause);
    };
    auto task = sys.spawn<task_executor::task>(std::move(setup));
    actors.push_back(task);
    return task;
  }

  bool ended() const { return !states.empty() && graph::is_terminal(states.back().state); }
};

flint::test::program rebalanced_program(
  std::shared_ptr<test::collected<std::int64_t>>* into = nullptr) {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "1"}});
  // rebalance is never chained: the map's task has an input gate.
  auto sink = test::collect(env.from_collection(std::vector<std::int64_t>{1, 2, 3})
                              .rebalance()
                              .map([](const std::int64_t& x) { return x; }));
  if (into)
    *into = sink;
  return test::graphs_of(env);
}

} // namespace

TEST_CASE_FIXTURE(
  consumer_task_fixture,
  "a consumer whose remote producer never registers fails with the back-off error after 12.7 s") {
  auto program = rebalanced_program();
  deploy_consumer(program);
  sched.run();
  REQUIRE_FALSE(states.empty());
  CHECK(states.back().state == graph::execution_state::running);
  CHECK(connects == 1);
  CHECK(consumer_env->running_tasks() == 1);
  // Flink's back-off: 100, 200, ..., 6400 ms, then the request is given up (12.7 s in all).
  for (auto step : {100ms, 200ms, 400ms, 800ms, 1600ms, 3200ms}) {
    sched.advance_time(step);
    sched.run();
    REQUIRE_FALSE(ended());
  }
  sched.advance_time(6399ms);
  sched.run();
  REQUIRE_FALSE(ended());
  sched.advance_time(1ms);
  sched.run();
  REQUIRE(ended());
  CHECK(states.back().state == graph::execution_state::failed);
  const auto& cause = states.back().failure_cause;
  CHECK_MESSAGE(cause.find("partition request for") != std::string::npos, cause);
  CHECK_MESSAGE(cause.find("refused") != std::string::npos, cause);
  CHECK_MESSAGE(cause.find("gave up after 8 requests") != std::string::npos, cause);
  CHECK_MESSAGE(cause.find(program.job->job_id.to_string()) != std::string::npos, cause);
  // Its buffers went back and it counted itself ended; the consumer's cancel was heard.
  CHECK(consumer_env->running_tasks() == 0);
  CHECK(consumer_env->buffer_pool().available_segments()
        == consumer_env->buffer_pool().total_segments());
}

TEST_CASE_FIXTURE(
  consumer_task_fixture,
  "a consumer reads a remote partition, then its mails for a released channel are dropped") {
  auto program = rebalanced_program();
  // The producer's partition, as its source task would write it: the records 1, 2, 3.
  auto id = produced_partition_id(program);
  auto partition = producer_env->create_partition(program.job->job_id, id, 1);
  REQUIRE(partition.has_value());

  auto task = deploy_consumer(program);
  sched.run();
  // Not written yet: the reader waits with its credit.
  CHECK_FALSE(ended());
  for (std::int64_t x : {1, 2, 3}) {
    std::string bytes(reinterpret_cast<const char*>(&x), sizeof x);
    REQUIRE((*partition)->emit_record(bytes, 0) == network::emit_result::written);
  }
  (*partition)->finish();
  producer_env->producer_finished(program.job->job_id, id);
  sched.run();
  REQUIRE(ended());
  CHECK_MESSAGE(states.back().state == graph::execution_state::finished,
                states.back().failure_cause);
  // The server counted the subpartition consumed: the producer's partition is released.
  CHECK(producer_env->num_partitions() == 0);
  CHECK(producer_env->buffer_pool().available_segments()
        == producer_env->buffer_pool().total_segments());
  CHECK(consumer_env->running_tasks() == 0);
  CHECK(consumer_env->buffer_pool().available_segments()
        == consumer_env->buffer_pool().total_segments());
  // A late buffer for the ended task goes nowhere and breaks nothing.
  std::vector<char> late(16, 'x');
  network::transport::send(task, network::transport::buffer_message{{0, 0}, 9, 0, 0, late});
  sched.run();
}

TEST_CASE_FIXTURE(
  consumer_task_fixture,
  "remote consumers read a blocking partition one after another, each from the start, and it stays") {
  std::shared_ptr<test::collected<std::int64_t>> into;
  auto program = rebalanced_program(&into);
  auto id = produced_partition_id(program);
  auto partition = producer_env->create_partition(program.job->job_id, id, 1,
                                                  graph::result_partition_type::blocking);
  REQUIRE_MESSAGE(partition.has_value(), partition.error().to_string());
  const std::int64_t n = 20000;
  for (std::int64_t x = 1; x <= n; ++x) {
    std::string bytes(reinterpret_cast<const char*>(&x), sizeof x);
    // Far more than the producer's pool: a blocking partition never waits for a consumer.
    REQUIRE((*partition)->emit_record(bytes, 0) == network::emit_result::written);
  }
  (*partition)->finish();
  producer_env->producer_finished(program.job->job_id, id);

  std::vector<std::int64_t> once;
  for (std::int64_t x = 1; x <= n; ++x)
    once.push_back(x);
  for (int round = 1; round <= 2; ++round) {
    states.clear();
    deploy_consumer(program);
    sched.run();
    REQUIRE(ended());
    CHECK_MESSAGE(states.back().state == graph::execution_state::finished,
                  states.back().failure_cause);
    // Read over the wire form (bytes copied into messages) and counted consumed, yet kept.
    CHECK(producer_env->num_partitions() == 1);
    std::vector<std::int64_t> expected;
    for (int r = 0; r < round; ++r)
      expected.insert(expected.end(), once.begin(), once.end());
    CHECK(into->values == expected);
  }
  CHECK(consumer_env->running_tasks() == 0);
  CHECK(consumer_env->buffer_pool().available_segments()
        == consumer_env->buffer_pool().total_segments());
  producer_env->release_job(program.job->job_id);
  CHECK(producer_env->num_partitions() == 0);
  CHECK(producer_env->buffer_pool().available_segments()
        == producer_env->buffer_pool().total_segments());
}

TEST_CASE_FIXTURE(
  consumer_task_fixture,
  "a consuming task acknowledges a checkpoint at its barrier, after the records before it") {
  std::shared_ptr<test::collected<std::int64_t>> sink;
  auto program = rebalanced_program(&sink);
  auto id = produced_partition_id(program);
  auto partition = producer_env->create_partition(program.job->job_id, id, 1);
  REQUIRE(partition.has_value());
  deploy_consumer(program);
  sched.run();
  auto emit = [&](std::int64_t x) {
    std::string bytes(reinterpret_cast<const char*>(&x), sizeof x);
    REQUIRE((*partition)->emit_record(bytes, 0) == network::emit_result::written);
  };
  emit(1);
  emit(2);
  REQUIRE((*partition)->broadcast_checkpoint_barrier({1, 100}));
  sched.run();
  CHECK(acknowledged == std::vector<std::int64_t>{1});
  CHECK(declined.empty());
  auto seen = [&] {
    std::lock_guard<std::mutex> guard{sink->mutex};
    return sink->values;
  };
  CHECK(seen() == std::vector<std::int64_t>{1, 2});
  emit(3);
  REQUIRE((*partition)->broadcast_checkpoint_barrier({2, 200}));
  (*partition)->finish();
  producer_env->producer_finished(program.job->job_id, id);
  sched.run();
  REQUIRE(ended());
  CHECK_MESSAGE(states.back().state == graph::execution_state::finished,
                states.back().failure_cause);
  CHECK(acknowledged == std::vector<std::int64_t>{1, 2});
  CHECK(seen() == std::vector<std::int64_t>{1, 2, 3});
}

TEST_CASE_FIXTURE(consumer_task_fixture,
                  "a consumer that gets a malformed transport message fails, saying so") {
  auto program = rebalanced_program();
  auto id = produced_partition_id(program);
  auto partition = producer_env->create_partition(program.job->job_id, id, 1);
  REQUIRE(partition.has_value());
  auto task = deploy_consumer(program);
  sched.run();
  REQUIRE_FALSE(ended());
  // A buffer atom with one element: never handed to a channel.
  caf::anon_send(task, network::transport::buffer_atom::value, network::transport::wire_u32{0});
  sched.run();
  REQUIRE(ended());
  CHECK(states.back().state == graph::execution_state::failed);
  const auto& cause = states.back().failure_cause;
  CHECK_MESSAGE(cause.find("malformed buffer message") != std::string::npos, cause);
  CHECK(consumer_env->running_tasks() == 0);
  CHECK(consumer_env->buffer_pool().available_segments()
        == consumer_env->buffer_pool().total_segments());
  producer_env->producer_failed(program.job->job_id, id);
}

TEST_CASE_FIXTURE(consumer_task_fixture,
                  "a consumer that reads a record with a malformed timestamp fails, saying so") {
  auto program = rebalanced_program();
  auto id = produced_partition_id(program);
  auto partition = producer_env->create_partition(program.job->job_id, id, 1);
  REQUIRE(partition.has_value());
  auto task = deploy_consumer(program);
  sched.run();
  REQUIRE_FALSE(ended());
  // The channel's first buffer: a record tagged as timestamped (the length's top bit), 3 bytes
  // long, whose timestamp varint never ends within them.
  const std::vector<char> bytes = {'\x80', 0, 0, 3, '\x80', '\x80', '\x80'};
  network::transport::send(
    task, network::transport::buffer_message{{0, 0}, 0, 0, 0, std::span<const char>(bytes)});
  sched.run();
  REQUIRE(ended());
  CHECK(states.back().state == graph::execution_state::failed);
  const auto& cause = states.back().failure_cause;
  CHECK_MESSAGE(cause.find("an input record is malformed (a timestamped record ends inside its "
                           "timestamp)")
                  != std::string::npos,
                cause);
  CHECK(consumer_env->running_tasks() == 0);
  CHECK(consumer_env->buffer_pool().available_segments()
        == consumer_env->buffer_pool().total_segments());
  producer_env->producer_failed(program.job->job_id, id);
}

TEST_CASE_FIXTURE(consumer_task_fixture,
                  "a consumer whose producer's partition server goes away fails, naming it") {
  auto program = rebalanced_program();
  auto id = produced_partition_id(program);
  auto partition = producer_env->create_partition(program.job->job_id, id, 1);
  REQUIRE(partition.has_value());
  deploy_consumer(program);
  sched.run();
  REQUIRE_FALSE(ended());
  // The producer's process dies: its server ends (across processes: remote_link_unreachable).
  caf::anon_send_exit(server, caf::exit_reason::kill);
  sched.run();
  REQUIRE(ended());
  CHECK(states.back().state == graph::execution_state::failed);
  const auto& cause = states.back().failure_cause;
  CHECK_MESSAGE(cause.find("the partition server of tm-producer at producer-host:7002 is gone")
                  != std::string::npos,
                cause);
  CHECK_MESSAGE(cause.find(network::to_string(id)) != std::string::npos, cause);
  CHECK(consumer_env->running_tasks() == 0);
  CHECK(consumer_env->buffer_pool().available_segments()
        == consumer_env->buffer_pool().total_segments());
  // The dead peer is forgotten: the next task would connect again.
  CHECK(consumer_env->connections()->num_connections() == 0);
  producer_env->producer_failed(program.job->job_id, id);
}

TEST_CASE_FIXTURE(consumer_task_fixture,
                  "a consumer acknowledges a barrier with its start delay and snapshot times") {
  auto program = rebalanced_program();
  auto id = produced_partition_id(program);
  auto partition = producer_env->create_partition(program.job->job_id, id, 1);
  REQUIRE(partition.has_value());
  deploy_consumer(program);
  sched.run();
  REQUIRE_FALSE(ended());
  // Triggered 5 s ago on the JobMaster's wall clock: at least 5 s of start delay, whatever the
  // wall clock did since.
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  std::int64_t x = 1;
  REQUIRE((*partition)->emit_record(std::string(reinterpret_cast<const char*>(&x), sizeof x), 0)
          == network::emit_result::written);
  REQUIRE((*partition)->broadcast_checkpoint_barrier({1, now_ms - 5'000}));
  (*partition)->flush_all();
  sched.run();
  REQUIRE(acknowledged == std::vector<std::int64_t>{1});
  const auto& m = measured.at(0);
  // One channel: nothing to align.
  CHECK(m.alignment_duration_nanos == 0);
  CHECK(m.bytes_processed_during_alignment == 0);
  CHECK(m.bytes_persisted_during_alignment == 0);
  CHECK(m.checkpoint_start_delay_nanos >= 5'000'000'000LL);
  CHECK(m.checkpoint_start_delay_nanos < 600'000'000'000LL);
  // Measured (in memory, so the async part is the snapshot's assembly).
  CHECK(m.sync_duration_millis >= 0);
  CHECK(m.async_duration_millis >= 0);
  // The task's gauges show the last checkpoint's figures.
  CHECK(io->checkpoint_start_delay_nanos.load() == m.checkpoint_start_delay_nanos);
  CHECK(io->checkpoint_alignment_time.load() == 0);
  (*partition)->finish();
  producer_env->producer_finished(program.job->job_id, id);
  sched.run();
  REQUIRE(ended());
}

TEST_CASE("a stream task in system B reads its remote producer's partition in system A") {
  auto make_config = [](caf::actor_system_config& cfg) -> caf::actor_system_config& {
    cfg.load<caf::io::middleman>();
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    cfg.set("logger.console", caf::atom("none"));
    return cfg;
  };
  caf::actor_system_config cfg_a, cfg_b;
  caf::actor_system sys_a{make_config(cfg_a)};
  caf::actor_system sys_b{make_config(cfg_b)};
  streaming::streaming_environment env_a, env_b;
  auto port_a = env_a.shuffle().enable_remote_channels(sys_a, "127.0.0.1", 0, "127.0.0.1");
  auto port_b = env_b.shuffle().enable_remote_channels(sys_b, "127.0.0.1", 0, "127.0.0.1");
  REQUIRE(port_a.has_value());
  REQUIRE(port_b.has_value());

  std::shared_ptr<test::collected<std::int64_t>> into;
  auto program = rebalanced_program(&into);
  auto eg = graph::execution_graph::build(*program.job);
  REQUIRE(eg.has_value());
  // The source (vertex 0) runs on A, the map on B.
  auto locate = [&](std::uint32_t v) -> std::optional<graph::producer_location> {
    if (v == 0)
      return graph::producer_location{"tm-a", "127.0.0.1", *port_a};
    return graph::producer_location{"tm-b", "127.0.0.1", *port_b};
  };
  auto producer_tdd = graph::make_task_deployment_descriptor(*eg, 0, locate);
  auto consumer_tdd = graph::make_task_deployment_descriptor(*eg, 1, locate);
  REQUIRE(producer_tdd.has_value());
  REQUIRE(consumer_tdd.has_value());
  REQUIRE(consumer_tdd->input_gates.size() == 1);
  const auto& produced = producer_tdd->produced_partitions.at(0);
  network::result_partition_id id{produced.result_id, produced.partition_number};

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<cluster::task_execution_state> states;
  task_executor::task_setup setup;
  setup.tdd = *consumer_tdd;
  streaming::job_program compiled{program.stream, program.job};
  auto shuffle_b = env_b.shuffle_ptr();
  setup.invokables = [compiled, shuffle_b](const graph::task_deployment_descriptor& tdd) {
    return std::make_unique<streaming::stream_task>(compiled, tdd, shuffle_b,
                                                    [](std::string_view) {});
  };
  setup.report = [&](const cluster::task_execution_state& s) {
    std::lock_guard<std::mutex> guard{mutex};
    states.push_back(s);
    changed.notify_all();
  };
  // The consumer first: it asks before the producer registered (back-off), as in a real deployment.
  auto task = sys_b.spawn<task_executor::task, caf::detached>(std::move(setup));

  const std::int64_t n = 100000;
  auto partition = env_a.shuffle().create_partition(program.job->job_id, id, 1);
  REQUIRE(partition.has_value());
  std::thread writer([&] {
    auto& p = **partition;
    for (std::int64_t x = 1; x <= n; ++x) {
      std::string bytes(reinterpret_cast<const char*>(&x), sizeof x);
      auto r = p.emit_record(bytes, 0);
      for (int wait = 0; r == network::emit_result::blocked && wait < 30000; ++wait) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        if (p.is_available())
          r = p.resume();
      }
    }
    p.finish();
    env_a.shuffle().producer_finished(program.job->job_id, id);
  });
  bool ended = false;
  {
    std::unique_lock<std::mutex> lock{mutex};
    ended = changed.wait_for(
      lock, 60s, [&] { return !states.empty() && graph::is_terminal(states.back().state); });
  }
  writer.join();
  REQUIRE(ended);
  {
    std::lock_guard<std::mutex> guard{mutex};
    CHECK_MESSAGE(states.back().state == graph::execution_state::finished,
                  states.back().failure_cause);
  }
  std::vector<std::int64_t> values = into->values;
  REQUIRE(values.size() == static_cast<std::size_t>(n));
  for (std::int64_t x = 1; x <= n; ++x)
    REQUIRE(values[static_cast<std::size_t>(x - 1)] == x);
  CHECK(test::remote_connections(env_b) == 1);
  REQUIRE(env_b.await_tasks_released(30s));
  CHECK(env_b.shuffle().buffer_pool().available_segments()
        == env_b.shuffle().buffer_pool().total_segments());
  for (int i = 0; i < 3000 && env_a.shuffle().num_partitions() != 0; ++i)
    std::this_thread::sleep_for(10ms);
  CHECK(env_a.shuffle().num_partitions() == 0);
  // The server let go of the job's partitions before reporting: nothing of the job stays in A.
  CHECK(env_a.shuffle().num_jobs() == 0);
  env_a.shuffle().disable_remote_channels();
  env_b.shuffle().disable_remote_channels();
}
