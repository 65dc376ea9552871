@0xc341599e6e7c3461;
# The ResourceManager's protocol (runtime/actors/resource_manager/resource_manager_gateway.hpp).
# Codec: runtime/actors/resource_manager/resource_manager_codec.cpp. Every struct is prefixed
# `Rm` because all schemas share the C++ namespace flint::schema.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Cluster = import "cluster.capnp";

struct RmJobMasterRegistrationRequest {
  jobMasterId @0 :Cluster.Id128;
  jobMasterResourceId @1 :Text;
  # Endpoint id of the JobMaster.
  jobMasterAddress @2 :Text;
  jobId @3 :Cluster.Id128;
}

struct RmJobMasterRegistrationSuccess {
  resourceManagerId @0 :Cluster.Id128;
  resourceManagerResourceId @1 :Text;
}

struct RmJobMasterRegistrationResponse {
  union {
    success @0 :RmJobMasterRegistrationSuccess;
    decline @1 :Cluster.Decline;
  }
}

struct RmSlotRequest {
  jobId @0 :Cluster.Id128;
  allocationId @1 :Cluster.Id128;
  profile @2 :Cluster.ResourceProfile;
  # Endpoint id of the requesting JobMaster.
  targetAddress @3 :Text;
}

struct RmRequestSlotRequest {
  jobMasterId @0 :Cluster.Id128;
  request @1 :RmSlotRequest;
}

struct RmCancelSlotRequestRequest {
  allocationId @0 :Cluster.Id128;
}

struct RmTaskExecutorRegistrationRequest {
  # Endpoint id of the TaskExecutor.
  taskExecutorAddress @0 :Text;
  resourceId @1 :Text;
  dataPort @2 :UInt16;
  hardwareDescription @3 :Text;
  defaultSlotProfile @4 :Cluster.ResourceProfile;
  numberOfSlots @5 :Int32;
}

struct RmTaskExecutorRegistrationSuccess {
  registrationId @0 :Cluster.Id128;
  resourceManagerResourceId @1 :Text;
  heartbeatIntervalMs @2 :Int64;
}

struct RmTaskExecutorRegistrationResponse {
  union {
    success @0 :RmTaskExecutorRegistrationSuccess;
    decline @1 :Cluster.Decline;
  }
}

struct RmSendSlotReportRequest {
  resourceId @0 :Text;
  registrationId @1 :Cluster.Id128;
  report @2 :Cluster.SlotReport;
}

struct RmNotifySlotAvailableRequest {
  registrationId @0 :Cluster.Id128;
  slot @1 :Cluster.SlotId;
  allocationId @2 :Cluster.Id128;
}

struct RmDisconnectTaskManagerRequest {
  resourceId @0 :Text;
  cause @1 :Text;
}

struct RmDisconnectJobManagerRequest {
  jobId @0 :Cluster.Id128;
  cause @1 :Text;
}

struct RmResourceOverview {
  numberTaskManagers @0 :Int32;
  numberRegisteredSlots @1 :Int32;
  numberFreeSlots @2 :Int32;
  numberPendingSlotRequests @3 :Int32;
}
