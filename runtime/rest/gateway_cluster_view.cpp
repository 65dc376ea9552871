#include "runtime/rest/gateway_cluster_view.hpp"

#include <caf/all.hpp>

namespace flint::rest {

namespace {

/// Flink's answer while no leader is known (its LeaderRetrievalHandler).
const char* const no_leader =
  "Service temporarily unavailable due to an ongoing leader election. Please refresh.";

class gateway_cluster_view final : public cluster_view {
public:
  gateway_cluster_view(caf::actor_system& system, gateway_providers gateways,
                       std::chrono::nanoseconds timeout)
    : system_(system),
      gateways_(std::move(gateways)),
      timeout_(timeout) {}

  expected<dispatcher::job_list> list_jobs() override {
    return ask<dispatcher::list_jobs>(gateways_.dispatcher, rpc::ack{});
  }
  expected<job_master::job_status_response> job_status(const graph::job_id& job) override {
    return ask<dispatcher::request_job_status>(gateways_.dispatcher,
                                               dispatcher::job_id_request{job});
  }
  expected<unit> cancel_job(const graph::job_id& job) override {
    auto r = ask<dispatcher::cancel_job>(gateways_.dispatcher, dispatcher::job_id_request{job});
    if (!r)
      return r.error();
    return unit{};
  }
  expected<resource_manager::resource_overview> resource_overview() override {
    return ask<resource_manager::request_resource_overview>(gateways_.resource_manager, rpc::ack{});
  }
  expected<std::string> trigger_savepoint(const graph::job_id& job, const std::string& target,
                                          bool stop) override {
    auto r = ask<dispatcher::trigger_savepoint>(
      gateways_.dispatcher, dispatcher::trigger_savepoint_request{job, target, stop},
      std::chrono::hours(1));
    if (!r)
      return r.error();
    return r->path;
  }

  expected<trace::fetch_trace_response> fetch_trace(
    const trace::fetch_trace_request& request) override {
    if (!gateways_.trace)
      return make_error(errc::not_found, "This node records no trace.");
    auto gw = gateways_.trace();
    caf::scoped_actor self{system_, true};
    return gw.ask_blocking<trace::fetch_trace>(
      *self, rpc::client_identity{rest_endpoint_id, nullptr, timeout_}, request);
  }

private:
  template <class M>
  expected<typename M::response> ask(const std::function<rpc::gateway()>& provider,
                                     const typename M::request& req,
                                     std::optional<std::chrono::nanoseconds> timeout = {}) {
    auto gw = provider();
    if (gw.token().is_nil())
      return make_error(errc::unreachable, no_leader);
    caf::scoped_actor self{system_, true};
    auto r = gw.ask_blocking<M>(
      *self, rpc::client_identity{rest_endpoint_id, nullptr, timeout.value_or(timeout_)}, req);
    // Leadership moved between the look-up and the call.
    if (!r && r.error().code == errc::fencing_token_mismatch)
      return make_error(errc::unreachable, no_leader);
    return r;
  }

  caf::actor_system& system_;
  gateway_providers gateways_;
  std::chrono::nanoseconds timeout_;
};

} // namespace

std::shared_ptr<cluster_view> make_gateway_cluster_view(caf::actor_system& system,
                                                        gateway_providers gateways,
                                                        std::chrono::nanoseconds ask_timeout) {
  return std::make_shared<gateway_cluster_view>(system, std::move(gateways), ask_timeout);
}

} // namespace flint::rest
