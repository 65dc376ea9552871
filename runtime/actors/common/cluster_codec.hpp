#pragma once
/// The Cap'n Proto form of the hand-written cluster types (schemas/cluster.capnp carries
/// `$Flint.type` for each): the `put`/`get` conversions the generated protocol codecs call
/// (schemas/gen/flint_capnpc.cpp). Included by generated code and the few hand codecs only:
/// this header pulls in generated Cap'n Proto code.

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/registration/registration_response.hpp"
#include "runtime/actors/envelope/fencing_token.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/intermediate_result_partition.hpp"
#include "runtime/graph/job_status.hpp"
#include "schemas/cluster.capnp.h"

namespace flint::wire {

template <class Tag>
void put(schema::Id128::Builder b, const graph::abstract_id<Tag>& id) {
  b.setUpper(id.upper());
  b.setLower(id.lower());
}
template <class Tag>
expected<unit> get(schema::Id128::Reader r, graph::abstract_id<Tag>& out) {
  out = graph::abstract_id<Tag>{r.getUpper(), r.getLower()};
  return unit{};
}
void put(schema::Id128::Builder b, const rpc::fencing_token& t);
expected<unit> get(schema::Id128::Reader r, rpc::fencing_token& out);

void put(schema::ResourceProfile::Builder b, const cluster::resource_profile& p);
expected<unit> get(schema::ResourceProfile::Reader r, cluster::resource_profile& out);

void put(schema::SlotId::Builder b, const cluster::slot_id& s);
expected<unit> get(schema::SlotId::Reader r, cluster::slot_id& out);

void put(schema::SlotReport::Builder b, const cluster::slot_report& s);
expected<unit> get(schema::SlotReport::Reader r, cluster::slot_report& out);

void put(schema::SlotOffer::Builder b, const cluster::slot_offer& s);
expected<unit> get(schema::SlotOffer::Reader r, cluster::slot_offer& out);

void put(schema::TaskManagerLocation::Builder b, const cluster::task_manager_location& l);
expected<unit> get(schema::TaskManagerLocation::Reader r, cluster::task_manager_location& out);

void put(schema::ExecutionAttemptId::Builder b, const graph::execution_attempt_id& a);
expected<unit> get(schema::ExecutionAttemptId::Reader r, graph::execution_attempt_id& out);

void put(schema::TaskExecutionState::Builder b, const cluster::task_execution_state& s);
/// Fails on a state number that is not an execution_state.
expected<unit> get(schema::TaskExecutionState::Reader r, cluster::task_execution_state& out);

void put(schema::Decline::Builder b, const registration::registration_decline& d);
expected<unit> get(schema::Decline::Reader r, registration::registration_decline& out);

void put(schema::ResultPartitionId::Builder b, const graph::intermediate_result_partition_id& p);
expected<unit> get(schema::ResultPartitionId::Reader r,
                   graph::intermediate_result_partition_id& out);

/// Enums sent as their number. A number past the last one (a broken sender or a newer enum) is
/// errc::malformed_message.
std::uint8_t to_wire(graph::job_status s);
expected<unit> from_wire(std::uint8_t number, graph::job_status& out);
std::uint8_t to_wire(graph::execution_state s);
expected<unit> from_wire(std::uint8_t number, graph::execution_state& out);

} // namespace flint::wire
