// The Dispatcher's codecs (dispatcher_gateway.hpp).

#include <doctest/doctest.h>

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/graph/codec/job_graph_codec.hpp"
#include "test/runtime/actors/protocol/codec_checks.hpp"

using namespace flint;
using namespace flint::dispatcher;
using namespace flint::test::protocol;

namespace {

/// A source feeding a map over a rebalance edge, every setting off its default.
graph::job_graph sample_job_graph() {
  graph::job_graph g;
  g.job_id = sample_id<graph::job_id>(1);
  g.name = "protocol test job";

  graph::job_vertex source;
  source.id = sample_id<graph::job_vertex_id>(2);
  source.name = "Source: Collection Source";
  source.parallelism = 2;
  source.max_parallelism = 64;
  source.invokable = graph::task_kind::source_stream_task;
  source.operators = {{1,
                       sample_id<graph::operator_id>(3),
                       "Source: Collection Source",
                       std::string("src-uid"),
                       "source.collection",
                       0,
                       {},
                       {0},
                       7}};
  source.produced_data_sets = {0};

  graph::job_vertex map;
  map.id = sample_id<graph::job_vertex_id>(4);
  map.name = "Map";
  map.parallelism = 3;
  map.operators = {
    {2, sample_id<graph::operator_id>(5), "Map", std::nullopt, "map", 0, {}, {}, 100}};
  map.inputs = {0};

  g.vertices = {source, map};
  g.data_sets = {{sample_id<graph::intermediate_data_set_id>(6),
                  0,
                  graph::result_partition_type::pipelined_bounded,
                  {0}}};
  g.edges = {{0, 1, graph::distribution_pattern::all_to_all, "REBALANCE",
              graph::partitioner_kind::rebalance, 0, 1, 2}};
  g.slot_sharing_groups = {{"default", {0, 1}}};
  g.checkpointing = {1000, {0}, {0, 1}, {0, 1}};
  g.execution_config = {64, 7, false, graph::global_data_exchange_mode::pointwise_edges_pipelined, {}};
  return g;
}

submit_job_request sample_submit() {
  return {sample_job_graph()};
}

job_details sample_details(int n, graph::job_status status) {
  return {sample_id<graph::job_id>(10 + n),
          sample_text("job"),
          status,
          1700000000000 + n,
          status == graph::job_status::running ? -1 : 1700000005000 + n,
          4 + n};
}

job_list sample_list() {
  return {{sample_details(0, graph::job_status::running),
           sample_details(1, graph::job_status::finished),
           sample_details(2, graph::job_status::failed)}};
}

job_result sample_result() {
  return {sample_id<graph::job_id>(20), graph::job_status::failed,
          sample_text("java.lang.Exception: boom"), 12345};
}

} // namespace

TEST_SUITE("dispatcher codecs") {
  TEST_CASE("the sample job graph is valid") {
    auto valid = sample_job_graph().validate();
    CHECK_MESSAGE(valid.has_value(), (valid ? std::string{} : valid.error().to_string()));
  }

  TEST_CASE("a submit job request round-trips with its job graph") {
    check_round_trip(sample_submit());
  }

  TEST_CASE("a job id request round-trips") {
    check_round_trip(job_id_request{sample_id<graph::job_id>(30)});
  }

  TEST_CASE("a job list round-trips") {
    check_round_trip(sample_list());
    check_round_trip(job_list{});
  }

  TEST_CASE("a job result round-trips in every status") {
    check_round_trip(sample_result());
    for (int s = 0; s <= static_cast<int>(graph::job_status::reconciling); ++s) {
      auto result = sample_result();
      result.status = static_cast<graph::job_status>(s);
      CAPTURE(s);
      check_round_trip(result);
    }
  }

  TEST_CASE("truncated dispatcher messages are refused as malformed") {
    check_truncated_refused(sample_submit());
    check_truncated_refused(job_id_request{sample_id<graph::job_id>(30)});
    check_truncated_refused(sample_list());
    check_truncated_refused(sample_result());
  }

  TEST_CASE("random bytes are refused as malformed by every dispatcher codec") {
    check_random_refused<submit_job_request>();
    check_random_refused<job_id_request>();
    check_random_refused<job_list>();
    check_random_refused<job_result>();
  }

  TEST_CASE("a submit job request whose nested job graph is broken is refused as malformed") {
    auto request = sample_submit();
    auto bytes = rpc::codec<submit_job_request>::encode(request);
    break_nested_message(bytes, graph::encode_job_graph(request.job_graph));
    auto decoded = rpc::codec<submit_job_request>::decode(bytes);
    check_refused(decoded);
    CHECK(decoded.error().message.find("submit job request") != std::string::npos);
  }

  TEST_CASE("a submit job request whose job graph does not hold together is refused as malformed") {
    auto request = sample_submit();
    request.job_graph.edges[0].target = 7; // no such vertex
    auto bytes = rpc::codec<submit_job_request>::encode(request);
    auto decoded = rpc::codec<submit_job_request>::decode(bytes);
    check_refused(decoded);
  }

  TEST_CASE("a job status number past the enum is refused in a job list and a job result") {
    auto running = sample_list();
    auto failing = running;
    failing.jobs[1].status = graph::job_status::failing;
    auto result = sample_result();
    auto canceled = result;
    canceled.status = graph::job_status::canceled;
    for (int bad : {static_cast<int>(graph::job_status::reconciling) + 1, 0xff}) {
      CAPTURE(bad);
      auto list = rpc::codec<job_list>::decode(
        with_enum_byte(running, failing, static_cast<std::uint8_t>(bad)));
      check_refused(list);
      CHECK(list.error().message.find("job list entry 1") != std::string::npos);
      auto res = rpc::codec<job_result>::decode(
        with_enum_byte(result, canceled, static_cast<std::uint8_t>(bad)));
      check_refused(res);
      CHECK(res.error().message.find("job status") != std::string::npos);
    }
  }

} // TEST_SUITE
