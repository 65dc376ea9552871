#include "runtime/rest/gateway_cluster_view.hpp"

#include <random>

#include <caf/all.hpp>

#include "api/job_library.hpp"
#include "runtime/streaming/output_initialization.hpp"
#include "runtime/config/job_configuration.hpp"

namespace flint::rest {

namespace {

/// Flink's answer while no leader is known (its LeaderRetrievalHandler).
const char* const no_leader =
  "Service temporarily unavailable due to an ongoing leader election. Please refresh.";

class gateway_cluster_view final : public cluster_view {
public:
  gateway_cluster_view(caf::actor_system& system, gateway_providers gateways,
                       std::chrono::nanoseconds timeout, config::configuration configuration)
    : system_(system),
      gateways_(std::move(gateways)),
      timeout_(timeout),
      configuration_(std::move(configuration)) {}

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

  expected<graph::job_id> run_library(const library_run& run) override {
    if (!gateways_.blob_server)
      return make_error(errc::illegal_state,
                        "This JobManager has no blob server: no job library "
                        "can be run.");
    auto settings = config::job_configuration(configuration_, run.parallelism);
    if (!settings)
      return settings.error();
    auto library = api::load_job_library(run.library.string());
    if (!library)
      return library.error();
    std::random_device rd;
    auto draw = [&] { return (static_cast<std::uint64_t>(rd()) << 32) ^ rd(); };
    graph::job_id id{draw(), draw()};
    auto program = api::build_job_program(**library, run.args, *settings, id);
    if (!program)
      return program.error();
    if (auto outputs = streaming::initialize_outputs(*program->stream); !outputs)
      return outputs.error();
    // The program's graphs keep the library loaded until the job is uploaded and submitted.
    auto job = *program->job;
    job.savepoint_restore = {run.savepoint_path, run.allow_non_restored_state, run.claim_mode};
    if (auto up = api::upload_job(system_, gateways_.blob_server(), run.library.string(), run.args,
                                  *settings, job);
        !up)
      return make_error(up.error().code,
                        "Could not upload the job library " + run.library.filename().string()
                          + " to the blob server: " + up.error().message);
    auto submitted =
      ask<dispatcher::submit_job>(gateways_.dispatcher, dispatcher::submit_job_request{job});
    if (!submitted)
      return submitted.error();
    return id;
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
  config::configuration configuration_;
};

} // namespace

std::shared_ptr<cluster_view> make_gateway_cluster_view(caf::actor_system& system,
                                                        gateway_providers gateways,
                                                        std::chrono::nanoseconds ask_timeout,
                                                        config::configuration configuration) {
  return std::make_shared<gateway_cluster_view>(system, std::move(gateways), ask_timeout,
                                                std::move(configuration));
}

} // namespace flint::rest
