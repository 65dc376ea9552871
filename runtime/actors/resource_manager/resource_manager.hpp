#pragma once
/// The ResourceManager endpoint (Flink's ResourceManager / StandaloneResourceManager): a fenced
/// actor that leads under its ResourceManagerId, registers TaskExecutors and JobMasters,
/// heartbeats both, and serves JobMasters' slot requests through its SlotManager, asking
/// TaskExecutors to allocate the matched slots.
///
/// Wiring: spawn it with an election service of the ResourceManager leadership
/// (`ha_services::resource_manager_election()`, owned by the caller and outliving the actor) and
/// the node's endpoint directory. On start it contends; once granted it adopts the session id as
/// its fencing token and confirms with its own handle, so TaskExecutors and JobMasters following
/// `resource_manager_retrieval()` find it.
///
/// Peers' handles are taken from the registering call (`caller()`), with the directory as the
/// fallback for callers that are not actors (a test driver sending through a gateway still is).
///
/// The bookkeeping and its decisions live in `resource_manager_state` (plain C++, tested without
/// actors); this actor does the messaging, heartbeats and the election around it.

#include <chrono>
#include <memory>
#include <string>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/heartbeat/heartbeat_config.hpp"
#include "runtime/actors/leader/leader_services.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"

namespace spdlog {
class logger;
}

namespace flint::resource_manager {

class slot_manager;
class resource_manager_state;
struct job_manager_registration;

struct resource_manager_config {
  /// Heartbeats towards TaskExecutors and JobMasters (`heartbeat.interval`, `heartbeat.timeout`).
  heartbeat::heartbeat_config heartbeat;
  /// `slot.request.timeout`: a slot request still pending after this fails.
  std::chrono::nanoseconds slot_request_timeout = std::chrono::minutes(5);
  /// `resourcemanager.taskmanager-timeout`: a TaskExecutor idle this long is released (a
  /// standalone cluster cannot stop workers, so it is only reported; see release_resource).
  std::chrono::nanoseconds task_manager_timeout = std::chrono::seconds(30);
};

struct resource_manager_services {
  /// The ResourceManager leadership this endpoint contends for; must outlive the actor.
  leader::leader_election_service* election = nullptr;
  /// The node's directory: the RM puts itself there, and looks up peers it has no handle of.
  rpc::endpoint_directory* directory = nullptr;
  /// Where Flink's log lines go; null: `make_endpoint_logger(<endpoint id>)` when the endpoint is
  /// made, on the sinks and at the level `configure_logging` set (stderr from info if never called).
  std::shared_ptr<spdlog::logger> logger = nullptr;
};

class resource_manager : public rpc::rpc_endpoint, public leader::leader_contender {
public:
  resource_manager(caf::actor_config& cfg, rpc::endpoint_context ctx,
                   resource_manager_config config, resource_manager_services services);
  ~resource_manager() override;

  // -- leader_contender (any thread) -----------------------------------------------------------

  void grant_leadership(const rpc::fencing_token& session_id) override;
  void revoke_leadership() override;
  std::string description() const override;

  // -- inspection (main thread, tests) ---------------------------------------------------------

  /// The SlotManager; null while not leading.
  const slot_manager* slots() const;
  std::size_t number_of_task_executors() const;
  bool is_registered_task_executor(const cluster::resource_id& id) const;
  bool is_registered_job_manager(const graph::job_id& job) const;
  /// Idle TaskExecutors reported by the SlotManager (a standalone RM cannot stop them).
  std::size_t idle_releases() const;

protected:
  void on_start() override;
  void on_exit() override;

private:
  struct wiring;
  /// A TaskExecutor's heartbeat carried its slot report.
  void task_manager_heartbeat_payload(const std::string& resource_id,
                                      const std::vector<char>& data);
  class actions;

  void register_methods();
  void accept_leadership(const rpc::fencing_token& session_id);
  void clear_state();
  void close_task_manager_connection(const cluster::resource_id& id, const std::string& cause,
                                     bool notify_task_manager);
  void close_job_manager_connection(const graph::job_id& job, const std::string& cause,
                                    bool notify_job_manager);
  /// The messaging half of a closed JobMaster connection: log, stop its heartbeat, tell it.
  void job_manager_connection_closed(const job_manager_registration& reg, const std::string& cause,
                                     bool notify_job_manager);
  void allocate_slot(const cluster::instance_id& instance, const cluster::resource_id& task_manager,
                     const cluster::slot_id& slot, const slot_request& request);
  void notify_allocation_failure(const graph::job_id& job, const cluster::allocation_id& allocation,
                                 const std::string& target_address, const error& cause);
  void release_resource(const cluster::instance_id& instance,
                        const cluster::resource_id& task_manager, const std::string& cause);

  resource_manager_config config_;
  resource_manager_services services_;
  std::shared_ptr<spdlog::logger> log_;
  /// Declared first, destroyed last: the state's SlotManager uses its executor and actions.
  std::unique_ptr<wiring> wiring_;
  /// The bookkeeping: registrations, the SlotManager, the leadership epoch (set on start).
  std::unique_ptr<resource_manager_state> state_;
};

} // namespace flint::resource_manager
