#pragma once
/// The SlotPool as its own fenced endpoint (Flink 1.6's SlotPool RpcEndpoint), fenced with its
/// JobMaster's JobMasterId from the start. Methods per slot_pool_gateway.hpp; the logic is
/// `slot_pool_state`, this class maps it onto gateways:
/// - to the ResourceManager: `request_slot` / `cancel_slot_request`, fenced with the RM id given
///   by `connect_to_resource_manager` (the RM's handle is looked up in the endpoint directory by
///   its endpoint id);
/// - to TaskExecutors: `free_slot`, fenced with the JobMasterId, scope = the job id (handles from
///   the directory, where the JobMaster puts every TaskExecutor that registers).
/// Endpoint id: "slot_pool/<job id>".

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"
#include "runtime/actors/slot_pool/slot_pool_gateway.hpp"
#include "runtime/actors/slot_pool/slot_pool_state.hpp"

namespace flint::slot_pool {

struct slot_pool_config {
  /// `slot.request.timeout` (Flink: 5 min).
  std::chrono::nanoseconds slot_request_timeout = std::chrono::minutes(5);
  /// `slot.idle.timeout` (Flink: 50 s).
  std::chrono::nanoseconds slot_idle_timeout = std::chrono::seconds(50);
  /// Time-out of the pool's own calls to the RM and TaskExecutors (`rpc.ask.timeout`).
  std::chrono::nanoseconds rpc_timeout = std::chrono::seconds(10);
  /// Endpoint id of the JobMaster, the target address slot requests name.
  std::string job_master_address;
  /// Where Flink's log lines go; null: `make_endpoint_logger(<endpoint id>)` when the endpoint is
  /// made, on the sinks and at the level `configure_logging` set (stderr from info if never called).
  std::shared_ptr<spdlog::logger> logger = nullptr;
};

class slot_pool : public rpc::rpc_endpoint, private slot_pool_actions {
public:
  /// `directory` must outlive the actor.
  slot_pool(caf::actor_config& cfg, rpc::endpoint_context ctx, graph::job_id job,
            cluster::job_master_id token, slot_pool_config config,
            rpc::endpoint_directory* directory);
  ~slot_pool() override;

  /// The logic, for inspection in tests (read between steps, in the actor's absence of work).
  const slot_pool_state& state() const { return *state_; }

protected:
  void on_start() override;

private:
  // slot_pool_actions
  void request_slot_from_resource_manager(const slot_request_id& request,
                                          const cluster::allocation_id& allocation,
                                          const cluster::resource_profile& profile) override;
  void cancel_slot_request_at_resource_manager(const cluster::allocation_id& allocation) override;
  void free_slot_at_task_executor(const allocated_slot& slot, const std::string& cause) override;
  void complete_request(const slot_request_id& request, expected<allocated_slot> result) override;

  void schedule_idle_check();
  time_point now() const;
  std::optional<rpc::gateway> task_executor(const std::string& address) const;

  graph::job_id job_;
  cluster::job_master_id initial_token_;
  slot_pool_config config_;
  rpc::endpoint_directory* directory_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<slot_pool_state> state_;
  std::optional<rpc::gateway> resource_manager_;
  std::unordered_map<slot_request_id, rpc::reply_to<allocated_slot>> replies_;
};

} // namespace flint::slot_pool
