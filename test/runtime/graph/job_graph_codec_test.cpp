// Cap'n Proto codecs of the JobGraph and the TaskDeploymentDescriptor: lossless, and clear
// errors for bytes that are not one.

#include "graph_test_util.hpp"

#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/graph/codec/job_graph_codec.hpp"
#include "runtime/graph/execution_graph.hpp"

#include <random>

using namespace flint;
using namespace flint::graph;
using flint::test::value_of;

namespace {

graph::job_graph wordcount_job() {
  api::stream_execution_environment env(test::parallelism(2));
  examples::build_wordcount(env, {});
  return value_of(env.get_job_graph(examples::wordcount_job_name));
}

/// Uses every field: co-location, checkpoints, blocking and pointwise edges, no-uid operators,
/// branching chains, custom buffer timeouts and max parallelism.
graph::job_graph busy_job() {
  api::stream_execution_environment env(test::parallelism(3));
  env.enable_checkpointing(1000).set_max_parallelism(256);
  env.set_restart_strategy(
    api::restart_strategies::fixed_delay_restart(3, std::chrono::milliseconds(10)));
  env.set_global_data_exchange_mode(global_data_exchange_mode::forward_edges_pipelined);
  auto src = env.generate_sequence(0, 99).co_location_group("c").set_buffer_timeout(7);
  auto a =
    src.rescale().map([](const std::int64_t& x) { return x; }).uid("a-uid").co_location_group("c");
  a.filter([](const std::int64_t& x) { return x > 1; }).set_parallelism(2).print();
  a.key_by([](const std::int64_t& x) { return x % 5; })
    .reduce([](const std::int64_t& x, const std::int64_t& y) { return x + y; })
    .slot_sharing_group("other")
    .write_as_text("/tmp/out");
  a.map([](const std::int64_t& x) { return x; }).print();
  return value_of(env.get_job_graph("busy"));
}

std::span<const char> view(const std::vector<char>& bytes) {
  return {bytes.data(), bytes.size()};
}

} // namespace

TEST_CASE("a job graph survives a Cap'n Proto round trip") {
  for (const auto& original : {wordcount_job(), busy_job()}) {
    auto bytes = encode_job_graph(original);
    auto decoded = decode_job_graph(view(bytes));
    REQUIRE_MESSAGE(decoded.has_value(), decoded.error().to_string());
    CHECK(*decoded == original);
  }
  auto busy = busy_job();
  CHECK(busy.co_location_groups.size() == 1);
  CHECK(busy.checkpointing.interval == 1000);
  CHECK(busy.execution_config.job_configuration.at("restart-strategy.type") == "fixed-delay");
  CHECK(busy.slot_sharing_groups.size() == 2);
  bool blocking = false;
  for (const auto& d : busy.data_sets)
    blocking = blocking || d.result_type == result_partition_type::blocking;
  CHECK(blocking);
}

TEST_CASE("a job graph decodes from misaligned bytes") {
  auto original = wordcount_job();
  auto bytes = encode_job_graph(original);
  std::vector<char> shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  auto decoded = decode_job_graph(std::span<const char>(shifted.data() + 1, bytes.size()));
  REQUIRE(decoded.has_value());
  CHECK(*decoded == original);
}

TEST_CASE("a job graph or descriptor claiming a parallelism past 32768 is refused before it "
          "sizes anything") {
  auto graph = wordcount_job();
  graph.savepoint_restore.claim_mode = recovery_claim_mode::claim;
  auto round = decode_job_graph(view(encode_job_graph(graph)));
  REQUIRE(round.has_value());
  CHECK(round->savepoint_restore.claim_mode == recovery_claim_mode::claim);
  graph.vertices[0].parallelism = 2147483647;
  auto decoded = decode_job_graph(view(encode_job_graph(graph)));
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().message.find("parallelism 2147483647") != std::string::npos);

  auto eg = value_of(execution_graph::build(busy_job()));
  auto tdd = value_of(make_task_deployment_descriptor(eg, 0));
  REQUIRE_FALSE(tdd.produced_partitions.empty());
  tdd.produced_partitions[0].number_of_subpartitions = 2147483647;
  auto bad = decode_task_deployment_descriptor(view(encode_task_deployment_descriptor(tdd)));
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("2147483647 subpartitions") != std::string::npos);
}

TEST_CASE("every task deployment descriptor survives a round trip") {
  auto eg = value_of(execution_graph::build(busy_job()));
  for (std::uint32_t v = 0; v < eg.vertices().size(); ++v) {
    auto tdd = value_of(make_task_deployment_descriptor(eg, v));
    // The job's name travels with each task (its metrics' job_name).
    CHECK(tdd.job_name == eg.job_graph().name);
    CHECK_FALSE(tdd.job_name.empty());
    auto decoded = decode_task_deployment_descriptor(view(encode_task_deployment_descriptor(tdd)));
    REQUIRE(decoded.has_value());
    CHECK(*decoded == tdd);
  }
}

TEST_CASE("the job's code hashes reach every task deployment descriptor and survive a round trip") {
  auto job = busy_job();
  job.code.package = std::string(64, 'a');
  job.code.library = std::string(64, 'b');
  auto decoded_job = decode_job_graph(view(encode_job_graph(job)));
  REQUIRE(decoded_job.has_value());
  CHECK(decoded_job->code == job.code);
  auto eg = value_of(execution_graph::build(job));
  for (std::uint32_t v = 0; v < eg.vertices().size(); ++v) {
    auto tdd = value_of(make_task_deployment_descriptor(eg, v));
    CHECK(tdd.code.package == std::string(64, 'a'));
    CHECK(tdd.code.library == std::string(64, 'b'));
    auto decoded = decode_task_deployment_descriptor(view(encode_task_deployment_descriptor(tdd)));
    REQUIRE(decoded.has_value());
    CHECK(decoded->code == tdd.code);
  }
}

TEST_CASE("the job's state.backend.rocksdb.* settings survive a descriptor's round trip") {
  auto eg = value_of(execution_graph::build(busy_job()));
  auto tdd = value_of(make_task_deployment_descriptor(eg, 0));
  // None set: none travel, and the decoder reads an old sender's message (no field) as none.
  auto plain = decode_task_deployment_descriptor(view(encode_task_deployment_descriptor(tdd)));
  REQUIRE(plain.has_value());
  CHECK(plain->checkpointing.state_backend_configuration.empty());
  tdd.checkpointing.state_backend = "rocksdb";
  tdd.checkpointing.state_backend_configuration = {
    {"state.backend.rocksdb.cache.size", "0"},
    {"state.backend.rocksdb.writebuffer.size", "3 mb"},
    {"state.backend.rocksdb.compaction.style", "UNIVERSAL"}};
  auto decoded = decode_task_deployment_descriptor(view(encode_task_deployment_descriptor(tdd)));
  REQUIRE(decoded.has_value());
  CHECK(decoded->checkpointing.state_backend_configuration
        == tdd.checkpointing.state_backend_configuration);
  CHECK(*decoded == tdd);
}

TEST_CASE("producer locations reach the consumer's descriptor and survive a round trip") {
  auto eg = value_of(execution_graph::build(busy_job()));
  // Each producer on a TaskExecutor of its own, with an embedded NUL in the host to keep.
  auto locate = [](std::uint32_t producer) -> std::optional<producer_location> {
    if (producer == 0)
      return std::nullopt;
    return producer_location{"tm-" + std::to_string(producer),
                             std::string("host\0") + std::to_string(producer),
                             static_cast<std::uint16_t>(40000 + producer)};
  };
  bool some_gate = false;
  for (std::uint32_t v = 0; v < eg.vertices().size(); ++v) {
    auto tdd = value_of(make_task_deployment_descriptor(eg, v, locate));
    for (const auto& gate : tdd.input_gates) {
      some_gate = true;
      REQUIRE(gate.producer_locations.size() == gate.partition_numbers.size());
      for (const auto& location : gate.producer_locations) {
        if (location.data_port == 0) {
          CHECK(location == producer_location{});
        } else {
          auto producer = static_cast<std::uint32_t>(location.data_port - 40000);
          CHECK(location == *locate(producer));
          // The located vertex produces the consumed result.
          bool produces = false;
          for (auto r : eg.job_vertices()[eg.vertices()[producer].job_vertex].produced_results)
            produces = produces || eg.results()[r].id == gate.consumed_result_id;
          CHECK(produces);
        }
      }
    }
    auto decoded = decode_task_deployment_descriptor(view(encode_task_deployment_descriptor(tdd)));
    REQUIRE(decoded.has_value());
    CHECK(*decoded == tdd);
  }
  CHECK(some_gate);
}

TEST_CASE("a descriptor whose producer locations do not match its channels is malformed") {
  auto eg = value_of(execution_graph::build(busy_job()));
  std::optional<task_deployment_descriptor> with_gate;
  for (std::uint32_t v = 0; v < eg.vertices().size() && !with_gate; ++v) {
    auto tdd = value_of(make_task_deployment_descriptor(eg, v));
    if (!tdd.input_gates.empty())
      with_gate = tdd;
  }
  REQUIRE(with_gate);
  with_gate->input_gates[0].producer_locations.assign(
    with_gate->input_gates[0].partition_numbers.size() + 1, producer_location{"tm", "h", 1});
  auto decoded =
    decode_task_deployment_descriptor(view(encode_task_deployment_descriptor(*with_gate)));
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().code == errc::malformed_message);
  CHECK_MESSAGE(decoded.error().message.find("producer locations for") != std::string::npos,
                decoded.error().message);
}

TEST_CASE("malformed bytes give a clear error") {
  auto check_malformed = [](const expected<graph::job_graph>& decoded,
                            const std::string& fragment) {
    REQUIRE_FALSE(decoded.has_value());
    CHECK(decoded.error().code == errc::malformed_message);
    CHECK(decoded.error().message.starts_with("malformed job graph: "));
    CHECK_MESSAGE(decoded.error().message.find(fragment) != std::string::npos,
                  decoded.error().message);
  };
  check_malformed(decode_job_graph({}), "0 bytes is not a whole number");
  std::vector<char> seven(7, 'x');
  check_malformed(decode_job_graph(view(seven)), "7 bytes");

  auto bytes = encode_job_graph(wordcount_job());
  std::vector<char> truncated(bytes.begin(),
                              bytes.begin() + static_cast<long>(bytes.size() / 2 / 8 * 8));
  check_malformed(decode_job_graph(view(truncated)), "");

  std::vector<char> longer = bytes;
  longer.resize(bytes.size() + 8);
  check_malformed(decode_job_graph(view(longer)), "trailing bytes");

  std::mt19937 random(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<char> noise(8 * (1 + random() % 64));
    for (char& c : noise)
      c = static_cast<char>(random());
    auto decoded = decode_job_graph(view(noise));
    // Random words may happen to be a (nearly empty) valid message; they must never crash.
    if (!decoded.has_value())
      CHECK(decoded.error().code == errc::malformed_message);
  }

  // Well-formed Cap'n Proto whose indices do not hold together.
  auto broken = wordcount_job();
  broken.edges[0].target = 17;
  check_malformed(decode_job_graph(view(encode_job_graph(broken))),
                  "an edge points outside the graph");

  auto tdd = decode_task_deployment_descriptor(view(seven));
  REQUIRE_FALSE(tdd.has_value());
  CHECK(tdd.error().code == errc::malformed_message);
  CHECK(tdd.error().message.starts_with("malformed task deployment descriptor: "));
}

TEST_CASE("bit flips in an encoded job graph never crash the decoder") {
  auto bytes = encode_job_graph(busy_job());
  std::mt19937 random(7);
  int refused = 0;
  for (int round = 0; round < 500; ++round) {
    auto flipped = bytes;
    flipped[random() % flipped.size()] ^= static_cast<char>(1u << (random() % 8));
    auto decoded = decode_job_graph(view(flipped));
    if (!decoded.has_value()) {
      CHECK(decoded.error().code == errc::malformed_message);
      ++refused;
    }
  }
  CHECK(refused > 0);
}
