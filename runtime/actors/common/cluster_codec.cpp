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

namespace flint::cluster::wire {

using flint::wire::as_text;
using flint::wire::text;

void write(schema::Id128::Builder b, const rpc::fencing_token& t) {
  b.setUpper(t.hi);
  b.setLower(t.lo);
}

rpc::fencing_token read_token(schema::Id128::Reader r) {
  return {r.getUpper(), r.getLower()};
}

void write(schema::ResourceProfile::Builder b, const resource_profile& p) {
  b.setCpuCores(p.cpu_cores);
  b.setTaskHeapMemoryMb(p.task_heap_memory_mb);
}

resource_profile read(schema::ResourceProfile::Reader r) {
  return {r.getCpuCores(), r.getTaskHeapMemoryMb()};
}

void write(schema::SlotId::Builder b, const slot_id& s) {
  b.setOwner(as_text(s.owner));
  b.setSlotNumber(s.slot_number);
}

slot_id read(schema::SlotId::Reader r) {
  return {text(r.getOwner()), r.getSlotNumber()};
}

void write(schema::SlotReport::Builder b, const slot_report& s) {
  auto list = b.initSlots(static_cast<unsigned>(s.slots.size()));
  for (unsigned i = 0; i < s.slots.size(); ++i) {
    const auto& x = s.slots[i];
    auto out = list[i];
    write(out.initId(), x.id);
    write(out.initProfile(), x.profile);
    out.setHasAllocation(x.allocation.has_value());
    if (x.allocation)
      write(out.initAllocation(), *x.allocation);
    out.setHasJob(x.job.has_value());
    if (x.job)
      write(out.initJob(), *x.job);
  }
}

slot_report read(schema::SlotReport::Reader r) {
  slot_report out;
  for (auto s : r.getSlots()) {
    slot_status x;
    x.id = read(s.getId());
    x.profile = read(s.getProfile());
    if (s.getHasAllocation())
      x.allocation = read_id<allocation_id>(s.getAllocation());
    if (s.getHasJob())
      x.job = read_id<graph::job_id>(s.getJob());
    out.slots.push_back(std::move(x));
  }
  return out;
}

void write(schema::SlotOffer::Builder b, const slot_offer& s) {
  write(b.initAllocation(), s.allocation);
  b.setSlotIndex(s.slot_index);
  write(b.initProfile(), s.profile);
}

slot_offer read(schema::SlotOffer::Reader r) {
  return {read_id<allocation_id>(r.getAllocation()), r.getSlotIndex(), read(r.getProfile())};
}

void write(schema::TaskManagerLocation::Builder b, const task_manager_location& l) {
  b.setId(as_text(l.id));
  b.setHost(as_text(l.host));
  b.setDataPort(l.data_port);
}

task_manager_location read(schema::TaskManagerLocation::Reader r) {
  return {text(r.getId()), text(r.getHost()), r.getDataPort()};
}

void write(schema::ExecutionAttemptId::Builder b, const graph::execution_attempt_id& a) {
  write(b.initJobVertex(), a.job_vertex);
  b.setSubtaskIndex(a.subtask_index);
  b.setAttemptNumber(a.attempt_number);
}

graph::execution_attempt_id read(schema::ExecutionAttemptId::Reader r) {
  return {read_id<graph::job_vertex_id>(r.getJobVertex()), r.getSubtaskIndex(),
          r.getAttemptNumber()};
}

void write(schema::TaskExecutionState::Builder b, const task_execution_state& s) {
  write(b.initJob(), s.job);
  write(b.initAttempt(), s.attempt);
  b.setState(static_cast<std::uint8_t>(s.state));
  b.setFailureCause(as_text(s.failure_cause));
}

expected<task_execution_state> read(schema::TaskExecutionState::Reader r) {
  auto state = r.getState();
  if (state > static_cast<std::uint8_t>(graph::execution_state::reconciling))
    return make_error(errc::malformed_message,
                      "task execution state: unknown state number " + std::to_string(state));
  return task_execution_state{read_id<graph::job_id>(r.getJob()), read(r.getAttempt()),
                              static_cast<graph::execution_state>(state),
                              text(r.getFailureCause())};
}

expected<graph::job_status> read_job_status(std::uint8_t number, const std::string& what) {
  if (number > static_cast<std::uint8_t>(graph::job_status::reconciling))
    return make_error(errc::malformed_message,
                      what + ": unknown job status number " + std::to_string(number));
  return static_cast<graph::job_status>(number);
}

void write_offers(capnp::List<schema::SlotOffer>::Builder list,
                  const std::vector<slot_offer>& offers) {
  for (unsigned i = 0; i < offers.size(); ++i)
    write(list[i], offers[i]);
}

std::vector<slot_offer> read_offers(capnp::List<schema::SlotOffer>::Reader list) {
  std::vector<slot_offer> out;
  out.reserve(list.size());
  for (auto o : list)
    out.push_back(read(o));
  return out;
}

unsigned offers_words(const std::vector<slot_offer>& offers) {
  // A slot offer is 7 words: its struct, its allocation id and its profile.
  return flint::wire::small_message_words + 8 * static_cast<unsigned>(offers.size());
}

} // namespace flint::cluster::wire
