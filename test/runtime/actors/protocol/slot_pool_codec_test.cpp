// The SlotPool's codecs (slot_pool_gateway.hpp).

#include <doctest/doctest.h>

#include "runtime/actors/slot_pool/slot_pool_gateway.hpp"
#include "test/runtime/actors/protocol/codec_checks.hpp"

using namespace flint;
using namespace flint::slot_pool;
using namespace flint::test::protocol;

namespace {

connect_to_resource_manager_request sample_connect() {
  return {sample_token(1), sample_text("resource_manager")};
}

/// allow_queued is true by default, so the sample carries false.
allocate_slot_request sample_allocate() {
  return {sample_id<slot_request_id>(2), sample_profile(), false};
}

allocated_slot sample_allocated() {
  return {sample_id<cluster::allocation_id>(3), 5, sample_location(),
          sample_text("task_executor/tm-7")};
}

release_slot_request sample_release_slot() {
  return {sample_id<slot_request_id>(4), sample_text("task finished")};
}

register_task_manager_request sample_register_tm() {
  return {sample_text("task_executor/tm-7")};
}

release_task_manager_request sample_release_tm() {
  return {sample_text("task_executor/tm-7"), sample_text("heartbeat timeout"), true};
}

offer_slots_request sample_offer_slots() {
  return {sample_location(), sample_text("task_executor/tm-7"), {sample_offer(3), sample_offer(4)}};
}

fail_allocation_request sample_fail_allocation() {
  return {sample_id<cluster::allocation_id>(5), sample_text("slot request timed out")};
}

} // namespace

TEST_SUITE("slot pool codecs") {
  TEST_CASE("a connect to resource manager request round-trips") {
    check_round_trip(sample_connect());
  }

  TEST_CASE("an allocate slot request round-trips with either queueing choice") {
    check_round_trip(sample_allocate());
    auto queued = sample_allocate();
    queued.allow_queued = true;
    check_round_trip(queued);
  }

  TEST_CASE("an allocated slot round-trips") {
    check_round_trip(sample_allocated());
  }

  TEST_CASE("a release slot request round-trips") {
    check_round_trip(sample_release_slot());
  }

  TEST_CASE("a slot pool register task manager request round-trips") {
    check_round_trip(sample_register_tm());
  }

  TEST_CASE("a release task manager request round-trips") {
    check_round_trip(sample_release_tm());
  }

  TEST_CASE("a slot pool offer slots request round-trips") {
    check_round_trip(sample_offer_slots());
    check_round_trip(offer_slots_request{sample_location(), "task_executor/tm-7", {}});
  }

  TEST_CASE("a fail allocation request round-trips") {
    check_round_trip(sample_fail_allocation());
  }

  TEST_CASE("truncated slot pool messages are refused as malformed") {
    check_truncated_refused(sample_connect());
    check_truncated_refused(sample_allocate());
    check_truncated_refused(sample_allocated());
    check_truncated_refused(sample_release_slot());
    check_truncated_refused(sample_register_tm());
    check_truncated_refused(sample_release_tm());
    check_truncated_refused(sample_offer_slots());
    check_truncated_refused(sample_fail_allocation());
  }

  TEST_CASE("random bytes are refused as malformed by every slot pool codec") {
    check_random_refused<connect_to_resource_manager_request>();
    check_random_refused<allocate_slot_request>();
    check_random_refused<allocated_slot>();
    check_random_refused<release_slot_request>();
    check_random_refused<register_task_manager_request>();
    check_random_refused<release_task_manager_request>();
    check_random_refused<offer_slots_request>();
    check_random_refused<fail_allocation_request>();
  }

} // TEST_SUITE
