// Jobs through the data plane: records larger than a buffer, failing user functions, cancelling,
// and the exchanges between parallel operators.

#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <chrono>
#include <stdexcept>
#include <optional>
#include <set>
#include <string>
#include <thread>

using namespace flint;

namespace {

streaming::local_cluster_options two_slots() {
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  return options;
}

/// A job that runs until cancelled: an endless sequence counted per key (1000 keys, parallelism
/// 2), every update collected.
struct endless_job {
  std::shared_ptr<test::collected<std::tuple<std::int64_t, std::int64_t>>> into;
  test::program program;
};

endless_job endless_keyed_count() {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto counts = env.generate_sequence(0, std::numeric_limits<std::int64_t>::max())
                  .map([](const std::int64_t& x) {
                    return std::tuple<std::int64_t, std::int64_t>(x % 1000, 1);
                  })
                  .key_by<0>()
                  .sum<1>();
  auto into = test::collect(counts);
  return {into, test::graphs_of(env)};
}

} // namespace

TEST_CASE("a record larger than one buffer crosses intact") {
  std::string big;
  for (int i = 0; big.size() < 200 * 1024; ++i)
    big += std::to_string(i) + ";";
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto source = env.from_collection(std::vector<std::string>{"small", big, "after", big + big});
  auto into = test::collect(source.map([](const std::string& s) { return s; }));
  auto program = test::graphs_of(env);

  streaming::local_cluster cluster(two_slots());
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  auto values = into->values;
  std::sort(values.begin(), values.end());
  std::vector<std::string> expected{"small", big, "after", big + big};
  std::sort(expected.begin(), expected.end());
  CHECK(values == expected);
  test::check_resources_released(cluster);
}

TEST_CASE("task threads run as batch threads") {
  // Every subtask's user function sees the scheduling policy of the thread it runs on.
  auto policies = std::make_shared<std::atomic<int>>(0);
  auto others = std::make_shared<std::atomic<int>>(0);
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  test::collect(env.generate_sequence(1, 1000).map([policies, others](const std::int64_t& x) {
    if (::sched_getscheduler(0) == SCHED_BATCH)
      policies->fetch_add(1);
    else
      others->fetch_add(1);
    return x;
  }));
  auto program = test::graphs_of(env);
  streaming::local_cluster cluster(two_slots());
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  CHECK(policies->load() == 1000);
  CHECK(others->load() == 0);
}

TEST_CASE("a user function that throws fails its task and the job with its text") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto mapped = env.generate_sequence(1, 100000).rebalance().map([](const std::int64_t& x) {
    if (x == 777)
      throw std::runtime_error("user function refused record 777");
    return x;
  });
  test::collect(mapped);
  auto program = test::graphs_of(env);

  streaming::local_cluster cluster(two_slots());
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  CHECK_MESSAGE(result->failure_cause.find("user function refused record 777") != std::string::npos,
                result->failure_cause);
  test::check_resources_released(cluster);
}

TEST_CASE("cancelling a running job stops every task and frees every buffer") {
  auto [into, program] = endless_keyed_count();

  streaming::local_cluster cluster(two_slots());
  REQUIRE(cluster.submit(program.stream, program.job).has_value());
  // Wait until records reach the sink (polling, not timing: the sink's count only grows).
  for (int i = 0; i < 6000; ++i) {
    {
      std::lock_guard<std::mutex> guard{into->mutex};
      if (into->values.size() > 10000)
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard<std::mutex> guard{into->mutex};
    REQUIRE(into->values.size() > 10000);
  }
  REQUIRE(cluster.cancel(program.job->job_id).has_value());
  auto result = cluster.result(program.job->job_id, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::canceled);
  test::check_resources_released(cluster);
}

TEST_CASE("rebalance, broadcast, rescale and forward deliver every record where Flink sends it") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto numbers = env.generate_sequence(1, 20000);
  auto tag = [](const std::int64_t& x) { return x; };
  auto rebalanced = test::collect(numbers.rebalance().map(tag));
  auto broadcast = test::collect(numbers.broadcast().map(tag));
  auto rescaled = test::collect(numbers.rescale().map(tag));
  auto forwarded = test::collect(numbers.forward().map(tag));
  auto program = test::graphs_of(env);

  streaming::local_cluster cluster(two_slots());
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  auto sorted = [](std::shared_ptr<test::collected<std::int64_t>> c) {
    auto v = c->values;
    std::sort(v.begin(), v.end());
    return v;
  };
  std::vector<std::int64_t> once;
  for (std::int64_t i = 1; i <= 20000; ++i)
    once.push_back(i);
  std::vector<std::int64_t> twice;
  for (std::int64_t i = 1; i <= 20000; ++i)
    twice.insert(twice.end(), {i, i});
  CHECK(sorted(rebalanced) == once);
  CHECK(sorted(rescaled) == once);
  CHECK(sorted(forwarded) == once);
  CHECK(sorted(broadcast) == twice);
  test::check_resources_released(cluster);
}

TEST_CASE("a reduce keeps one value per key across subtasks") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "3"}});
  auto sums = env.generate_sequence(1, 30000)
                .map([](const std::int64_t& x) {
                  return std::pair<std::string, std::int64_t>("k" + std::to_string(x % 7), x);
                })
                .key_by([](const std::pair<std::string, std::int64_t>& p) { return p.first; })
                .reduce([](const std::pair<std::string, std::int64_t>& a,
                           const std::pair<std::string, std::int64_t>& b) {
                  return std::pair<std::string, std::int64_t>(a.first, a.second + b.second);
                });
  auto into = test::collect(sums);
  auto program = test::graphs_of(env);

  streaming::local_cluster_options options;
  options.slots_per_task_manager = 3;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  CHECK(into->values.size() == 30000);
  std::map<std::string, std::int64_t> last;
  for (auto& [k, v] : into->values)
    last[k] = std::max(last[k], v);
  std::map<std::string, std::int64_t> expected;
  for (std::int64_t x = 1; x <= 30000; ++x)
    expected["k" + std::to_string(x % 7)] += x;
  CHECK(last == expected);
  test::check_resources_released(cluster);
}

TEST_CASE("a socket source reads lines until the peer closes") {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  int port = ntohs(address.sin_port);
  std::thread peer([listener] {
    int connection = ::accept(listener, nullptr, nullptr);
    if (connection < 0)
      return;
    std::string text = "first line\r\nsecond\n";
    for (int i = 0; i < 1000; ++i)
      text += "line " + std::to_string(i) + "\n";
    text += "no newline at the end";
    (void)::send(connection, text.data(), text.size(), 0);
    ::close(connection);
  });

  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto into = test::collect(
    env.socket_text_stream("127.0.0.1", port).rebalance().map([](const std::string& s) {
      return s;
    }));
  auto program = test::graphs_of(env);
  streaming::local_cluster cluster(two_slots());
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  peer.join();
  ::close(listener);
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  auto values = into->values;
  std::sort(values.begin(), values.end());
  std::vector<std::string> expected{"first line", "second", "no newline at the end"};
  for (int i = 0; i < 1000; ++i)
    expected.push_back("line " + std::to_string(i));
  std::sort(expected.begin(), expected.end());
  CHECK(values == expected);
  test::check_resources_released(cluster);
}

// -- the same over remote channels: two TaskExecutors, each with its own streaming environment --

namespace {

streaming::local_cluster_options two_remote_task_managers() {
  streaming::local_cluster_options options;
  options.task_managers = 2;
  options.slots_per_task_manager = 1;
  options.remote_channels = true;
  return options;
}

} // namespace

TEST_CASE("a record larger than one buffer crosses a remote channel intact") {
  std::string big;
  for (int i = 0; big.size() < 200 * 1024; ++i)
    big += std::to_string(i) + ";";
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto source = env.from_collection(std::vector<std::string>{"small", big, "after", big + big});
  // The map's two subtasks run on the two TaskExecutors; rebalance feeds both from the source.
  auto into = test::collect(source.rebalance().map([](const std::string& s) { return s; }));
  auto program = test::graphs_of(env);

  streaming::local_cluster cluster(two_remote_task_managers());
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  auto values = into->values;
  std::sort(values.begin(), values.end());
  std::vector<std::string> expected{"small", big, "after", big + big};
  std::sort(expected.begin(), expected.end());
  CHECK(values == expected);
  CHECK(test::remote_connections(cluster.streaming(0))
          + test::remote_connections(cluster.streaming(1))
        > 0);
  test::check_resources_released(cluster);
}

TEST_CASE(
  "a slow consumer behind a remote channel: memory stays within the credit budget, nothing is lost") {
  const std::int64_t n = 200000;
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "1"}});
  // The source and the slow map in different slot sharing groups: different TaskExecutors.
  auto slow = env.generate_sequence(1, n)
                .map([](const std::int64_t& x) {
                  if (x % 2000 == 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds(2));
                  return x;
                })
                .slot_sharing_group("consumer");
  auto into = test::collect(slow);
  auto program = test::graphs_of(env);

  streaming::local_cluster cluster(two_remote_task_managers());
  // Buffers in use per environment, sampled while the job runs: at most the producer's partition
  // pool (2 per subpartition + 8) or the consumer's credit (2 exclusive + 8 floating).
  const auto& config = cluster.streaming(0).shuffle().config();
  const std::size_t budget = std::max(
    config.partition_pool_max(1), config.buffers_per_channel + config.floating_buffers_per_gate);
  std::atomic<bool> done{false};
  std::size_t max_in_use[2] = {0, 0};
  std::thread sampler([&] {
    while (!done) {
      for (std::size_t i = 0; i < 2; ++i) {
        auto& pool = cluster.streaming(i).shuffle().buffer_pool();
        max_in_use[i] = std::max(max_in_use[i], pool.total_segments() - pool.available_segments());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  done = true;
  sampler.join();
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  std::vector<std::int64_t> values = into->values;
  REQUIRE(values.size() == static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    REQUIRE(values[static_cast<std::size_t>(i)] == i + 1);
  CHECK(test::remote_connections(cluster.streaming(0))
          + test::remote_connections(cluster.streaming(1))
        >= 1);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(max_in_use[i] > 0);
    CHECK(max_in_use[i] <= budget);
  }
  test::check_resources_released(cluster);
}

TEST_CASE("cancelling a running job with remote channels stops every task and frees every buffer") {
  auto [into, program] = endless_keyed_count();

  streaming::local_cluster cluster(two_remote_task_managers());
  REQUIRE(cluster.submit(program.stream, program.job).has_value());
  // Running, with each TaskExecutor reading its peer's partition remotely. A consumer whose
  // first request came before the peer's producer registered retries after Flink's back-off,
  // and the local channel alone may deliver many records meanwhile: wait for both, not for a
  // number of records. (After the cancel a consumer may already have dropped a connection whose
  // producer went away, so this is checked before.)
  auto running_remotely = [&] {
    std::lock_guard<std::mutex> guard{into->mutex};
    return into->values.size() > 10000 && test::remote_connections(cluster.streaming(0)) > 0
      && test::remote_connections(cluster.streaming(1)) > 0;
  };
  for (int i = 0; i < 6000 && !running_remotely(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(running_remotely());
  REQUIRE(cluster.cancel(program.job->job_id).has_value());
  auto result = cluster.result(program.job->job_id, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::canceled);
  test::check_resources_released(cluster);
}

TEST_CASE("a BATCH job whose io.tmp.dirs is unusable fails, naming the path") {
  api::stream_execution_environment env(api::configuration{
    {"parallelism.default", "2"}, {"execution.global-data-exchange-mode", "ALL_EDGES_BLOCKING"}});
  test::collect(
    env.generate_sequence(1, 10000).rebalance().map([](const std::int64_t& x) { return x; }));
  auto program = test::graphs_of(env);
  test::temp_path missing("no_such_tmp_dir");
  streaming::local_cluster_options options = two_slots();
  options.network.tmp_dirs = {missing.path.string()};
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  CHECK_MESSAGE(result->failure_cause.find(missing.path.string()) != std::string::npos,
                result->failure_cause);
  CHECK_MESSAGE(result->failure_cause.find("io.tmp.dirs") != std::string::npos,
                result->failure_cause);
  CHECK_FALSE(std::filesystem::exists(missing.path));
  test::check_resources_released(cluster);
}

namespace {

/// The running count per key in a value state, and whether the key was seen before in a map.
struct count_per_key : api::keyed_process_function<std::string, std::int64_t, std::string> {
  std::optional<api::value_state<std::int64_t>> count;
  void open(api::keyed_context<std::string>& ctx) override {
    count.emplace(ctx.get_state<std::int64_t>("count"));
  }
  void process_element(const std::int64_t&, api::keyed_context<std::string>& ctx,
                       api::collector<std::string>& out) override {
    auto n = count->value().value_or(0) + 1;
    count->update(n);
    out.collect(ctx.current_key() + "=" + std::to_string(n));
  }
};

} // namespace

TEST_CASE("key_by().process() runs a KeyedProcessFunction with its keyed state per key") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto counted = env.generate_sequence(1, 3000)
                   .key_by([](const std::int64_t& x) { return "k" + std::to_string(x % 5); })
                   .process<std::string>(count_per_key{});
  auto into = test::collect(counted);
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  CHECK(into->values.size() == 3000);
  std::set<std::string> finals(into->values.begin(), into->values.end());
  for (int k = 0; k < 5; ++k)
    CHECK(finals.count("k" + std::to_string(k) + "=600") == 1);
  test::check_resources_released(cluster);
}
