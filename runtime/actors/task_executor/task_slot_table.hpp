#pragma once
/// The slots of one TaskExecutor and the tasks in them (Flink's TaskSlotTableImpl). A slot is
/// FREE, ALLOCATED to a job under an allocation id (reserved, offered to the job's JobMaster),
/// ACTIVE (accepted by the JobMaster: tasks may run in it) or RELEASING (freed while tasks still
/// ran; it becomes free when the last one is gone). Plain C++, used from the TaskExecutor's main
/// thread only.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/common/expected.hpp"

namespace flint::task_executor {

/// Flink's TaskSlotState.
enum class task_slot_state { free, allocated, active, releasing };

const char* to_string(task_slot_state s);

struct task_slot {
  std::int32_t index = 0;
  cluster::resource_profile profile;
  task_slot_state state = task_slot_state::free;
  std::optional<graph::job_id> job;
  std::optional<cluster::allocation_id> allocation;
  std::set<graph::execution_attempt_id> tasks;
};

class task_slot_table {
public:
  /// `number_of_slots` slots of `default_profile`, owned by the TaskExecutor `owner`.
  task_slot_table(cluster::resource_id owner, std::int32_t number_of_slots,
                  cluster::resource_profile default_profile);

  const cluster::resource_id& owner() const noexcept { return owner_; }
  std::int32_t number_of_slots() const noexcept { return static_cast<std::int32_t>(slots_.size()); }

  /// Reserves slot `index` for `job` under `allocation`. Succeeds again for the same job and
  /// allocation (a repeated request). Errors: invalid_argument for an index out of range;
  /// rejected when the slot is held by another allocation, or the allocation holds another
  /// slot (Flink's SlotOccupiedException / "Could not allocate slot").
  expected<unit> allocate_slot(std::int32_t index, const graph::job_id& job,
                               const cluster::allocation_id& allocation,
                               const cluster::resource_profile& profile = {});

  /// ALLOCATED → ACTIVE (true), ACTIVE stays (false). not_found for an unknown allocation;
  /// illegal_state for a releasing slot.
  expected<bool> mark_slot_active(const cluster::allocation_id& allocation);

  /// ACTIVE → ALLOCATED (true), ALLOCATED stays (false). not_found / illegal_state as above.
  expected<bool> mark_slot_inactive(const cluster::allocation_id& allocation);

  /// Activates the slot when it is allocated to `job` (Flink's tryMarkSlotActive).
  bool try_mark_slot_active(const graph::job_id& job, const cluster::allocation_id& allocation);

  /// Frees the slot of `allocation`. Returns its index when it is free now, or nothing when it
  /// still holds tasks (it is RELEASING until they are removed). not_found if unknown.
  expected<std::optional<std::int32_t>> free_slot(const cluster::allocation_id& allocation);

  /// Registers a task in the active slot of `allocation`, which must belong to `job`.
  /// Errors: not_found (no such slot), illegal_state (slot not active / other job), rejected
  /// (the attempt is already registered).
  expected<unit> add_task(const graph::execution_attempt_id& attempt, const graph::job_id& job,
                          const cluster::allocation_id& allocation);

  struct removed_task {
    cluster::allocation_id allocation;
    /// Set when removing the task completed the release of a RELEASING slot.
    std::optional<std::int32_t> freed_slot;
  };
  /// Removes a task; nothing when it is unknown.
  std::optional<removed_task> remove_task(const graph::execution_attempt_id& attempt);

  // -- queries ---------------------------------------------------------------------------------

  const task_slot* slot(std::int32_t index) const;
  const task_slot* slot_of(const cluster::allocation_id& allocation) const;
  bool is_slot_free(std::int32_t index) const;
  bool is_allocated(std::int32_t index, const graph::job_id& job,
                    const cluster::allocation_id& allocation) const;
  bool has_allocated_slots(const graph::job_id& job) const;
  /// Allocations held by `job` in any state but FREE.
  std::vector<cluster::allocation_id> allocations_of(const graph::job_id& job) const;
  /// Slots of `job` in state ALLOCATED (reserved, not yet accepted): what gets offered.
  std::vector<cluster::slot_offer> offers_for(const graph::job_id& job) const;
  std::vector<graph::execution_attempt_id> tasks_of(const cluster::allocation_id& allocation) const;
  std::optional<cluster::allocation_id> allocation_of_task(
    const graph::execution_attempt_id& attempt) const;
  std::size_t number_of_free_slots() const;

  /// Every slot with its allocation (Flink's createSlotReport).
  cluster::slot_report create_slot_report() const;

private:
  task_slot* find(const cluster::allocation_id& allocation);
  void reset(task_slot& s);

  cluster::resource_id owner_;
  cluster::resource_profile default_profile_;
  std::vector<task_slot> slots_;
  std::map<cluster::allocation_id, std::int32_t> by_allocation_;
  std::map<graph::execution_attempt_id, cluster::allocation_id> tasks_;
};

} // namespace flint::task_executor
