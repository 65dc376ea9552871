#pragma once
/// Value types the control-plane protocols share (Flink's ResourceID, AllocationID, InstanceID,
/// SlotID, ResourceProfile, SlotReport, SlotOffer, TaskManagerLocation, TaskExecutionState).
/// Plain C++; their Cap'n Proto form is in schemas/cluster.capnp and common/cluster_codec.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/actors/envelope/fencing_token.hpp"
#include "runtime/graph/execution.hpp"
#include "runtime/graph/execution_state.hpp"
#include "runtime/graph/ids.hpp"

namespace flint::cluster {

/// Names a TaskExecutor or JobMaster process-wide (Flink's ResourceID): Flint uses the
/// endpoint id, e.g. "task_executor/tm-1".
using resource_id = std::string;

using allocation_id = graph::abstract_id<struct allocation_id_tag>;
/// One registration of a TaskExecutor at a ResourceManager.
using instance_id = graph::abstract_id<struct instance_id_tag>;

using job_master_id = rpc::fencing_token;
using resource_manager_id = rpc::fencing_token;
using dispatcher_id = rpc::fencing_token;

/// Resources of a slot; all zero means "unknown / any" (Flink's ResourceProfile.UNKNOWN).
struct resource_profile {
  double cpu_cores = 0;
  std::int64_t task_heap_memory_mb = 0;

  bool is_unknown() const noexcept { return cpu_cores == 0 && task_heap_memory_mb == 0; }
  /// Whether a slot with this profile can serve a request for `required`.
  bool is_matching(const resource_profile& required) const noexcept {
    return required.is_unknown() || is_unknown()
      || (cpu_cores >= required.cpu_cores && task_heap_memory_mb >= required.task_heap_memory_mb);
  }
  std::string to_string() const;
  friend bool operator==(const resource_profile&, const resource_profile&) = default;
};

/// A slot of a TaskExecutor: its owner and its index there.
struct slot_id {
  resource_id owner;
  std::int32_t slot_number = 0;

  /// "<owner>_<n>", as Flink prints SlotID.
  std::string to_string() const { return owner + "_" + std::to_string(slot_number); }
  friend auto operator<=>(const slot_id&, const slot_id&) = default;
};

/// One slot as its TaskExecutor reports it; allocated slots name their allocation and job.
struct slot_status {
  slot_id id;
  resource_profile profile;
  std::optional<allocation_id> allocation;
  std::optional<graph::job_id> job;
  friend bool operator==(const slot_status&, const slot_status&) = default;
};

struct slot_report {
  std::vector<slot_status> slots;
  friend bool operator==(const slot_report&, const slot_report&) = default;
};

/// A slot a TaskExecutor offers to a JobMaster (Flink's SlotOffer).
struct slot_offer {
  allocation_id allocation;
  std::int32_t slot_index = 0;
  resource_profile profile;
  friend bool operator==(const slot_offer&, const slot_offer&) = default;
};

/// Where a TaskExecutor runs (Flink's TaskManagerLocation / UnresolvedTaskManagerLocation).
struct task_manager_location {
  resource_id id;
  std::string host;
  std::uint16_t data_port = 0;
  friend bool operator==(const task_manager_location&, const task_manager_location&) = default;
};

/// A task's new state, reported by its TaskExecutor to the JobMaster (Flink's
/// TaskExecutionState); `failure_cause` is set for FAILED.
struct task_execution_state {
  graph::job_id job;
  graph::execution_attempt_id attempt;
  graph::execution_state state = graph::execution_state::created;
  std::string failure_cause;
  friend bool operator==(const task_execution_state&, const task_execution_state&) = default;
};

} // namespace flint::cluster
