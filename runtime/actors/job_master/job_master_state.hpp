#pragma once
/// The JobMaster's bookkeeping without actors (Flink's JobMaster minus its RPC): the job's
/// scheduler and final result, the registered TaskExecutors (and which actor each is watched
/// as), the ResourceManager leader followed and the connection to it with its registration
/// generation, and the decisions on them — whether a TaskExecutor may register, what a new
/// ResourceManager leader means, whether an answer is stale, what `request_job_status` reports.
///
/// Plain C++: no scheduling, no sends. The actor (job_master.cpp) does the messaging, the
/// heartbeats, the SlotPool and the leader retrieval and asks this class what to do; it runs on
/// the actor's main thread.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <caf/actor_addr.hpp>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/job_master/job_master_result.hpp"
#include "runtime/actors/job_master/scheduler/scheduler.hpp"
#include "runtime/actors/leader/leader_services.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/common/expected.hpp"

namespace flint::job_master {

/// A TaskExecutor registered for the job.
struct task_manager_connection {
  std::string address;
  cluster::task_manager_location location;
  rpc::gateway gateway; ///< fenced with our JobMasterId, scope = job id
};

/// The connection to a ResourceManager leader: being registered, or established.
struct resource_manager_connection {
  rpc::gateway gateway;
  cluster::resource_manager_id id;
  std::string address;
  /// Where the SlotPool finds this ResourceManager in the endpoint directory.
  std::string directory_key;
  /// Known once established.
  cluster::resource_id resource_id;
  bool established = false;
};

/// What a retrieved ResourceManager leader means.
enum class resource_manager_leader_change {
  /// The job is done: it connects nowhere any more.
  ignore,
  /// No leader: the connection (if any) closes, nothing to reconnect to.
  lost,
  /// The leader connected to already.
  unchanged,
  /// A new leader: connect there.
  connect,
};

class job_master_state {
public:
  explicit job_master_state(graph::job_id job) : job_(job) {}

  const graph::job_id& job() const noexcept { return job_; }

  // -- the job ----------------------------------------------------------------------------------

  /// The job's scheduler, once its ExecutionGraph is built.
  /// Also keeps the graph's JSON plan, which the status report carries.
  void set_scheduler(std::unique_ptr<scheduler> s);
  /// Null when the ExecutionGraph could not be built (or before).
  scheduler* job_scheduler() noexcept { return scheduler_.get(); }
  const scheduler* job_scheduler() const noexcept { return scheduler_.get(); }

  /// The final status once reached, else the scheduler's (CREATED without one).
  graph::job_status status() const;
  /// Whether the job reached a globally terminal state here.
  bool is_globally_terminated() const;
  const std::optional<job_master_result>& result() const noexcept { return result_; }

  /// The job could not be started: it failed with `cause`.
  void fail_before_start(const std::string& cause);
  /// Records the final state, with the scheduler's exception history and restarts. False (and
  /// nothing changed) when it was recorded already: it is reported once.
  bool reach_terminal_state(graph::job_status status, const std::string& cause);

  /// What `request_job_status` answers: the status, the exception history, and why the job is
  /// not all running.
  job_status_response status_report() const;

  // -- task executors ---------------------------------------------------------------------------

  bool is_registered_task_manager(const cluster::resource_id& id) const {
    return task_managers_.count(id) != 0;
  }
  /// Whether new TaskExecutors may register: the job has a scheduler and is not done.
  bool accepts_task_managers() const;
  /// Registers a TaskExecutor, watched as the actor `watched`.
  void add_task_manager(const cluster::resource_id& id, task_manager_connection connection,
                        const caf::actor_addr& watched);
  /// The TaskExecutor `id`; rejected ("Unknown TaskManager …") if it is not registered.
  expected<const task_manager_connection*> known_task_manager(const cluster::resource_id& id) const;
  /// The TaskExecutor `id`, or null.
  const task_manager_connection* task_manager(const cluster::resource_id& id) const;

  struct removed_task_manager {
    task_manager_connection connection;
    /// The actor it was watched as, if still watched: stop watching it.
    std::optional<caf::actor_addr> watched;
  };
  /// Forgets a TaskExecutor; nothing if it is not registered.
  std::optional<removed_task_manager> remove_task_manager(const cluster::resource_id& id);
  /// A watched actor went down: the TaskExecutor it was (no longer watched), if any.
  std::optional<cluster::resource_id> task_manager_down(const caf::actor_addr& actor);
  const std::map<cluster::resource_id, task_manager_connection>& task_managers() const noexcept {
    return task_managers_;
  }

  // -- resource manager -------------------------------------------------------------------------

  /// A ResourceManager leader was retrieved (empty or nil: none). The leader is remembered for
  /// reconnects unless the answer is `ignore`, `lost` forgets it.
  resource_manager_leader_change notify_resource_manager_leader(
    const leader::leader_address& address, const cluster::resource_manager_id& id);
  /// A connection to `address` under `id` starts (not yet registered). Returns its generation:
  /// a registration answer of another one is stale.
  std::uint64_t begin_resource_manager_connection(rpc::gateway gateway,
                                                  const cluster::resource_manager_id& id,
                                                  const std::string& address,
                                                  std::string directory_key = {});
  /// The registration of `generation` succeeded at the RM `resource_id`. False when stale.
  bool resource_manager_registered(std::uint64_t generation,
                                   const cluster::resource_id& resource_id);
  /// Ends the connection (any registration answer becomes stale). Returns it, if there was one.
  std::optional<resource_manager_connection> close_resource_manager_connection();
  /// The connection (being registered or established), or null.
  const resource_manager_connection* resource_manager() const noexcept {
    return rm_ ? &*rm_ : nullptr;
  }
  bool is_connected_to_resource_manager() const noexcept { return rm_ && rm_->established; }
  /// Whether the connection (if any) is to the leader `id`.
  bool is_resource_manager(const cluster::resource_manager_id& id) const noexcept {
    return rm_ && rm_->id == id;
  }
  /// Where a reconnect goes: the last leader retrieved, unless the job is done.
  std::optional<std::pair<leader::leader_address, cluster::resource_manager_id>> reconnect_target()
    const;

  /// Drops every peer handle (TaskExecutors, the ResourceManager and its leader), at shutdown.
  void drop_peers();

  /// Keeps the latest I/O figures of each attempt (from heartbeats, and final ones as tasks end)
  /// for the status report's subtasks.
  void update_task_io(const task_io_report& report);

private:
  graph::job_id job_;
  std::unique_ptr<scheduler> scheduler_;
  /// Flink's JSON plan of the job graph, compact (the graph does not change).
  std::string plan_;
  struct reported_io {
    task_io figures;
    bool final = false;
  };
  std::map<graph::execution_attempt_id, reported_io> task_io_;
  std::optional<job_master_result> result_;
  bool terminal_reported_ = false;

  std::map<cluster::resource_id, task_manager_connection> task_managers_;
  /// The TaskExecutors we watch, by actor address.
  std::map<caf::actor_addr, cluster::resource_id> watched_task_managers_;

  std::optional<resource_manager_connection> rm_;
  std::uint64_t rm_generation_ = 0;
  /// The last ResourceManager leader retrieved (reconnects go there).
  std::optional<std::pair<leader::leader_address, cluster::resource_manager_id>> rm_leader_;
};

} // namespace flint::job_master
