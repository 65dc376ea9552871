#pragma once
/// The SlotPool's logic (Flink 1.6's SlotPool, minus the actor): slot requests waiting for a
/// ResourceManager, requests sent to it, slots offered by TaskExecutors and matched to requests by
/// AllocationID, allocated and available slots, and the idle-slot and request time-outs.
///
/// Plain C++: no CAF, no clock. Time comes in as arguments; everything the pool wants done
/// outside itself (ask the RM, free a slot at a TE, answer an allocate_slot call) goes through
/// `slot_pool_actions`, which the actor maps onto gateways and the tests record.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/slot_pool/slot_pool_gateway.hpp"
#include "runtime/common/expected.hpp"

namespace spdlog {
class logger;
}

namespace flint::slot_pool {

using clock_type = std::chrono::steady_clock;
using time_point = clock_type::time_point;

/// What the pool asks its owner to do. Called synchronously from the pool's methods.
class slot_pool_actions {
public:
  virtual ~slot_pool_actions() = default;
  /// Send `resource_manager::request_slot` for `allocation`; report a failed call back with
  /// `slot_pool_state::resource_manager_request_failed`.
  virtual void request_slot_from_resource_manager(const slot_request_id& request,
                                                  const cluster::allocation_id& allocation,
                                                  const cluster::resource_profile& profile) = 0;
  /// Withdraw a request sent to the RM (`resource_manager::cancel_slot_request`).
  virtual void cancel_slot_request_at_resource_manager(
    const cluster::allocation_id& allocation) = 0;
  /// Free a slot at its TaskExecutor (`task_executor::free_slot`); a failed call comes back
  /// through `slot_pool_state::free_slot_failed`.
  virtual void free_slot_at_task_executor(const allocated_slot& slot, const std::string& cause) = 0;
  /// Answer the allocate_slot call of `request`: a slot, or why there is none.
  virtual void complete_request(const slot_request_id& request,
                                expected<allocated_slot> result) = 0;
};

/// Settings of the pool (Flink's keys and defaults).
struct slot_pool_settings {
  /// `slot.request.timeout`: a request not served within this fails with errc::timeout.
  std::chrono::nanoseconds slot_request_timeout = std::chrono::minutes(5);
  /// `slot.idle.timeout`: an available slot unused this long is freed at its TaskExecutor.
  std::chrono::nanoseconds slot_idle_timeout = std::chrono::seconds(50);
};

class slot_pool_state {
public:
  /// `logger` may be null (nothing logged). `seed` makes the allocation ids this pool draws
  /// reproducible (tests); give every pool a different one.
  slot_pool_state(graph::job_id job, slot_pool_settings settings, slot_pool_actions& actions,
                  std::shared_ptr<spdlog::logger> logger, std::uint64_t seed);

  // -- resource manager -------------------------------------------------------------------------

  /// A ResourceManager is connected: requests sent to an earlier connection are sent again
  /// (same allocation ids), then every parked request, in arrival order.
  void connect_resource_manager();
  /// New requests park until the next ResourceManager connects; sent ones stay pending.
  void disconnect_resource_manager();
  bool resource_manager_connected() const noexcept { return rm_connected_; }

  /// The RM refused or never answered `request_slot` for `allocation`: the request fails
  /// (if it still waits for that allocation).
  void resource_manager_request_failed(const slot_request_id& request,
                                       const cluster::allocation_id& allocation,
                                       const error& cause);

  // -- requests ---------------------------------------------------------------------------------

  /// Asks for a slot. Served at once from an available slot, else (when `allow_queued`) sent to
  /// the RM or parked until one connects; the answer goes to `complete_request`. Returns the
  /// request's generation, to be passed back to `check_request_timeout` after
  /// `slot.request.timeout` (0 when the request was answered at once).
  std::uint64_t allocate(const slot_request_id& request, const cluster::resource_profile& profile,
                         bool allow_queued, time_point now);

  /// Fails `request` with errc::timeout if it is still the same pending request (`generation`).
  void check_request_timeout(const slot_request_id& request, std::uint64_t generation);

  /// Gives an allocated slot back (it serves another request or becomes available), or withdraws
  /// a pending request (its caller is answered with errc::rejected).
  void release(const slot_request_id& request, const std::string& cause, time_point now);

  // -- task executors ---------------------------------------------------------------------------

  void register_task_manager(const cluster::resource_id& id);
  /// Forgets a TaskExecutor: its slots are removed (and freed there when `free_slots`: the job
  /// is over); returns the requests that held them. Without `free_slots` nothing is sent to it:
  /// the JobMaster tells a disconnected TaskExecutor itself, in order with its later messages,
  /// where a free_slot from here could overtake the TaskExecutor's re-offer of the same slot after
  /// it reconnected and free the slot the pool then holds (as Flink's declarative pool, which
  /// frees nothing at a released TaskManager).
  std::vector<slot_request_id> release_task_manager(const cluster::resource_id& id,
                                                    const std::string& cause, bool free_slots);
  bool is_registered(const cluster::resource_id& id) const { return task_managers_.count(id) != 0; }

  /// Slots a registered TaskExecutor offers; returns those accepted. Each offer serves the
  /// request that asked for its allocation id; an offer nobody asked for serves another pending
  /// request or becomes available.
  std::vector<cluster::slot_offer> offer_slots(const cluster::task_manager_location& location,
                                               const std::string& task_executor_address,
                                               const std::vector<cluster::slot_offer>& offers,
                                               time_point now);

  /// An allocation failed (RM or TE side): its pending request fails with `cause`, or its slot
  /// is removed. Returns the request that held the slot, if any.
  std::optional<slot_request_id> fail_allocation(const cluster::allocation_id& allocation,
                                                 const std::string& cause);

  /// Freeing `slot` at its TaskExecutor failed: if the TE is still registered the slot is kept
  /// (it serves a request or becomes available again), as Flink does.
  void free_slot_failed(const allocated_slot& slot, const cluster::resource_profile& profile,
                        time_point now);

  // -- idle slots and leadership ----------------------------------------------------------------

  /// Frees every available slot idle for at least `slot.idle.timeout`. Returns how many.
  std::size_t check_idle_slots(time_point now);

  /// Leadership lost: every pending request fails, the RM is disconnected, slots are forgotten
  /// without being freed (the TaskExecutors offer them to the next leader).
  void suspend();

  // -- inspection -------------------------------------------------------------------------------

  /// Requests sent to the RM and waiting for an offer.
  std::size_t pending_count() const { return pending_.size(); }
  /// Requests parked until a ResourceManager connects.
  std::size_t waiting_for_resource_manager_count() const { return waiting_.size(); }
  std::size_t available_count() const;
  std::size_t allocated_count() const;
  /// The allocation a pending request waits for, if it was sent to the RM.
  std::optional<cluster::allocation_id> pending_allocation(const slot_request_id& request) const;
  /// The slot held by `request`, if any.
  std::optional<allocated_slot> slot_of(const slot_request_id& request) const;
  const slot_pool_settings& settings() const noexcept { return settings_; }

private:
  struct pending_request {
    slot_request_id id;
    cluster::resource_profile profile;
    std::optional<cluster::allocation_id> allocation; ///< set once sent to the RM
    std::uint64_t generation = 0;
    std::uint64_t sent_epoch = 0; ///< the RM connection it was sent to
  };
  struct slot_entry {
    allocated_slot slot;
    cluster::resource_profile profile;
    std::optional<slot_request_id> user;
    time_point available_since{};
    std::uint64_t order = 0; ///< when it became available: oldest first
  };

  void request_from_resource_manager(pending_request req);
  /// Gives `entry` (already in slots_) to a pending or waiting request that fits, else makes it
  /// available.
  void fulfill_or_make_available(slot_entry& entry, time_point now);
  void allocate_to(slot_entry& entry, const slot_request_id& request);
  void fail(const slot_request_id& request, error cause);
  void log_info(const std::string& text) const;
  void log_debug(const std::string& text) const;

  graph::job_id job_;
  slot_pool_settings settings_;
  slot_pool_actions& actions_;
  std::shared_ptr<spdlog::logger> logger_;
  std::mt19937_64 rng_;
  bool rm_connected_ = false;
  /// Counts ResourceManager connections.
  std::uint64_t rm_epoch_ = 0;
  std::uint64_t next_generation_ = 1;
  std::uint64_t next_order_ = 1;

  /// Sent to the RM; by request id, ordered by generation for matching.
  std::map<slot_request_id, pending_request> pending_;
  std::map<cluster::allocation_id, slot_request_id> pending_by_allocation_;
  /// Parked until an RM connects, in arrival order.
  std::vector<pending_request> waiting_;
  std::map<cluster::allocation_id, slot_entry> slots_;
  std::map<slot_request_id, cluster::allocation_id> allocated_by_request_;
  std::set<cluster::resource_id> task_managers_;
};

/// Flink's text for a SlotRequestId: "SlotRequestId{<32 hex>}".
std::string to_string(const slot_request_id& id);

} // namespace flint::slot_pool
