#include "runtime/actors/task_executor/task_executor_gateway.hpp"

#include "runtime/actors/common/cluster_codec.hpp"
#include "runtime/graph/codec/job_graph_codec.hpp"
#include "schemas/codec_support.hpp"
#include "schemas/task_executor.capnp.h"

namespace flint::rpc {

namespace {

namespace te = task_executor;
using cluster::wire::read;
using cluster::wire::read_id;
using cluster::wire::read_token;
using cluster::wire::write;

using wire::as_text;
using wire::small_message_words;
using wire::text;

} // namespace

std::vector<char> codec<te::request_slot_request>::encode(const te::request_slot_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::TeRequestSlotRequest>();
  write(b.initSlot(), x.slot);
  write(b.initJobId(), x.job_id);
  write(b.initAllocationId(), x.allocation_id);
  write(b.initProfile(), x.profile);
  b.setTargetAddress(as_text(x.target_address));
  write(b.initResourceManagerId(), x.resource_manager_id);
  return wire::to_bytes(message);
}

expected<te::request_slot_request>
codec<te::request_slot_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::TeRequestSlotRequest>(
    bytes, "task executor request slot request",
    [](schema::TeRequestSlotRequest::Reader r) -> expected<te::request_slot_request> {
      return te::request_slot_request{read(r.getSlot()),
                                      read_id<graph::job_id>(r.getJobId()),
                                      read_id<cluster::allocation_id>(r.getAllocationId()),
                                      read(r.getProfile()),
                                      text(r.getTargetAddress()),
                                      read_token(r.getResourceManagerId())};
    });
}

std::vector<char> codec<te::submit_task_request>::encode(const te::submit_task_request& x) {
  auto tdd = graph::encode_task_deployment_descriptor(x.tdd);
  capnp::MallocMessageBuilder message(small_message_words + tdd.size() / sizeof(capnp::word));
  auto b = message.initRoot<schema::TeSubmitTaskRequest>();
  b.setTaskDeploymentDescriptor(
    kj::ArrayPtr<const kj::byte>(reinterpret_cast<const kj::byte*>(tdd.data()), tdd.size()));
  write(b.initJobMasterId(), x.job_master_id);
  write(b.initAllocationId(), x.allocation_id);
  return wire::to_bytes(message);
}

expected<te::submit_task_request>
codec<te::submit_task_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::TeSubmitTaskRequest>(
    bytes, "submit task request",
    [](schema::TeSubmitTaskRequest::Reader r) -> expected<te::submit_task_request> {
      auto data = r.getTaskDeploymentDescriptor();
      auto tdd = graph::decode_task_deployment_descriptor(
        {reinterpret_cast<const char*>(data.begin()), data.size()});
      if (!tdd)
        return make_error(tdd.error().code, "submit task request: " + tdd.error().message);
      return te::submit_task_request{std::move(*tdd), read_token(r.getJobMasterId()),
                                     read_id<cluster::allocation_id>(r.getAllocationId())};
    });
}

std::vector<char> codec<te::cancel_task_request>::encode(const te::cancel_task_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::TeCancelTaskRequest>();
  write(b.initJobId(), x.job_id);
  write(b.initAttempt(), x.attempt);
  return wire::to_bytes(message);
}

expected<te::cancel_task_request>
codec<te::cancel_task_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::TeCancelTaskRequest>(
    bytes, "cancel task request",
    [](schema::TeCancelTaskRequest::Reader r) -> expected<te::cancel_task_request> {
      return te::cancel_task_request{read_id<graph::job_id>(r.getJobId()), read(r.getAttempt())};
    });
}

std::vector<char> codec<te::free_slot_request>::encode(const te::free_slot_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::TeFreeSlotRequest>();
  write(b.initJobId(), x.job_id);
  write(b.initAllocationId(), x.allocation_id);
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<te::free_slot_request> codec<te::free_slot_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::TeFreeSlotRequest>(
    bytes, "free slot request",
    [](schema::TeFreeSlotRequest::Reader r) -> expected<te::free_slot_request> {
      return te::free_slot_request{read_id<graph::job_id>(r.getJobId()),
                                   read_id<cluster::allocation_id>(r.getAllocationId()),
                                   text(r.getCause())};
    });
}

std::vector<char> codec<te::release_partitions_request>::encode(const te::release_partitions_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::TeReleasePartitionsRequest>();
  write(b.initJobId(), x.job_id);
  auto list = b.initPartitions(static_cast<unsigned>(x.partitions.size()));
  for (unsigned i = 0; i < x.partitions.size(); ++i) {
    write(list[i].initResultId(), x.partitions[i].result);
    list[i].setPartitionNumber(x.partitions[i].partition_number);
  }
  return wire::to_bytes(message);
}

expected<te::release_partitions_request>
codec<te::release_partitions_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::TeReleasePartitionsRequest>(
    bytes, "release partitions request",
    [](schema::TeReleasePartitionsRequest::Reader r) -> expected<te::release_partitions_request> {
      te::release_partitions_request x;
      x.job_id = read_id<graph::job_id>(r.getJobId());
      for (auto p : r.getPartitions())
        x.partitions.push_back(graph::intermediate_result_partition_id{
          read_id<graph::intermediate_data_set_id>(p.getResultId()), p.getPartitionNumber()});
      return x;
    });
}

std::vector<char> codec<te::disconnect_job_manager_request>::encode(
  const te::disconnect_job_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::TeDisconnectJobManagerRequest>();
  write(b.initJobId(), x.job_id);
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<te::disconnect_job_manager_request>
codec<te::disconnect_job_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::TeDisconnectJobManagerRequest>(
    bytes, "task executor disconnect job manager request",
    [](schema::TeDisconnectJobManagerRequest::Reader r)
      -> expected<te::disconnect_job_manager_request> {
      return te::disconnect_job_manager_request{read_id<graph::job_id>(r.getJobId()),
                                                text(r.getCause())};
    });
}

std::vector<char> codec<te::disconnect_resource_manager_request>::encode(
  const te::disconnect_resource_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::TeDisconnectResourceManagerRequest>();
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<te::disconnect_resource_manager_request>
codec<te::disconnect_resource_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::TeDisconnectResourceManagerRequest>(
    bytes, "task executor disconnect resource manager request",
    [](schema::TeDisconnectResourceManagerRequest::Reader r)
      -> expected<te::disconnect_resource_manager_request> {
      return te::disconnect_resource_manager_request{text(r.getCause())};
    });
}

} // namespace flint::rpc
