#pragma once
/// The Dispatcher endpoint (Flink's Dispatcher): accepts jobs, runs one JobMaster per job
/// through a job_master_runner, answers job status and results, and keeps an in-memory archive
/// of finished jobs. Fenced with the DispatcherId it is granted by its leader election.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <memory>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/error.hpp>

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/dispatcher/dispatcher_state.hpp"
#include "runtime/actors/dispatcher/job_master_runner.hpp"
#include "runtime/actors/job_master/job_master.hpp"
#include "runtime/actors/leader/ha_services.hpp"
#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"

namespace spdlog {
class logger;
}

namespace flint::ha {
class ha_stores;
}

namespace flint::dispatcher {

struct dispatcher_config {
  job_master::job_master_config job_master;
};

struct dispatcher_services {
  leader::ha_services* ha = nullptr;
  rpc::endpoint_directory* directory = nullptr;
  /// Wall-clock milliseconds for job start and end times (injected; tests pass their own).
  std::function<std::int64_t()> now_ms;
  /// Submitted jobs and results of terminated ones (Flink's JobGraphStore and JobResultStore);
  /// a new leader recovers every job there without a result. Null: jobs live in memory only.
  ha::ha_stores* stores = nullptr;
};

class dispatcher : public rpc::rpc_endpoint, public leader::leader_contender {
public:
  dispatcher(caf::actor_config& cfg, rpc::endpoint_context ctx, dispatcher_config config,
             dispatcher_services services);
  ~dispatcher() override;

  // leader_contender: called from any thread, forwarded into the main thread.
  void grant_leadership(const rpc::fencing_token& session_id) override;
  void revoke_leadership() override;
  std::string description() const override { return endpoint_id(); }

  const dispatcher_state& state() const noexcept { return state_; }

protected:
  void on_start() override;
  void on_exit() override;

private:
  struct running_job {
    graph::job_graph graph;
    std::unique_ptr<job_master_runner> runner;
    caf::actor job_master;
    cluster::job_master_id job_master_id;
    std::vector<rpc::reply_to<job_result>> waiting_for_result;
  };

  rpc::gateway job_master_gateway(const graph::job_id& id, const running_job& job) const;
  /// Registers `graph` and contends for its JobMaster's leadership (submitted or recovered).
  expected<unit> run_job(graph::job_graph graph);
  /// Flink's Dispatcher leader process start: every job in the JobGraphStore without an entry in
  /// the JobResultStore runs again; a job whose graph cannot be read fails alone.
  void recover_jobs();
  /// The job's result goes to the JobResultStore (dirty), its graph leaves the JobGraphStore,
  /// then the result is marked clean (Flink's cleanup after a globally terminal state).
  void clean_up_job(const job_master::job_master_result& result, std::int64_t net_runtime_ms);
  void start_job_master(const graph::job_id& id, const rpc::fencing_token& token);
  void stop_job_master(running_job& job);
  /// Leadership is gone: every job's JobMaster stops, the jobs are forgotten (not archived).
  void suspend_jobs();
  void job_reached_terminal_state(const job_master::job_master_result& result);

  dispatcher_config config_;
  dispatcher_services services_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<leader::leader_election_service> election_;
  /// Whether this Dispatcher still leads, as its JobMasters ask before they act on a message:
  /// shared with them, emptied when leadership goes and when the Dispatcher stops.
  struct leadership_probe;
  std::shared_ptr<leadership_probe> leadership_;
  dispatcher_state state_;
  std::map<graph::job_id, running_job> jobs_;
  /// JobMasters told to stop whose down message has not come yet. Like Flink's Dispatcher, which
  /// terminates only once its JobManagerRunners closed, this one quits only when they are gone:
  /// whoever owns the HA services and the directory they use may free them after our down.
  std::set<caf::actor_addr> stopping_job_masters_;
  /// Set by the exit message that asked us to stop; we quit with it.
  std::optional<caf::error> exit_reason_;
};

} // namespace flint::dispatcher
