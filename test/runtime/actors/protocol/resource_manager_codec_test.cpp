// The ResourceManager's codecs (resource_manager_gateway.hpp).

#include <doctest/doctest.h>

#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "test/runtime/actors/protocol/codec_checks.hpp"

using namespace flint;
using namespace flint::resource_manager;
using namespace flint::test::protocol;

namespace {

job_master_registration_request sample_jm_registration() {
  return {sample_token(1), sample_text("job_master/abc"), sample_text("job_master/addr"),
          sample_id<graph::job_id>(2)};
}

job_master_registration_success sample_jm_success() {
  return {sample_token(3), sample_text("resource_manager")};
}

request_slot_request sample_request_slot() {
  return {sample_token(4),
          slot_request{sample_id<graph::job_id>(5), sample_id<cluster::allocation_id>(6),
                       sample_profile(), sample_text("job_master/target")}};
}

task_executor_registration_request sample_te_registration() {
  return {sample_text("task_executor/tm-1"), sample_text("tm-1"), 6121,
          sample_text("cores=4 mem=8g"),     {1.5, 2048},         4};
}

task_executor_registration_success sample_te_success() {
  return {sample_id<cluster::instance_id>(7), sample_text("resource_manager"), 10000};
}

send_slot_report_request sample_slot_report_request() {
  return {sample_text("task_executor/tm-1"), sample_id<cluster::instance_id>(8),
          sample_slot_report()};
}

notify_slot_available_request sample_notify() {
  return {sample_id<cluster::instance_id>(9), sample_slot_id(3),
          sample_id<cluster::allocation_id>(10)};
}

disconnect_task_manager_request sample_disconnect_tm() {
  return {sample_text("task_executor/tm-2"), sample_text("heartbeat timeout")};
}

disconnect_job_manager_request sample_disconnect_jm() {
  return {sample_id<graph::job_id>(11), sample_text("job finished")};
}

resource_overview sample_overview() {
  return {3, 12, 5, 7, {}};
}

} // namespace

TEST_SUITE("resource manager codecs") {
  TEST_CASE("a job master registration request round-trips") {
    check_round_trip(sample_jm_registration());
  }

  TEST_CASE("a job master registration success round-trips") {
    check_round_trip(job_master_registration_response{sample_jm_success()});
  }

  TEST_CASE("a job master registration decline round-trips") {
    check_round_trip(
      job_master_registration_response{registration::registration_decline{sample_text("no")}});
  }

  TEST_CASE("a request slot request round-trips") {
    check_round_trip(sample_request_slot());
  }

  TEST_CASE("a cancel slot request round-trips") {
    check_round_trip(cancel_slot_request_request{sample_id<cluster::allocation_id>(12)});
  }

  TEST_CASE("a task executor registration request round-trips") {
    check_round_trip(sample_te_registration());
  }

  TEST_CASE("a task executor registration success round-trips") {
    check_round_trip(task_executor_registration_response{sample_te_success()});
  }

  TEST_CASE("a task executor registration decline round-trips") {
    check_round_trip(task_executor_registration_response{
      registration::registration_decline{sample_text("stale leader")}});
  }

  TEST_CASE("a slot report with allocated and free slots round-trips") {
    check_round_trip(sample_slot_report_request());
  }

  TEST_CASE("an empty slot report round-trips") {
    check_round_trip(send_slot_report_request{"tm-0", sample_id<cluster::instance_id>(1), {}});
  }

  TEST_CASE("a notify slot available request round-trips") {
    check_round_trip(sample_notify());
  }

  TEST_CASE("a disconnect task manager request round-trips") {
    check_round_trip(sample_disconnect_tm());
  }

  TEST_CASE("a disconnect job manager request round-trips") {
    check_round_trip(sample_disconnect_jm());
  }

  TEST_CASE("a resource overview round-trips") {
    check_round_trip(sample_overview());
  }

  TEST_CASE("truncated resource manager messages are refused as malformed") {
    check_truncated_refused(sample_jm_registration());
    check_truncated_refused(job_master_registration_response{sample_jm_success()});
    check_truncated_refused(
      job_master_registration_response{registration::registration_decline{"no"}});
    check_truncated_refused(sample_request_slot());
    check_truncated_refused(cancel_slot_request_request{sample_id<cluster::allocation_id>(12)});
    check_truncated_refused(sample_te_registration());
    check_truncated_refused(task_executor_registration_response{sample_te_success()});
    check_truncated_refused(sample_slot_report_request());
    check_truncated_refused(sample_notify());
    check_truncated_refused(sample_disconnect_tm());
    check_truncated_refused(sample_disconnect_jm());
    check_truncated_refused(sample_overview());
  }

  TEST_CASE("random bytes are refused as malformed by every resource manager codec") {
    check_random_refused<job_master_registration_request>();
    check_random_refused<job_master_registration_response>();
    check_random_refused<request_slot_request>();
    check_random_refused<cancel_slot_request_request>();
    check_random_refused<task_executor_registration_request>();
    check_random_refused<task_executor_registration_response>();
    check_random_refused<send_slot_report_request>();
    check_random_refused<notify_slot_available_request>();
    check_random_refused<disconnect_task_manager_request>();
    check_random_refused<disconnect_job_manager_request>();
    check_random_refused<resource_overview>();
  }

} // TEST_SUITE
