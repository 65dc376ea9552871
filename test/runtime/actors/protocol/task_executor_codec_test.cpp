// The TaskExecutor's codecs (task_executor_gateway.hpp).

#include <doctest/doctest.h>

#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/graph/codec/job_graph_codec.hpp"
#include "test/runtime/actors/protocol/codec_checks.hpp"

using namespace flint;
using namespace flint::task_executor;
using namespace flint::test::protocol;

namespace {

request_slot_request sample_request_slot() {
  return {sample_slot_id(1), sample_id<graph::job_id>(1),    sample_id<cluster::allocation_id>(2),
          sample_profile(),  sample_text("job_master/0123"), sample_token(3)};
}

/// Produces two partitions and reads two gates, so every descriptor field is set.
graph::task_deployment_descriptor sample_tdd() {
  graph::task_deployment_descriptor tdd;
  tdd.job_id = sample_id<graph::job_id>(4);
  tdd.job_vertex_id = sample_id<graph::job_vertex_id>(5);
  tdd.task_name = "Map -> Filter (2/3)";
  tdd.subtask_index = 1;
  tdd.parallelism = 3;
  tdd.max_parallelism = 256;
  tdd.attempt_number = 2;
  tdd.produced_partitions = {
    {sample_id<graph::intermediate_data_set_id>(6), 1, graph::result_partition_type::pipelined, 4,
     graph::partitioner_kind::key_group, 256},
    {sample_id<graph::intermediate_data_set_id>(7), 1, graph::result_partition_type::blocking, 2,
     graph::partitioner_kind::rebalance, 0}};
  tdd.input_gates = {{sample_id<graph::intermediate_data_set_id>(8),
                      graph::result_partition_type::pipelined,
                      1,
                      {0, 1, 2},
                      {}},
                     {sample_id<graph::intermediate_data_set_id>(9),
                      graph::result_partition_type::blocking,
                      1,
                      {4},
                      {}}};
  return tdd;
}

submit_task_request sample_submit_task() {
  return {sample_tdd(), sample_token(10), sample_id<cluster::allocation_id>(11)};
}

cancel_task_request sample_cancel_task() {
  return {sample_id<graph::job_id>(12), sample_attempt()};
}

free_slot_request sample_free_slot() {
  return {sample_id<graph::job_id>(13), sample_id<cluster::allocation_id>(14),
          sample_text("job finished")};
}

disconnect_job_manager_request sample_disconnect_jm() {
  return {sample_id<graph::job_id>(15), sample_text("job master lost leadership")};
}

disconnect_resource_manager_request sample_disconnect_rm() {
  return {sample_text("resource manager lost leadership")};
}

} // namespace

TEST_SUITE("task executor codecs") {
  TEST_CASE("a task executor request slot request round-trips") {
    check_round_trip(sample_request_slot());
  }

  TEST_CASE("a submit task request round-trips with its deployment descriptor") {
    check_round_trip(sample_submit_task());
  }

  TEST_CASE("a cancel task request round-trips") {
    check_round_trip(sample_cancel_task());
  }

  TEST_CASE("a free slot request round-trips") {
    check_round_trip(sample_free_slot());
  }

  TEST_CASE("a task executor disconnect job manager request round-trips") {
    check_round_trip(sample_disconnect_jm());
  }

  TEST_CASE("a release partitions request round-trips") {
    check_round_trip(task_executor::release_partitions_request{
      graph::job_id{1, 2},
      {graph::intermediate_result_partition_id{graph::intermediate_data_set_id{3, 4}, 0},
       graph::intermediate_result_partition_id{graph::intermediate_data_set_id{3, 4}, 7}}});
    check_round_trip(task_executor::release_partitions_request{graph::job_id{1, 2}, {}});
  }

  TEST_CASE("a task executor disconnect resource manager request round-trips") {
    check_round_trip(sample_disconnect_rm());
  }

  TEST_CASE("truncated task executor messages are refused as malformed") {
    check_truncated_refused(sample_request_slot());
    check_truncated_refused(sample_submit_task());
    check_truncated_refused(sample_cancel_task());
    check_truncated_refused(sample_free_slot());
    check_truncated_refused(sample_disconnect_jm());
    check_truncated_refused(sample_disconnect_rm());
  }

  TEST_CASE("random bytes are refused as malformed by every task executor codec") {
    check_random_refused<request_slot_request>();
    check_random_refused<submit_task_request>();
    check_random_refused<cancel_task_request>();
    check_random_refused<free_slot_request>();
    check_random_refused<disconnect_job_manager_request>();
    check_random_refused<disconnect_resource_manager_request>();
  }

  TEST_CASE("a submit task request whose nested descriptor is broken is refused as malformed") {
    // The outer message stays whole; only the descriptor inside it is broken, which the graph
    // codec must catch and this codec must report as its own failure.
    auto request = sample_submit_task();
    auto bytes = rpc::codec<submit_task_request>::encode(request);
    break_nested_message(bytes, graph::encode_task_deployment_descriptor(request.tdd));
    auto decoded = rpc::codec<submit_task_request>::decode(bytes);
    check_refused(decoded);
    CHECK(decoded.error().message.find("submit task request") != std::string::npos);
  }

} // TEST_SUITE
