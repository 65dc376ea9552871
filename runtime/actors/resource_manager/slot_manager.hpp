#pragma once
/// The ResourceManager's book of slots (Flink's SlotManagerImpl): the registered TaskExecutors
/// and their slots as their slot reports describe them, the free slots, and the pending slot
/// requests of JobMasters. Free slots and pending requests are matched both ways: a new request
/// takes the oldest matching free slot; a slot that becomes free serves the oldest matching
/// pending request. Matching assigns the slot (state pending) and asks the TaskExecutor through
/// `slot_manager_actions::allocate_slot`; its answer comes back through `complete_allocation`.
///
/// Time-outs, with Flink's keys and defaults: a request that is still pending after
/// `slot.request.timeout` (5 min) fails (`notify_allocation_failure`); a TaskExecutor whose
/// slots have all been free for `resourcemanager.taskmanager-timeout` (30 s) is reported idle
/// (`release_resource`). Timers run on an injected main-thread executor, so tests drive them
/// with a manual clock. Plain C++, single-threaded: use it from the owner's main thread only.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/heartbeat/main_thread_executor.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/common/expected.hpp"

namespace flint::resource_manager {

/// What the slot manager asks of its ResourceManager (Flink's ResourceActions plus the
/// TaskExecutor's requestSlot call). Called from the owner's main thread.
class slot_manager_actions {
public:
  virtual ~slot_manager_actions() = default;

  /// Asks the TaskExecutor registered as `instance` to allocate `slot` for `request`; the
  /// answer must come back through `slot_manager::complete_allocation`.
  virtual void allocate_slot(const cluster::instance_id& instance,
                             const cluster::resource_id& task_manager, const cluster::slot_id& slot,
                             const slot_request& request) = 0;

  /// A pending request failed for good (it timed out): its JobMaster must learn of it.
  virtual void notify_allocation_failure(const graph::job_id& job,
                                         const cluster::allocation_id& allocation,
                                         const std::string& target_address, const error& cause) = 0;

  /// A TaskExecutor has been idle for `task_manager_timeout`.
  virtual void release_resource(const cluster::instance_id& instance,
                                const cluster::resource_id& task_manager,
                                const std::string& cause) = 0;
};

struct slot_manager_config {
  /// Configuration key of `slot_request_timeout`, in milliseconds.
  static constexpr const char* slot_request_timeout_key = "slot.request.timeout";
  /// Configuration key of `task_manager_timeout`, in milliseconds.
  static constexpr const char* task_manager_timeout_key = "resourcemanager.taskmanager-timeout";

  std::chrono::nanoseconds slot_request_timeout = std::chrono::minutes(5);
  std::chrono::nanoseconds task_manager_timeout = std::chrono::seconds(30);
};

/// Flink's TaskManagerSlot.State.
enum class slot_state { free, pending, allocated };

const char* to_string(slot_state s);

/// One slot as the slot manager sees it.
struct task_manager_slot {
  cluster::slot_id id;
  cluster::resource_profile profile;
  cluster::instance_id instance;
  slot_state state = slot_state::free;
  /// The allocation holding the slot (allocated), or the request it was assigned to (pending).
  /// Empty for an allocated slot whose holder is not known yet (the TaskExecutor refused it as
  /// occupied; its next slot report names the holder).
  std::optional<cluster::allocation_id> allocation;
  std::optional<graph::job_id> job;
};

/// An allocated slot lost with its TaskExecutor.
struct removed_allocation {
  cluster::slot_id slot;
  cluster::allocation_id allocation;
  std::optional<graph::job_id> job;
};

class slot_manager {
public:
  /// `executor` and `actions` must outlive the slot manager.
  slot_manager(slot_manager_config config, heartbeat::main_thread_executor& executor,
               slot_manager_actions& actions);
  ~slot_manager();

  slot_manager(const slot_manager&) = delete;
  slot_manager& operator=(const slot_manager&) = delete;

  const slot_manager_config& config() const noexcept { return config_; }

  // -- task managers ---------------------------------------------------------------------------

  /// Registers the slots of a TaskExecutor from its first slot report; free ones serve pending
  /// requests at once. A TaskExecutor already registered under `instance` is updated instead
  /// (returns false then).
  bool register_task_manager(const cluster::instance_id& instance,
                             const cluster::resource_id& task_manager,
                             const cluster::slot_report& report);

  /// Removes a TaskExecutor and its slots. Requests assigned to its slots go back to pending
  /// and are retried elsewhere. Returns the allocations it held (their JobMasters lose them);
  /// not_found if `instance` is unknown.
  expected<std::vector<removed_allocation>> unregister_task_manager(
    const cluster::instance_id& instance);

  /// Updates the slots of a registered TaskExecutor from a slot report (heartbeat payload).
  /// False when `instance` is unknown.
  bool report_slot_status(const cluster::instance_id& instance, const cluster::slot_report& report);

  // -- slot requests ---------------------------------------------------------------------------

  /// Takes a JobMaster's request: served from a free slot or kept pending. Returns false for a
  /// duplicate (an allocation id already pending or holding a slot), which is ignored.
  bool register_slot_request(const slot_request& request);

  /// Withdraws a pending request; a slot assigned to it becomes free. False if not pending.
  bool unregister_slot_request(const cluster::allocation_id& allocation);

  /// Drops every pending request of `job` (its JobMaster left). Returns how many.
  std::size_t unregister_job(const graph::job_id& job);

  /// The TaskExecutor's answer to `allocate_slot`: ack → the slot is allocated and the request
  /// done; errc::rejected (slot occupied) → the slot counts as allocated by someone else;
  /// another error → the slot is free again. On failure the request is retried. Answers that no
  /// longer match (the request timed out or was withdrawn meanwhile) are ignored.
  void complete_allocation(const cluster::allocation_id& allocation, const cluster::slot_id& slot,
                           const expected<unit>& result);

  /// A TaskExecutor freed `slot` held by `allocation`: it serves a pending request or becomes
  /// free. Ignored (false) when the slot is unknown or held by another allocation.
  bool free_slot(const cluster::slot_id& slot, const cluster::allocation_id& allocation);

  /// Forgets everything (leadership lost); timers still pending do nothing.
  void clear();

  // -- inspection ------------------------------------------------------------------------------

  std::size_t number_of_task_managers() const { return task_managers_.size(); }
  std::size_t number_of_registered_slots() const { return slots_.size(); }
  std::size_t number_of_free_slots() const { return free_slots_.size(); }
  std::size_t number_of_pending_requests() const { return pending_.size(); }
  std::size_t number_of_free_slots_of(const cluster::instance_id& instance) const;
  std::size_t number_of_slots_of(const cluster::instance_id& instance) const;
  bool is_registered(const cluster::instance_id& instance) const;
  bool is_pending(const cluster::allocation_id& allocation) const;
  /// The slots `job` asks for now: its pending requests and the slots it holds (Flink's
  /// ResourceRequirement.numberOfRequiredSlots of the job's declared requirements).
  std::size_t number_of_required_slots(const graph::job_id& job) const;
  /// The slot assigned to a pending request whose allocation is in flight.
  std::optional<cluster::slot_id> assigned_slot(const cluster::allocation_id& allocation) const;
  const task_manager_slot* slot(const cluster::slot_id& id) const;
  /// The slot held by `allocation`, if any.
  const task_manager_slot* slot_of(const cluster::allocation_id& allocation) const;
  /// Free slots, oldest first (the order they are handed out).
  std::vector<cluster::slot_id> free_slots() const;
  /// Whether the TaskExecutor has had all slots free since the given time.
  std::optional<heartbeat::time_point> idle_since(const cluster::instance_id& instance) const;

private:
  struct registration {
    cluster::instance_id instance;
    cluster::resource_id task_manager;
    std::vector<cluster::slot_id> slots;
    std::optional<heartbeat::time_point> idle_since;
    std::uint64_t idle_generation = 0;
  };
  struct pending_request {
    slot_request request;
    std::uint64_t seq = 0;
    std::optional<cluster::slot_id> assigned;
  };

  void add_slot(registration& reg, const cluster::slot_status& status);
  void remove_slot(const cluster::slot_id& id, std::vector<removed_allocation>* lost);
  void update_slot(task_manager_slot& s, const cluster::slot_status& status);
  void handle_free_slot(task_manager_slot& s);
  void mark_free(task_manager_slot& s);
  void unmark_free(const cluster::slot_id& id);
  void internal_request_slot(pending_request& p);
  void assign(task_manager_slot& s, pending_request& p);
  void complete_pending(const cluster::allocation_id& allocation, task_manager_slot& s,
                        const std::optional<graph::job_id>& job);
  void retry_pending(const cluster::allocation_id& allocation);
  void timeout_request(const cluster::allocation_id& allocation, std::uint64_t seq);
  void check_idle(const cluster::instance_id& instance);
  void timeout_idle(const cluster::instance_id& instance, std::uint64_t generation);
  pending_request* find_pending(const cluster::allocation_id& allocation);
  registration* find_registration(const cluster::instance_id& instance);

  slot_manager_config config_;
  heartbeat::main_thread_executor& executor_;
  slot_manager_actions& actions_;
  /// Timers hold it weakly: they do nothing once the slot manager is gone or cleared.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);

  std::map<cluster::instance_id, registration> task_managers_;
  std::map<cluster::slot_id, task_manager_slot> slots_;
  /// Free slots by the order they became free (Flink's LinkedHashMap freeSlots).
  std::map<std::uint64_t, cluster::slot_id> free_slots_;
  std::map<cluster::slot_id, std::uint64_t> free_index_;
  /// Pending requests by arrival (Flink's LinkedHashMap pendingSlotRequests).
  std::map<std::uint64_t, pending_request> pending_;
  std::map<cluster::allocation_id, std::uint64_t> pending_index_;
  std::uint64_t next_seq_ = 0;
};

} // namespace flint::resource_manager
