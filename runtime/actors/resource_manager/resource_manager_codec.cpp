#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"

#include "runtime/actors/common/cluster_codec.hpp"
#include "schemas/codec_support.hpp"
#include "schemas/resource_manager.capnp.h"

namespace flint::rpc {

namespace {

namespace rm = resource_manager;
using cluster::wire::read;
using cluster::wire::read_id;
using cluster::wire::read_token;
using cluster::wire::write;

using wire::as_text;
using wire::small_message_words;
using wire::text;

template <class Builder>
void write_decline(Builder b, const registration::registration_decline& d) {
  b.initDecline().setReason(as_text(d.reason));
}

} // namespace

// -- register_job_manager -------------------------------------------------------------------------

std::vector<char> codec<rm::job_master_registration_request>::encode(
  const rm::job_master_registration_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmJobMasterRegistrationRequest>();
  write(b.initJobMasterId(), x.job_master_id);
  b.setJobMasterResourceId(as_text(x.job_master_resource_id));
  b.setJobMasterAddress(as_text(x.job_master_address));
  write(b.initJobId(), x.job_id);
  return wire::to_bytes(message);
}

expected<rm::job_master_registration_request>
codec<rm::job_master_registration_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmJobMasterRegistrationRequest>(
    bytes, "job master registration request",
    [](schema::RmJobMasterRegistrationRequest::Reader r)
      -> expected<rm::job_master_registration_request> {
      return rm::job_master_registration_request{
        read_token(r.getJobMasterId()), text(r.getJobMasterResourceId()),
        text(r.getJobMasterAddress()), read_id<graph::job_id>(r.getJobId())};
    });
}

std::vector<char> codec<rm::job_master_registration_response>::encode(
  const rm::job_master_registration_response& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmJobMasterRegistrationResponse>();
  if (const auto* ok = std::get_if<rm::job_master_registration_success>(&x)) {
    auto s = b.initSuccess();
    write(s.initResourceManagerId(), ok->resource_manager_id);
    s.setResourceManagerResourceId(as_text(ok->resource_manager_resource_id));
  } else {
    write_decline(b, std::get<registration::registration_decline>(x));
  }
  return wire::to_bytes(message);
}

expected<rm::job_master_registration_response>
codec<rm::job_master_registration_response>::decode(std::span<const char> bytes) {
  using schema_t = schema::RmJobMasterRegistrationResponse;
  return wire::read<schema_t>(
    bytes, "job master registration response",
    [](schema_t::Reader r) -> expected<rm::job_master_registration_response> {
      switch (r.which()) {
        case schema_t::SUCCESS: {
          auto s = r.getSuccess();
          return rm::job_master_registration_response{rm::job_master_registration_success{
            read_token(s.getResourceManagerId()), text(s.getResourceManagerResourceId())}};
        }
        case schema_t::DECLINE:
          return rm::job_master_registration_response{
            registration::registration_decline{text(r.getDecline().getReason())}};
      }
      // A sender with a newer schema may add alternatives this reader cannot interpret.
      return make_error(errc::malformed_message,
                        "job master registration response: unknown alternative "
                          + std::to_string(static_cast<unsigned>(r.which())));
    });
}

// -- request_slot, cancel_slot_request ------------------------------------------------------------

std::vector<char> codec<rm::request_slot_request>::encode(const rm::request_slot_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmRequestSlotRequest>();
  write(b.initJobMasterId(), x.job_master_id);
  auto req = b.initRequest();
  write(req.initJobId(), x.request.job_id);
  write(req.initAllocationId(), x.request.allocation_id);
  write(req.initProfile(), x.request.profile);
  req.setTargetAddress(as_text(x.request.target_address));
  return wire::to_bytes(message);
}

expected<rm::request_slot_request>
codec<rm::request_slot_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmRequestSlotRequest>(
    bytes, "request slot request",
    [](schema::RmRequestSlotRequest::Reader r) -> expected<rm::request_slot_request> {
      auto req = r.getRequest();
      return rm::request_slot_request{
        read_token(r.getJobMasterId()),
        rm::slot_request{read_id<graph::job_id>(req.getJobId()),
                         read_id<cluster::allocation_id>(req.getAllocationId()),
                         read(req.getProfile()), text(req.getTargetAddress())}};
    });
}

std::vector<char> codec<rm::cancel_slot_request_request>::encode(
  const rm::cancel_slot_request_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmCancelSlotRequestRequest>();
  write(b.initAllocationId(), x.allocation_id);
  return wire::to_bytes(message);
}

expected<rm::cancel_slot_request_request>
codec<rm::cancel_slot_request_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmCancelSlotRequestRequest>(
    bytes, "cancel slot request request",
    [](schema::RmCancelSlotRequestRequest::Reader r) -> expected<rm::cancel_slot_request_request> {
      return rm::cancel_slot_request_request{read_id<cluster::allocation_id>(r.getAllocationId())};
    });
}

// -- register_task_executor -----------------------------------------------------------------------

std::vector<char> codec<rm::task_executor_registration_request>::encode(
  const rm::task_executor_registration_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmTaskExecutorRegistrationRequest>();
  b.setTaskExecutorAddress(as_text(x.task_executor_address));
  b.setResourceId(as_text(x.resource_id));
  b.setDataPort(x.data_port);
  b.setHardwareDescription(as_text(x.hardware_description));
  write(b.initDefaultSlotProfile(), x.default_slot_profile);
  b.setNumberOfSlots(x.number_of_slots);
  return wire::to_bytes(message);
}

expected<rm::task_executor_registration_request>
codec<rm::task_executor_registration_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmTaskExecutorRegistrationRequest>(
    bytes, "task executor registration request",
    [](schema::RmTaskExecutorRegistrationRequest::Reader r)
      -> expected<rm::task_executor_registration_request> {
      return rm::task_executor_registration_request{
        text(r.getTaskExecutorAddress()), text(r.getResourceId()), r.getDataPort(),
        text(r.getHardwareDescription()), read(r.getDefaultSlotProfile()), r.getNumberOfSlots()};
    });
}

std::vector<char> codec<rm::task_executor_registration_response>::encode(
  const rm::task_executor_registration_response& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmTaskExecutorRegistrationResponse>();
  if (const auto* ok = std::get_if<rm::task_executor_registration_success>(&x)) {
    auto s = b.initSuccess();
    write(s.initRegistrationId(), ok->registration_id);
    s.setResourceManagerResourceId(as_text(ok->resource_manager_resource_id));
    s.setHeartbeatIntervalMs(ok->heartbeat_interval_ms);
  } else {
    write_decline(b, std::get<registration::registration_decline>(x));
  }
  return wire::to_bytes(message);
}

expected<rm::task_executor_registration_response>
codec<rm::task_executor_registration_response>::decode(std::span<const char> bytes) {
  using schema_t = schema::RmTaskExecutorRegistrationResponse;
  return wire::read<schema_t>(
    bytes, "task executor registration response",
    [](schema_t::Reader r) -> expected<rm::task_executor_registration_response> {
      switch (r.which()) {
        case schema_t::SUCCESS: {
          auto s = r.getSuccess();
          return rm::task_executor_registration_response{rm::task_executor_registration_success{
            read_id<cluster::instance_id>(s.getRegistrationId()),
            text(s.getResourceManagerResourceId()), s.getHeartbeatIntervalMs()}};
        }
        case schema_t::DECLINE:
          return rm::task_executor_registration_response{
            registration::registration_decline{text(r.getDecline().getReason())}};
      }
      return make_error(errc::malformed_message,
                        "task executor registration response: unknown alternative "
                          + std::to_string(static_cast<unsigned>(r.which())));
    });
}

// -- slot reports ---------------------------------------------------------------------------------

std::vector<char> codec<rm::send_slot_report_request>::encode(
  const rm::send_slot_report_request& x) {
  // A slot status is about a dozen words with its owner name.
  capnp::MallocMessageBuilder message(
    small_message_words + 16 * static_cast<unsigned>(x.report.slots.size()));
  auto b = message.initRoot<schema::RmSendSlotReportRequest>();
  b.setResourceId(as_text(x.resource_id));
  write(b.initRegistrationId(), x.registration_id);
  write(b.initReport(), x.report);
  return wire::to_bytes(message);
}

expected<rm::send_slot_report_request>
codec<rm::send_slot_report_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmSendSlotReportRequest>(
    bytes, "send slot report request",
    [](schema::RmSendSlotReportRequest::Reader r) -> expected<rm::send_slot_report_request> {
      return rm::send_slot_report_request{text(r.getResourceId()),
                                          read_id<cluster::instance_id>(r.getRegistrationId()),
                                          read(r.getReport())};
    });
}

std::vector<char> codec<rm::notify_slot_available_request>::encode(
  const rm::notify_slot_available_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmNotifySlotAvailableRequest>();
  write(b.initRegistrationId(), x.registration_id);
  write(b.initSlot(), x.slot);
  write(b.initAllocationId(), x.allocation_id);
  return wire::to_bytes(message);
}

expected<rm::notify_slot_available_request>
codec<rm::notify_slot_available_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmNotifySlotAvailableRequest>(
    bytes, "notify slot available request",
    [](schema::RmNotifySlotAvailableRequest::Reader r)
      -> expected<rm::notify_slot_available_request> {
      return rm::notify_slot_available_request{
        read_id<cluster::instance_id>(r.getRegistrationId()), read(r.getSlot()),
        read_id<cluster::allocation_id>(r.getAllocationId())};
    });
}

// -- disconnects ----------------------------------------------------------------------------------

std::vector<char> codec<rm::disconnect_task_manager_request>::encode(
  const rm::disconnect_task_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmDisconnectTaskManagerRequest>();
  b.setResourceId(as_text(x.resource_id));
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<rm::disconnect_task_manager_request>
codec<rm::disconnect_task_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmDisconnectTaskManagerRequest>(
    bytes, "disconnect task manager request",
    [](schema::RmDisconnectTaskManagerRequest::Reader r)
      -> expected<rm::disconnect_task_manager_request> {
      return rm::disconnect_task_manager_request{text(r.getResourceId()), text(r.getCause())};
    });
}

std::vector<char> codec<rm::disconnect_job_manager_request>::encode(
  const rm::disconnect_job_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmDisconnectJobManagerRequest>();
  write(b.initJobId(), x.job_id);
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<rm::disconnect_job_manager_request>
codec<rm::disconnect_job_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmDisconnectJobManagerRequest>(
    bytes, "disconnect job manager request",
    [](schema::RmDisconnectJobManagerRequest::Reader r)
      -> expected<rm::disconnect_job_manager_request> {
      return rm::disconnect_job_manager_request{read_id<graph::job_id>(r.getJobId()),
                                                text(r.getCause())};
    });
}

// -- request_resource_overview --------------------------------------------------------------------

std::vector<char> codec<rm::resource_overview>::encode(const rm::resource_overview& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::RmResourceOverview>();
  b.setNumberTaskManagers(x.number_task_managers);
  b.setNumberRegisteredSlots(x.number_registered_slots);
  b.setNumberFreeSlots(x.number_free_slots);
  b.setNumberPendingSlotRequests(x.number_pending_slot_requests);
  return wire::to_bytes(message);
}

expected<rm::resource_overview> codec<rm::resource_overview>::decode(std::span<const char> bytes) {
  return wire::read<schema::RmResourceOverview>(
    bytes, "resource overview",
    [](schema::RmResourceOverview::Reader r) -> expected<rm::resource_overview> {
      return rm::resource_overview{r.getNumberTaskManagers(), r.getNumberRegisteredSlots(),
                                   r.getNumberFreeSlots(), r.getNumberPendingSlotRequests()};
    });
}

} // namespace flint::rpc
