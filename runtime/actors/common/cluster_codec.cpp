#include "runtime/actors/common/cluster_codec.hpp"

#include <cstdio>

#include "schemas/codec_support.hpp"

namespace flint::cluster {

std::string resource_profile::to_string() const {
  if (is_unknown())
    return "ResourceProfile{UNKNOWN}";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "ResourceProfile{cpuCores=%.2f, taskHeapMemory=%lldmb}",
                cpu_cores, static_cast<long long>(task_heap_memory_mb));
  return buf;
}

} // namespace flint::cluster

namespace flint::wire {

void put(schema::Id128::Builder b, const rpc::fencing_token& t) {
  b.setUpper(t.hi);
  b.setLower(t.lo);
}

expected<unit> get(schema::Id128::Reader r, rpc::fencing_token& out) {
  out = {r.getUpper(), r.getLower()};
  return unit{};
}

void put(schema::ResourceProfile::Builder b, const cluster::resource_profile& p) {
  b.setCpuCores(p.cpu_cores);
  b.setTaskHeapMemoryMb(p.task_heap_memory_mb);
}

expected<unit> get(schema::ResourceProfile::Reader r, cluster::resource_profile& out) {
  out = {r.getCpuCores(), r.getTaskHeapMemoryMb()};
  return unit{};
}

void put(schema::SlotId::Builder b, const cluster::slot_id& s) {
  b.setOwner(as_text(s.owner));
  b.setSlotNumber(s.slot_number);
}

expected<unit> get(schema::SlotId::Reader r, cluster::slot_id& out) {
  out = {text(r.getOwner()), r.getSlotNumber()};
  return unit{};
}

void put(schema::SlotReport::Builder b, const cluster::slot_report& s) {
  auto list = b.initSlots(static_cast<unsigned>(s.slots.size()));
  for (unsigned i = 0; i < s.slots.size(); ++i) {
    const auto& x = s.slots[i];
    auto out = list[i];
    put(out.initId(), x.id);
    put(out.initProfile(), x.profile);
    out.setHasAllocation(x.allocation.has_value());
    if (x.allocation)
      put(out.initAllocation(), *x.allocation);
    out.setHasJob(x.job.has_value());
    if (x.job)
      put(out.initJob(), *x.job);
  }
}

expected<unit> get(schema::SlotReport::Reader r, cluster::slot_report& out) {
  // Ids, profiles and slot ids cannot fail to read: only their callers' numbers can.
  out.slots.clear();
  for (auto s : r.getSlots()) {
    cluster::slot_status x;
    (void)get(s.getId(), x.id);
    (void)get(s.getProfile(), x.profile);
    if (s.getHasAllocation())
      (void)get(s.getAllocation(), x.allocation.emplace());
    if (s.getHasJob())
      (void)get(s.getJob(), x.job.emplace());
    out.slots.push_back(std::move(x));
  }
  return unit{};
}

void put(schema::SlotOffer::Builder b, const cluster::slot_offer& s) {
  put(b.initAllocation(), s.allocation);
  b.setSlotIndex(s.slot_index);
  put(b.initProfile(), s.profile);
}

expected<unit> get(schema::SlotOffer::Reader r, cluster::slot_offer& out) {
  (void)get(r.getAllocation(), out.allocation);
  out.slot_index = r.getSlotIndex();
  return get(r.getProfile(), out.profile);
}

void put(schema::TaskManagerLocation::Builder b, const cluster::task_manager_location& l) {
  b.setId(as_text(l.id));
  b.setHost(as_text(l.host));
  b.setDataPort(l.data_port);
}

expected<unit> get(schema::TaskManagerLocation::Reader r, cluster::task_manager_location& out) {
  out = {text(r.getId()), text(r.getHost()), r.getDataPort()};
  return unit{};
}

void put(schema::ExecutionAttemptId::Builder b, const graph::execution_attempt_id& a) {
  put(b.initExecutionGraph(), a.execution_graph);
  put(b.initJobVertex(), a.job_vertex);
  b.setSubtaskIndex(a.subtask_index);
  b.setAttemptNumber(a.attempt_number);
}

expected<unit> get(schema::ExecutionAttemptId::Reader r, graph::execution_attempt_id& out) {
  (void)get(r.getExecutionGraph(), out.execution_graph);
  (void)get(r.getJobVertex(), out.job_vertex);
  out.subtask_index = r.getSubtaskIndex();
  out.attempt_number = r.getAttemptNumber();
  return unit{};
}

void put(schema::TaskExecutionState::Builder b, const cluster::task_execution_state& s) {
  put(b.initJob(), s.job);
  put(b.initAttempt(), s.attempt);
  b.setState(to_wire(s.state));
  b.setFailureCause(as_text(s.failure_cause));
}

expected<unit> get(schema::TaskExecutionState::Reader r, cluster::task_execution_state& out) {
  if (auto ok = from_wire(r.getState(), out.state); !ok)
    return make_error(errc::malformed_message, "task execution state: " + ok.error().message);
  (void)get(r.getJob(), out.job);
  (void)get(r.getAttempt(), out.attempt);
  out.failure_cause = text(r.getFailureCause());
  return unit{};
}

void put(schema::Decline::Builder b, const registration::registration_decline& d) {
  b.setReason(as_text(d.reason));
}

expected<unit> get(schema::Decline::Reader r, registration::registration_decline& out) {
  out.reason = text(r.getReason());
  return unit{};
}

void put(schema::ResultPartitionId::Builder b, const graph::intermediate_result_partition_id& p) {
  put(b.initResultId(), p.result);
  b.setPartitionNumber(p.partition_number);
}

expected<unit> get(schema::ResultPartitionId::Reader r,
                   graph::intermediate_result_partition_id& out) {
  (void)get(r.getResultId(), out.result);
  out.partition_number = r.getPartitionNumber();
  return unit{};
}

std::uint8_t to_wire(graph::job_status s) {
  return static_cast<std::uint8_t>(s);
}

expected<unit> from_wire(std::uint8_t number, graph::job_status& out) {
  if (number > static_cast<std::uint8_t>(graph::job_status::reconciling))
    return make_error(errc::malformed_message,
                      "unknown job status number " + std::to_string(number));
  out = static_cast<graph::job_status>(number);
  return unit{};
}

std::uint8_t to_wire(graph::execution_state s) {
  return static_cast<std::uint8_t>(s);
}

expected<unit> from_wire(std::uint8_t number, graph::execution_state& out) {
  if (number > static_cast<std::uint8_t>(graph::execution_state::reconciling))
    return make_error(errc::malformed_message, "unknown state number " + std::to_string(number));
  out = static_cast<graph::execution_state>(number);
  return unit{};
}

} // namespace flint::wire
