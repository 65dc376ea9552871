@0xc341599e6e7c3461;
# The ResourceManager's protocol: its messages. The methods are declared in
# runtime/actors/resource_manager/resource_manager_gateway.hpp; flint-capnpc generates the C++
# value types and codecs ("schemas/resource_manager.messages.hpp"). Every struct is prefixed `Rm`
# because all schemas share the C++ namespace flint::schema.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::resource_manager");
$Flint.prefix("Rm");
$Flint.include(["runtime/actors/common/cluster_types.hpp",
                "runtime/actors/registration/registration_response.hpp"]);
$Flint.codecInclude(["runtime/actors/common/cluster_codec.hpp"]);

using Cluster = import "cluster.capnp";

struct RmJobMasterRegistrationRequest {
  jobMasterId @0 :Cluster.Id128 $Flint.type("cluster::job_master_id");
  jobMasterResourceId @1 :Text $Flint.type("cluster::resource_id");
  jobMasterAddress @2 :Text;
  # Endpoint id of the JobMaster.
  jobId @3 :Cluster.Id128 $Flint.type("graph::job_id");
}

struct RmJobMasterRegistrationSuccess {
  resourceManagerId @0 :Cluster.Id128 $Flint.type("cluster::resource_manager_id");
  resourceManagerResourceId @1 :Text $Flint.type("cluster::resource_id");
}

struct RmJobMasterRegistrationResponse {
  union {
    success @0 :RmJobMasterRegistrationSuccess;
    decline @1 :Cluster.Decline;
  }
}

struct RmSlotRequest {
  # Flink's SlotRequest: a JobMaster wants a slot for `job_id` under `allocation_id`.
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  allocationId @1 :Cluster.Id128 $Flint.type("cluster::allocation_id");
  profile @2 :Cluster.ResourceProfile;
  targetAddress @3 :Text;
  # Endpoint id of the requesting JobMaster.
}

struct RmRequestSlotRequest {
  jobMasterId @0 :Cluster.Id128 $Flint.type("cluster::job_master_id");
  request @1 :RmSlotRequest;
}

struct RmCancelSlotRequestRequest {
  allocationId @0 :Cluster.Id128 $Flint.type("cluster::allocation_id");
}

struct RmTaskExecutorRegistrationRequest {
  taskExecutorAddress @0 :Text;
  # Endpoint id of the TaskExecutor.
  resourceId @1 :Text $Flint.type("cluster::resource_id");
  dataPort @2 :UInt16;
  hardwareDescription @3 :Text;
  defaultSlotProfile @4 :Cluster.ResourceProfile;
  numberOfSlots @5 :Int32;
}

struct RmTaskExecutorRegistrationSuccess {
  registrationId @0 :Cluster.Id128 $Flint.type("cluster::instance_id");
  resourceManagerResourceId @1 :Text $Flint.type("cluster::resource_id");
  heartbeatIntervalMs @2 :Int64;
  # Cluster information: the RM's heartbeat interval, so the TE knows what to expect.
}

struct RmTaskExecutorRegistrationResponse {
  union {
    success @0 :RmTaskExecutorRegistrationSuccess;
    decline @1 :Cluster.Decline;
  }
}

struct RmSendSlotReportRequest {
  resourceId @0 :Text $Flint.type("cluster::resource_id");
  registrationId @1 :Cluster.Id128 $Flint.type("cluster::instance_id");
  report @2 :Cluster.SlotReport;
}

struct RmNotifySlotAvailableRequest {
  registrationId @0 :Cluster.Id128 $Flint.type("cluster::instance_id");
  slot @1 :Cluster.SlotId;
  allocationId @2 :Cluster.Id128 $Flint.type("cluster::allocation_id");
}

struct RmDisconnectTaskManagerRequest {
  resourceId @0 :Text $Flint.type("cluster::resource_id");
  cause @1 :Text;
}

struct RmDisconnectJobManagerRequest {
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  cause @1 :Text;
}

struct RmResourceOverview {
  # Counts for the CLI and REST (Flink's ResourceOverview).
  numberTaskManagers @0 :Int32;
  numberRegisteredSlots @1 :Int32;
  numberFreeSlots @2 :Int32;
  numberPendingSlotRequests @3 :Int32;
  taskManagers @4 :List(RmTaskManagerInfo);
  # Each registered TaskExecutor (REST's /taskmanagers), by resource id.
}

struct RmTaskManagerInfo {
  # One registered TaskExecutor (Flink's TaskManagerInfo essentials).
  resourceId @0 :Text $Flint.type("cluster::resource_id");
  address @1 :Text;
  # Its endpoint address as it registered.
  dataPort @2 :UInt16;
  slotsNumber @3 :Int32;
  freeSlots @4 :Int32;
}
