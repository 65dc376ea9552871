#pragma once
/// Cap'n Proto conversions of the shared cluster types, for the endpoints' `*_codec.cpp` files
/// (the only includers: this header pulls in generated code).

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/rpc/fencing_token.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/job_status.hpp"
#include "schemas/cluster.capnp.h"

namespace flint::cluster::wire {

template <class Tag>
void write(schema::Id128::Builder b, const graph::abstract_id<Tag>& id) {
  b.setUpper(id.upper());
  b.setLower(id.lower());
}
template <class Id>
Id read_id(schema::Id128::Reader r) {
  return Id{r.getUpper(), r.getLower()};
}
void write(schema::Id128::Builder b, const rpc::fencing_token& t);
rpc::fencing_token read_token(schema::Id128::Reader r);

void write(schema::ResourceProfile::Builder b, const resource_profile& p);
resource_profile read(schema::ResourceProfile::Reader r);

void write(schema::SlotId::Builder b, const slot_id& s);
slot_id read(schema::SlotId::Reader r);

void write(schema::SlotReport::Builder b, const slot_report& s);
slot_report read(schema::SlotReport::Reader r);

void write(schema::SlotOffer::Builder b, const slot_offer& s);
slot_offer read(schema::SlotOffer::Reader r);

void write(schema::TaskManagerLocation::Builder b, const task_manager_location& l);
task_manager_location read(schema::TaskManagerLocation::Reader r);

void write(schema::ExecutionAttemptId::Builder b, const graph::execution_attempt_id& a);
graph::execution_attempt_id read(schema::ExecutionAttemptId::Reader r);

void write(schema::TaskExecutionState::Builder b, const task_execution_state& s);
/// Fails on a state number that is not an execution_state.
expected<task_execution_state> read(schema::TaskExecutionState::Reader r);

/// A graph::job_status sent as its number; a number past the last one (a broken sender or a
/// newer enum) is errc::malformed_message naming `what`.
expected<graph::job_status> read_job_status(std::uint8_t number, const std::string& what);

void write_offers(capnp::List<schema::SlotOffer>::Builder list,
                  const std::vector<slot_offer>& offers);
std::vector<slot_offer> read_offers(capnp::List<schema::SlotOffer>::Reader list);
/// First-segment size for a message carrying `offers`.
unsigned offers_words(const std::vector<slot_offer>& offers);

} // namespace flint::cluster::wire
