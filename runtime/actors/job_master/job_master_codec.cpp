#include "runtime/actors/job_master/job_master_gateway.hpp"

#include "runtime/actors/common/cluster_codec.hpp"
#include "schemas/codec_support.hpp"
#include "schemas/job_master.capnp.h"

namespace flint::rpc {

namespace {

namespace jm = job_master;
using cluster::wire::read;
using cluster::wire::read_token;
using cluster::wire::read_id;
using cluster::wire::write;

using wire::as_text;
using wire::small_message_words;
using wire::text;

using cluster::wire::read_job_status;

using cluster::wire::offers_words;
using cluster::wire::read_offers;
using cluster::wire::write_offers;

} // namespace

// -- register_task_manager ------------------------------------------------------------------------

std::vector<char> codec<jm::register_task_manager_request>::encode(
  const jm::register_task_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::JmRegisterTaskManagerRequest>();
  b.setTaskExecutorAddress(as_text(x.task_executor_address));
  write(b.initLocation(), x.location);
  return wire::to_bytes(message);
}

expected<jm::register_task_manager_request>
codec<jm::register_task_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::JmRegisterTaskManagerRequest>(
    bytes, "register task manager request",
    [](schema::JmRegisterTaskManagerRequest::Reader r)
      -> expected<jm::register_task_manager_request> {
      return jm::register_task_manager_request{text(r.getTaskExecutorAddress()),
                                               read(r.getLocation())};
    });
}

std::vector<char> codec<jm::task_manager_registration_response>::encode(
  const jm::task_manager_registration_response& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::JmTaskManagerRegistrationResponse>();
  if (const auto* ok = std::get_if<jm::task_manager_registration_success>(&x))
    b.initSuccess().setJobMasterResourceId(as_text(ok->job_master_resource_id));
  else
    b.initDecline().setReason(as_text(std::get<registration::registration_decline>(x).reason));
  return wire::to_bytes(message);
}

expected<jm::task_manager_registration_response>
codec<jm::task_manager_registration_response>::decode(std::span<const char> bytes) {
  using schema_t = schema::JmTaskManagerRegistrationResponse;
  return wire::read<schema_t>(
    bytes, "task manager registration response",
    [](schema_t::Reader r) -> expected<jm::task_manager_registration_response> {
      switch (r.which()) {
        case schema_t::SUCCESS:
          return jm::task_manager_registration_response{jm::task_manager_registration_success{
            text(r.getSuccess().getJobMasterResourceId())}};
        case schema_t::DECLINE:
          return jm::task_manager_registration_response{
            registration::registration_decline{text(r.getDecline().getReason())}};
      }
      // A sender with a newer schema may add alternatives this reader cannot interpret.
      return make_error(errc::malformed_message,
                        "task manager registration response: unknown alternative "
                          + std::to_string(static_cast<unsigned>(r.which())));
    });
}

// -- offer_slots ----------------------------------------------------------------------------------

std::vector<char> codec<jm::offer_slots_request>::encode(const jm::offer_slots_request& x) {
  capnp::MallocMessageBuilder message(offers_words(x.offers));
  auto b = message.initRoot<schema::JmOfferSlotsRequest>();
  b.setTaskManager(as_text(x.task_manager));
  write_offers(b.initOffers(static_cast<unsigned>(x.offers.size())), x.offers);
  return wire::to_bytes(message);
}

expected<jm::offer_slots_request>
codec<jm::offer_slots_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::JmOfferSlotsRequest>(
    bytes, "offer slots request",
    [](schema::JmOfferSlotsRequest::Reader r) -> expected<jm::offer_slots_request> {
      return jm::offer_slots_request{text(r.getTaskManager()), read_offers(r.getOffers())};
    });
}

std::vector<char> codec<jm::offer_slots_response>::encode(const jm::offer_slots_response& x) {
  capnp::MallocMessageBuilder message(offers_words(x.accepted));
  auto b = message.initRoot<schema::JmOfferSlotsResponse>();
  write_offers(b.initAccepted(static_cast<unsigned>(x.accepted.size())), x.accepted);
  return wire::to_bytes(message);
}

expected<jm::offer_slots_response>
codec<jm::offer_slots_response>::decode(std::span<const char> bytes) {
  return wire::read<schema::JmOfferSlotsResponse>(
    bytes, "offer slots response",
    [](schema::JmOfferSlotsResponse::Reader r) -> expected<jm::offer_slots_response> {
      return jm::offer_slots_response{read_offers(r.getAccepted())};
    });
}

// -- update_task_execution_state, request_job_status ----------------------------------------------

std::vector<char> codec<cluster::task_execution_state>::encode(
  const cluster::task_execution_state& x) {
  capnp::MallocMessageBuilder message(small_message_words
                                      + static_cast<unsigned>(x.failure_cause.size() / 8));
  auto b = message.initRoot<schema::TaskExecutionState>();
  // Not cluster::wire::write: it would cut the free-text failure cause at a NUL.
  write(b.initJob(), x.job);
  write(b.initAttempt(), x.attempt);
  b.setState(static_cast<std::uint8_t>(x.state));
  b.setFailureCause(as_text(x.failure_cause));
  return wire::to_bytes(message);
}

expected<cluster::task_execution_state>
codec<cluster::task_execution_state>::decode(std::span<const char> bytes) {
  return wire::read<schema::TaskExecutionState>(
    bytes, "task execution state",
    [](schema::TaskExecutionState::Reader r) -> expected<cluster::task_execution_state> {
      auto state = read(r);
      if (!state)
        return state.error();
      // cluster::wire::read stops the cause at a NUL, as its writer does.
      state->failure_cause = text(r.getFailureCause());
      return state;
    });
}

std::vector<char> codec<jm::job_status_response>::encode(const jm::job_status_response& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::JmJobStatusResponse>();
  b.setStatus(static_cast<std::uint8_t>(x.status));
  auto failures = b.initFailures(static_cast<unsigned>(x.failures.size()));
  for (unsigned i = 0; i < x.failures.size(); ++i) {
    failures[i].setTimestamp(x.failures[i].timestamp);
    failures[i].setTask(as_text(x.failures[i].task));
    failures[i].setLocation(as_text(x.failures[i].location));
    failures[i].setCause(as_text(x.failures[i].cause));
  }
  b.setRestarts(x.restarts);
  b.setTasks(x.tasks);
  b.setTasksRunning(x.tasks_running);
  b.setSlotsNeeded(x.slots_needed);
  b.setSlotsAssigned(x.slots_assigned);
  auto pending = b.initPendingSlotRequests(static_cast<unsigned>(x.pending_slot_requests.size()));
  for (unsigned i = 0; i < x.pending_slot_requests.size(); ++i) {
    pending[i].setRequest(as_text(x.pending_slot_requests[i].request));
    pending[i].setAgeMs(x.pending_slot_requests[i].age_ms);
  }
  b.setRegisteredTaskManagers(x.registered_task_managers);
  return wire::to_bytes(message);
}

expected<jm::job_status_response>
codec<jm::job_status_response>::decode(std::span<const char> bytes) {
  return wire::read<schema::JmJobStatusResponse>(
    bytes, "job status response",
    [](schema::JmJobStatusResponse::Reader r) -> expected<jm::job_status_response> {
      auto status = read_job_status(r.getStatus(), "job status response");
      if (!status)
        return status.error();
      jm::job_status_response x;
      x.status = *status;
      for (auto f : r.getFailures())
        x.failures.push_back(jm::job_failure{f.getTimestamp(), f.getTask().cStr(), f.getLocation().cStr(),
                                             f.getCause().cStr()});
      x.restarts = r.getRestarts();
      x.tasks = r.getTasks();
      x.tasks_running = r.getTasksRunning();
      x.slots_needed = r.getSlotsNeeded();
      x.slots_assigned = r.getSlotsAssigned();
      for (auto p : r.getPendingSlotRequests())
        x.pending_slot_requests.push_back(jm::pending_slot_request{p.getRequest().cStr(), p.getAgeMs()});
      x.registered_task_managers = r.getRegisteredTaskManagers();
      return x;
    });
}

// -- disconnects, fail_slot -----------------------------------------------------------------------

std::vector<char> codec<jm::disconnect_task_manager_request>::encode(
  const jm::disconnect_task_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::JmDisconnectTaskManagerRequest>();
  b.setResourceId(as_text(x.resource_id));
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<jm::disconnect_task_manager_request>
codec<jm::disconnect_task_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::JmDisconnectTaskManagerRequest>(
    bytes, "job master disconnect task manager request",
    [](schema::JmDisconnectTaskManagerRequest::Reader r)
      -> expected<jm::disconnect_task_manager_request> {
      return jm::disconnect_task_manager_request{text(r.getResourceId()), text(r.getCause())};
    });
}

std::vector<char> codec<jm::disconnect_resource_manager_request>::encode(
  const jm::disconnect_resource_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::JmDisconnectResourceManagerRequest>();
  write(b.initResourceManagerId(), x.resource_manager_id);
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<jm::disconnect_resource_manager_request>
codec<jm::disconnect_resource_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::JmDisconnectResourceManagerRequest>(
    bytes, "job master disconnect resource manager request",
    [](schema::JmDisconnectResourceManagerRequest::Reader r)
      -> expected<jm::disconnect_resource_manager_request> {
      return jm::disconnect_resource_manager_request{read_token(r.getResourceManagerId()),
                                                     text(r.getCause())};
    });
}

std::vector<char> codec<jm::fail_slot_request>::encode(const jm::fail_slot_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::JmFailSlotRequest>();
  b.setTaskManager(as_text(x.task_manager));
  write(b.initAllocationId(), x.allocation_id);
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<jm::fail_slot_request> codec<jm::fail_slot_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::JmFailSlotRequest>(
    bytes, "fail slot request",
    [](schema::JmFailSlotRequest::Reader r) -> expected<jm::fail_slot_request> {
      return jm::fail_slot_request{text(r.getTaskManager()),
                                   read_id<cluster::allocation_id>(r.getAllocationId()),
                                   text(r.getCause())};
    });
}

} // namespace flint::rpc
