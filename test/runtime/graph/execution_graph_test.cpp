// ExecutionGraph construction (§5.1.1 steps 4–6), Flink 1.14's grouped edges, and the state
// machines of Execution and JobStatus.

#include "graph_test_util.hpp"

#include "runtime/graph/execution_graph.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"

#include <set>

using namespace flint;
using namespace flint::graph;
using flint::test::value_of;

namespace {

std::int64_t plus_one(const std::int64_t& x) {
  return x + 1;
}

/// Source (p = producers) -> exchange -> Map (p = consumers) -> Sink.
execution_graph two_vertices(int producers, int consumers, bool pointwise) {
  api::stream_execution_environment env(test::parallelism(consumers));
  auto source = env.generate_sequence(0, 99).set_parallelism(producers);
  auto exchanged = pointwise ? source.rescale() : source.rebalance();
  exchanged.map(plus_one).print();
  return value_of(execution_graph::build(value_of(env.get_job_graph())));
}

/// Consumer subtask -> producer subtasks it reads.
std::vector<std::vector<int>> inputs_of_consumers(const execution_graph& eg) {
  const auto& consumer = eg.job_vertices()[1];
  std::vector<std::vector<int>> out;
  for (std::int32_t i = 0; i < consumer.parallelism; ++i) {
    const auto& ev = eg.vertices()[consumer.first_vertex + static_cast<std::uint32_t>(i)];
    std::vector<int> producers;
    for (std::uint32_t g : ev.consumed_partition_groups) {
      const auto& group = eg.consumed_partition_groups()[g];
      for (std::uint32_t p = 0; p < group.size; ++p)
        producers.push_back(
          eg.vertices()[eg.partitions()[group.first_partition + p].producer].subtask_index);
    }
    out.push_back(producers);
  }
  return out;
}

} // namespace

TEST_CASE("POINTWISE connects equal parallelisms one to one") {
  auto eg = two_vertices(3, 3, true);
  CHECK(inputs_of_consumers(eg) == std::vector<std::vector<int>>{{0}, {1}, {2}});
  CHECK(eg.regions().size() == 3);
}

TEST_CASE("POINTWISE with more producers gives each consumer a contiguous run") {
  auto eg = two_vertices(4, 2, true);
  CHECK(inputs_of_consumers(eg) == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  for (std::uint32_t p = 0; p < 4; ++p)
    CHECK(eg.number_of_subpartitions(p) == 1);
  CHECK(eg.regions().size() == 2);
}

TEST_CASE("POINTWISE with more consumers shares each partition among neighbours") {
  auto eg = two_vertices(2, 5, true);
  CHECK(inputs_of_consumers(eg) == std::vector<std::vector<int>>{{0}, {0}, {0}, {1}, {1}});
  CHECK(eg.number_of_subpartitions(0) == 3);
  CHECK(eg.number_of_subpartitions(1) == 2);
  // Every subpartition is read by exactly one consumer.
  std::set<std::pair<int, int>> read;
  for (std::uint32_t v = eg.job_vertices()[1].first_vertex; v < eg.vertices().size(); ++v) {
    if (eg.vertices()[v].job_vertex != 1)
      continue;
    auto tdd = value_of(make_task_deployment_descriptor(eg, v));
    REQUIRE(tdd.input_gates.size() == 1);
    REQUIRE(tdd.input_gates[0].partition_numbers.size() == 1);
    CHECK(read
            .emplace(tdd.input_gates[0].partition_numbers[0],
                     tdd.input_gates[0].consumed_subpartition_index)
            .second);
  }
  CHECK(read.size() == 5);
}

TEST_CASE("ALL_TO_ALL consumers share one consumed partition group") {
  auto eg = two_vertices(3, 4, false);
  CHECK(inputs_of_consumers(eg) == std::vector<std::vector<int>>(4, std::vector<int>{0, 1, 2}));
  // One group for the edge, not producers x consumers edges.
  CHECK(eg.consumed_partition_groups().size() == 1);
  CHECK(eg.consumer_vertex_groups().size() == 1);
  for (std::uint32_t p = 0; p < 3; ++p) {
    CHECK(eg.partitions()[p].consumer_vertex_group == 0);
    CHECK(eg.number_of_subpartitions(p) == 4);
  }
  CHECK(eg.regions().size() == 1);
}

TEST_CASE("a task deployment descriptor names what the subtask produces and reads") {
  auto eg = two_vertices(3, 4, false);
  auto source_tdd = value_of(make_task_deployment_descriptor(eg, 1));
  CHECK(source_tdd.task_name == "Source: Sequence Source (2/3)");
  CHECK(source_tdd.subtask_index == 1);
  CHECK(source_tdd.parallelism == 3);
  CHECK(source_tdd.max_parallelism == 128);
  CHECK(source_tdd.attempt_number == 0);
  CHECK(source_tdd.input_gates.empty());
  REQUIRE(source_tdd.produced_partitions.size() == 1);
  CHECK(source_tdd.produced_partitions[0].partition_number == 1);
  CHECK(source_tdd.produced_partitions[0].number_of_subpartitions == 4);
  CHECK(source_tdd.produced_partitions[0].partitioner == partitioner_kind::rebalance);
  CHECK(source_tdd.produced_partitions[0].result_id == eg.results()[0].id);

  auto map_tdd = value_of(make_task_deployment_descriptor(eg, 3 + 2));
  CHECK(map_tdd.task_name == "Map -> Sink: Print to Std. Out (3/4)");
  CHECK(map_tdd.produced_partitions.empty());
  REQUIRE(map_tdd.input_gates.size() == 1);
  CHECK(map_tdd.input_gates[0].consumed_subpartition_index == 2);
  CHECK(map_tdd.input_gates[0].partition_numbers == std::vector<std::int32_t>{0, 1, 2});
  CHECK(map_tdd.input_gates[0].consumed_result_id == eg.results()[0].id);
  CHECK(map_tdd.job_vertex_id == eg.job_vertex_of(1).id);

  CHECK_FALSE(make_task_deployment_descriptor(eg, 99).has_value());
}

TEST_CASE("a parallelism above the max parallelism is refused") {
  api::stream_execution_environment env(test::parallelism(4));
  env.set_max_parallelism(2);
  env.generate_sequence(0, 9).print();
  auto eg = execution_graph::build(value_of(env.get_job_graph()));
  REQUIRE_FALSE(eg.has_value());
  CHECK(eg.error().code == errc::invalid_argument);
  CHECK(eg.error().message.find("is higher than the max parallelism (2)") != std::string::npos);
}

TEST_CASE("an execution follows Flink's life cycle") {
  auto eg = two_vertices(1, 1, false);
  CHECK(eg.transition_execution(0, execution_state::scheduled).has_value());
  CHECK(eg.transition_execution(0, execution_state::deploying).has_value());
  CHECK(eg.transition_execution(0, execution_state::initializing).has_value());
  CHECK(eg.transition_execution(0, execution_state::running).has_value());
  CHECK(eg.transition_execution(0, execution_state::finished).has_value());
  CHECK(eg.vertices()[0].current_execution.state() == execution_state::finished);

  CHECK(eg.transition_execution(1, execution_state::deploying).has_value());
  CHECK(eg.transition_execution(1, execution_state::running).has_value());
  CHECK(eg.transition_execution(1, execution_state::canceling).has_value());
  CHECK(eg.transition_execution(1, execution_state::canceled).has_value());
  CHECK(eg.reset_for_new_execution(1).has_value());
  CHECK(eg.vertices()[1].current_execution.attempt_number() == 1);
  CHECK(eg.vertices()[1].current_execution.state() == execution_state::created);
  CHECK(eg.attempt_id(1).attempt_number == 1);
}

TEST_CASE("two execution graphs of one job graph name their attempts apart, as Flink prints them") {
  api::stream_execution_environment env(test::parallelism(2));
  env.generate_sequence(0, 9).map(plus_one).print();
  auto job = value_of(env.get_job_graph());
  auto first = value_of(execution_graph::build(job));
  auto second = value_of(execution_graph::build(job));
  // Equal topologies hash to equal job vertex ids; only the graph's random id tells them apart.
  CHECK(first.vertex_id(0) == second.vertex_id(0));
  CHECK(first.id() != second.id());
  CHECK(first.attempt_id(0) != second.attempt_id(0));
  CHECK(first.attempt_id(0).execution_graph == first.id());
  CHECK(value_of(make_task_deployment_descriptor(first, 1)).execution_graph_id == first.id());

  auto fixed = value_of(execution_graph::build(job, execution_graph_id{0xab, 0xcd}));
  REQUIRE(fixed.vertices()[1].job_vertex == 0);
  CHECK(fixed.attempt_id(1).to_string()
        == "00000000000000ab00000000000000cd_" + fixed.job_vertex_of(0).id.to_string() + "_1_0");
}

TEST_CASE("illegal execution state transitions are refused") {
  auto eg = two_vertices(1, 1, false);
  auto refused = eg.transition_execution(0, execution_state::running);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::illegal_state);
  CHECK(
    refused.error().message
    == "Source: Sequence Source (1/1): Illegal execution state transition from CREATED to RUNNING.");
  CHECK(eg.vertices()[0].current_execution.state() == execution_state::created);

  CHECK_FALSE(eg.transition_execution(0, execution_state::finished).has_value());
  CHECK_FALSE(eg.transition_execution(0, execution_state::canceling).has_value());
  CHECK_FALSE(eg.reset_for_new_execution(0).has_value());

  REQUIRE(eg.transition_execution(0, execution_state::failed).has_value());
  auto from_terminal = eg.transition_execution(0, execution_state::running);
  REQUIRE_FALSE(from_terminal.has_value());
  CHECK(
    from_terminal.error().message
    == "Source: Sequence Source (1/1): Cannot leave terminal state FAILED to transition to RUNNING.");

  CHECK_FALSE(is_legal_transition(execution_state::scheduled, execution_state::running));
  CHECK_FALSE(is_legal_transition(execution_state::canceling, execution_state::running));
  CHECK_FALSE(is_legal_transition(execution_state::running, execution_state::deploying));
  CHECK_FALSE(is_legal_transition(execution_state::finished, execution_state::failed));
  CHECK_FALSE(is_legal_transition(execution_state::canceled, execution_state::created));
  CHECK(is_legal_transition(execution_state::deploying, execution_state::failed));
  CHECK(is_legal_transition(execution_state::canceling, execution_state::canceled));
  // Every state may fail except the terminal ones.
  for (int s = 0; s <= static_cast<int>(execution_state::reconciling); ++s) {
    auto state = static_cast<execution_state>(s);
    CHECK(is_legal_transition(state, execution_state::failed) == !is_terminal(state));
  }
}

TEST_CASE("illegal job status transitions are refused") {
  auto eg = two_vertices(1, 1, false);
  CHECK(eg.state() == job_status::created);
  auto refused = eg.transition_state(job_status::finished);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::illegal_state);
  CHECK(refused.error().message == "Illegal job status transition from CREATED to FINISHED.");
  CHECK(eg.state() == job_status::created);

  CHECK(eg.transition_state(job_status::running).has_value());
  CHECK(eg.transition_state(job_status::failing).has_value());
  CHECK(eg.transition_state(job_status::restarting).has_value());
  CHECK(eg.transition_state(job_status::running).has_value());
  CHECK(eg.transition_state(job_status::finished).has_value());
  auto from_terminal = eg.transition_state(job_status::running);
  REQUIRE_FALSE(from_terminal.has_value());
  CHECK(from_terminal.error().message
        == "Job is trying to leave terminal state FINISHED for RUNNING.");

  CHECK_FALSE(is_legal_transition(job_status::failing, job_status::finished));
  CHECK_FALSE(is_legal_transition(job_status::cancelling, job_status::running));
  CHECK_FALSE(is_legal_transition(job_status::suspended, job_status::running));
  CHECK_FALSE(is_legal_transition(job_status::canceled, job_status::restarting));
  CHECK(is_legal_transition(job_status::created, job_status::cancelling));
  CHECK(is_globally_terminal(job_status::failed));
  CHECK_FALSE(is_globally_terminal(job_status::suspended));
  CHECK(is_terminal(job_status::suspended));
}
