#pragma once
/// The TaskExecutor endpoint (Flink's TaskExecutor): owns this worker's slots (TaskSlotTable),
/// the jobs it serves (JobTable), a job leader service per job, and one Task actor per deployed
/// subtask.
///
/// On start it follows the ResourceManager leader (`ha->resource_manager_retrieval()`),
/// registers there with retrying registration (fenced with the retrieved ResourceManagerId) and
/// sends its slot report; it registers again when the leader changes, on
/// `disconnect_resource_manager` and when the RM's heartbeats stop. A `request_slot` reserves a
/// slot, starts following the job's JobMaster leader, registers there and offers the job's
/// reserved slots; accepted slots become active, rejected ones are freed.
///
/// Fenced per relationship (PROTOCOL.md): calls with fencing scope `rm_scope` must carry the
/// ResourceManagerId it registered with; calls scoped to a job id must carry that job's
/// JobMasterId from the JobTable (only known once registered at the JobMaster).
///
/// The bookkeeping and its decisions live in `task_executor_state` (plain C++, tested without
/// actors); this actor does the messaging, timers, heartbeats and leader services around it.

#include <map>
#include <set>

#include "runtime/metrics/metric_registry.hpp"
#include <chrono>
#include <filesystem>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/heartbeat/heartbeat_config.hpp"
#include "runtime/actors/leader/ha_services.hpp"
#include "runtime/actors/registration/retrying_registration.hpp"
#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"
#include "runtime/actors/task_executor/invokable.hpp"

namespace spdlog {
class logger;
}

namespace flint::task_executor {

class task_slot_table;
class job_table;
class task_executor_state;
struct freed_slot;

struct task_executor_config {
  /// This worker's resource id; Flint uses the endpoint id ("task_executor/tm-1").
  cluster::resource_id resource_id;
  std::string host = "localhost";
  std::uint16_t data_port = 0;
  /// `taskmanager.numberOfTaskSlots`.
  std::int32_t number_of_slots = 1;
  cluster::resource_profile default_slot_profile;
  /// Heartbeats with the ResourceManager and the JobMasters (this side only watches them).
  heartbeat::heartbeat_config heartbeat;
  /// Back-off of the registrations at the ResourceManager and at JobMasters.
  registration::retrying_registration_config registration;
  /// Tasks on threads of their own (production); false runs them on the scheduler (tests).
  bool detached_tasks = true;
  /// `taskmanager.slot.timeout` (Flink's default: the ask timeout, 10 s): a slot allocated to a
  /// job but not active (not accepted, or its JobMaster gone) this long is freed.
  std::chrono::nanoseconds slot_timeout = std::chrono::seconds(10);
  /// The TaskManager's log file (`flint-node --log-file`, or where its standard error goes): its
  /// directory is what request_log_list lists, its `.out` sibling the "STDOUT" file. Empty: it
  /// logs to a terminal or pipe and has no files to send.
  std::filesystem::path log_file;
};

struct task_executor_services {
  /// Where the ResourceManager and JobMaster leaders are found; must outlive the actor.
  leader::ha_services* ha = nullptr;
  /// The node's directory: the TE puts itself there, and finds leaders published without a
  /// handle. May be null.
  rpc::endpoint_directory* directory = nullptr;
  /// Builds each task's invokable.
  invokable_factory invokables;
  /// The shuffle's partitions of a job here (Flink's TaskExecutorPartitionTracker): whether any
  /// is held, and their release when the job leaves this TaskExecutor. Null: none are kept.
  std::function<bool(const graph::job_id&)> holds_partitions;
  std::function<void(const graph::job_id&)> release_job_partitions;
  /// Releases some partitions of a job (the JobMaster's release_partitions). Null: ignored.
  std::function<void(const graph::job_id&,
                     const std::vector<graph::intermediate_result_partition_id>&)>
    release_partitions;
  /// Where Flink's log lines go; null: `make_endpoint_logger(<endpoint id>)` when the endpoint is
  /// made, on the sinks and at the level `configure_logging` set (stderr from info if never called).
  std::shared_ptr<spdlog::logger> logger = nullptr;
  /// The node's metrics: each task's figures are registered there under Flink's task scope
  /// (and stay for a while after it ended). Null: tasks report none.
  std::shared_ptr<metrics::metric_registry> metrics = nullptr;
};

class task_executor : public rpc::rpc_endpoint {
public:
  task_executor(caf::actor_config& cfg, rpc::endpoint_context ctx, task_executor_config config,
                task_executor_services services);
  ~task_executor() override;

  // -- inspection (main thread, tests) ---------------------------------------------------------

  const task_executor_config& config() const noexcept { return config_; }
  const task_slot_table& slot_table() const;
  const job_table& jobs() const;
  /// Registered at a ResourceManager (its registration id is known).
  bool is_connected_to_resource_manager() const;
  /// The ResourceManagerId this TE registered with (nil when not connected).
  cluster::resource_manager_id resource_manager_id() const;
  /// Tasks that have not reached a final state.
  std::size_t number_of_running_tasks() const;
  /// The task actor of an attempt (invalid when unknown), for tests.
  caf::actor task_of(const graph::execution_attempt_id& attempt) const;

protected:
  void on_start() override;
  void on_exit() override;
  rpc::fencing_token expected_token(const rpc::envelope& e) const override;

private:
  struct wiring;
  class rm_leader_listener;
  class job_leader_events;

  void register_methods();
  /// The TaskManager's log files and threads (request_log_list, request_file_upload_by_*,
  /// request_thread_dump).
  void register_file_methods();
  /// Tells `job`'s JobMaster `req` over its connection, if the job has one (task_executor.cpp).
  template <class M>
  void tell_job_master(const graph::job_id& job, const typename M::request& req);
  void notify_of_new_resource_manager_leader(const leader::leader_address& address,
                                             const rpc::fencing_token& id);
  void connect_to_resource_manager();
  void close_resource_manager_connection(const std::string& cause);
  void reconnect_to_resource_manager(const std::string& cause);
  void establish_job_manager_connection(const graph::job_id& job, const cluster::job_master_id& id,
                                        const leader::leader_address& address,
                                        const cluster::resource_id& job_master_resource_id);
  /// The JobMaster of `job` is lost (heartbeat, unreachable, lost leadership): fail the job's
  /// tasks here with `task_cause`, keep their slots (inactive) and close the connection.
  void job_manager_lost(const graph::job_id& job, const std::string& task_cause,
                        const std::string& connection_cause);
  /// Flink's closeJobManagerConnectionIfNoAllocatedResources: the job goes once neither a slot
  /// nor a partition of it is left here.
  void close_job_manager_connection_if_no_allocated_resources(const graph::job_id& job);
  /// Releases what the shuffle keeps of `job` here (its blocking partitions and spill files).
  void release_partitions_of(const graph::job_id& job);
  void close_job_manager_connection(const graph::job_id& job, const std::string& cause,
                                    bool release_job);
  void offer_slots_to_job_manager(const graph::job_id& job);
  void free_slot_internal(const cluster::allocation_id& allocation, const std::string& cause);
  /// Tells the ResourceManager, and lets the job go if nothing of it is left here.
  void after_slot_freed(const freed_slot& slot);
  void on_task_state(const cluster::task_execution_state& s);
  void register_slot_timeout(const cluster::allocation_id& allocation);
  void mark_slot_inactive(const cluster::allocation_id& allocation);
  void fail_tasks_of(const cluster::allocation_id& allocation, const std::string& cause);

  task_executor_config config_;
  task_executor_services services_;
  std::shared_ptr<spdlog::logger> log_;
  /// The bookkeeping: slots, jobs, tasks, the ResourceManager connection (set on start).
  std::unique_ptr<task_executor_state> state_;
  /// The metric groups of the running tasks (an ended task's go with it).
  std::map<graph::execution_attempt_id, metrics::registration> task_metrics_;
  /// The running tasks' figures, by job: what the JobMaster's heartbeats carry back.
  struct task_io_entry {
    graph::job_id job;
    std::shared_ptr<metrics::task_io_metrics> io;
  };
  std::map<graph::execution_attempt_id, task_io_entry> task_io_;
  /// Whether `attempt` runs here orphaned (task_record::orphaned): its messages go nowhere.
  bool is_orphaned(const graph::execution_attempt_id& attempt) const;
  /// Jobs whose slot offer waits for their orphaned tasks to end (offer_slots_to_job_manager).
  std::set<graph::job_id> offers_waiting_for_orphans_;
  /// The figures of the job's running tasks here, encoded as the JobMaster's heartbeat payload
  /// (empty: none).
  std::vector<char> task_io_payload_of(const graph::job_id& job) const;
  std::unique_ptr<wiring> wiring_;
};

} // namespace flint::task_executor
