#include "runtime/rest/gateway_cluster_view.hpp"

#include <random>

#include <caf/all.hpp>

#include "runtime/config/config_options.hpp"
#include "runtime/config/file_path.hpp"
#include "runtime/graph/json_plan.hpp"
#include "runtime/config/job_configuration.hpp"
#include "runtime/state/checkpoint_storage.hpp"

namespace flint::rest {

namespace {

const char* const no_leader = no_leader_message;

/// Pieces of TaskManager files this node's rpc.max-frame-size accepts as a reply (the value was
/// checked when the node started; a configuration without it has the default).
std::int64_t file_chunk_bytes_of(const config::configuration& configuration) {
  auto frame = configuration.get(config::options::rpc_max_frame_size);
  return task_executor::file_chunk_bytes_for(
    frame ? frame->bytes : config::options::rpc_max_frame_size.default_value->bytes);
}

class gateway_cluster_view final : public cluster_view {
public:
  gateway_cluster_view(caf::actor_system& system, gateway_providers gateways,
                       std::chrono::nanoseconds timeout, config::configuration configuration)
    : system_(system),
      gateways_(std::move(gateways)),
      timeout_(timeout),
      configuration_(std::move(configuration)),
      // Pieces this node's rpc.max-frame-size accepts as a reply (checked when the node started).
      file_chunk_bytes_(file_chunk_bytes_of(configuration_)) {}

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
                                          bool stop, bool drain) override {
    auto r = ask<dispatcher::trigger_savepoint>(
      gateways_.dispatcher, dispatcher::trigger_savepoint_request{job, target, stop, drain},
      std::chrono::hours(1));
    if (!r)
      return r.error();
    return r->path;
  }
  expected<std::int64_t> trigger_checkpoint(const graph::job_id& job) override {
    auto r = ask<dispatcher::trigger_checkpoint>(gateways_.dispatcher,
                                                 dispatcher::job_id_request{job});
    if (!r)
      return r.error();
    return r->checkpoint_id;
  }

  expected<unit> dispose_savepoint(const std::string& given) override {
    auto path = config::parse_path(given, config::path_scope::shared);
    if (!path)
      return make_error(errc::invalid_argument,
                        "Cannot dispose of savepoint '" + given + "': " + path.error().message);
    auto dir = path->filename() == "_metadata" ? path->parent_path() : *path;
    // Only what reads as a savepoint or checkpoint goes: its directory holds its _metadata and
    // the files it owns.
    if (auto metadata = state::load_checkpoint_metadata(dir.string()); !metadata)
      return make_error(errc::invalid_argument,
                        "Cannot dispose of savepoint '" + given + "': " + metadata.error().message);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec)
      return make_error(errc::internal,
                        "Could not delete savepoint " + dir.string() + ": " + ec.message());
    return unit{};
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

  expected<std::string> plan_library(const library_run& run) override {
    if (auto leading = check_leading(); !leading)
      return leading.error();
    auto built = build(run);
    if (!built)
      return built.error();
    return graph::json_execution_plan(built->program.job, 4);
  }

  expected<graph::job_id> run_library(const library_run& run) override {
    if (!gateways_.blob_server)
      return make_error(errc::illegal_state,
                        "This JobManager has no blob server: no job library "
                        "can be run.");
    // Before the library's code runs here: a standby's answer goes to the leader instead.
    if (auto leading = check_leading(); !leading)
      return leading.error();
    auto built = build(run);
    if (!built)
      return built.error();
    // The program keeps the library loaded until the job is uploaded and submitted.
    auto& program = built->program;
    if (auto outputs = program.initialize_outputs(); !outputs)
      return outputs.error();
    auto job = program.job;
    auto id = job.job_id;
    job.savepoint_restore = {run.savepoint_path, run.allow_non_restored_state, run.claim_mode};
    if (auto up = gateways_.job_programs.upload(system_, gateways_.blob_server(), run.library,
                                                run.args, built->settings, job, run.entry);
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

  expected<task_executor::log_list_response> task_manager_logs(
    const std::string& address) override {
    return ask_task_executor<task_executor::request_log_list>(address, rpc::ack{});
  }
  expected<task_executor::file_chunk> task_manager_file_chunk(const std::string& address,
                                                              const task_manager_file& file,
                                                              std::int64_t offset) override {
    if (file.type.empty())
      return ask_task_executor<task_executor::request_file_upload_by_name>(
        address, task_executor::file_upload_by_name_request{file.name, offset, file_chunk_bytes_});
    return ask_task_executor<task_executor::request_file_upload_by_type>(
      address, task_executor::file_upload_by_type_request{file.type, offset, file_chunk_bytes_});
  }
  expected<task_executor::thread_dump_response> task_manager_thread_dump(
    const std::string& address) override {
    return ask_task_executor<task_executor::request_thread_dump>(address, rpc::ack{});
  }

  std::optional<std::string> leader_rest_url() override {
    return gateways_.leader_rest_url ? gateways_.leader_rest_url() : std::nullopt;
  }

private:
  /// errc::unreachable (Flink's leader-election answer, which a standby forwards to the leader)
  /// while this node's Dispatcher does not lead.
  expected<unit> check_leading() {
    if (gateways_.dispatcher && gateways_.dispatcher().token().is_nil())
      return make_error(errc::unreachable, no_leader);
    return unit{};
  }

  /// Asks the TaskExecutor at `address` as the leading ResourceManager does (its token, in the
  /// ResourceManager's fencing scope): Flink's ResourceManager passes these requests on.
  template <class M>
  expected<typename M::response> ask_task_executor(const std::string& address,
                                                   const typename M::request& req) {
    auto rm = gateways_.resource_manager();
    if (rm.token().is_nil())
      return make_error(errc::unreachable, no_leader);
    auto handle = gateways_.task_executor ? gateways_.task_executor(address) : caf::actor{};
    if (!handle)
      return make_error(errc::not_found,
                        "The TaskExecutor " + address + " cannot be reached from this JobManager.");
    return ask<M>(
      [&] { return rpc::gateway(handle, address, rm.token(), task_executor::rm_scope); }, req);
  }

  struct built_program {
    config::job_settings settings;
    job_program program;
  };

  /// The library's program with the run's settings (the cluster's, the run's configuration over
  /// them, its parallelism) and job id, built by the node's job program builder.
  expected<built_program> build(const library_run& run) {
    if (!gateways_.job_programs)
      return make_error(errc::illegal_state,
                        "This JobManager runs no job libraries: it was started without a job "
                        "program builder (flint-node gives it one).");
    auto configuration = configuration_;
    for (const auto& [key, value] : run.configuration)
      configuration.set(key, value, "REST flinkConfiguration");
    auto settings = config::job_configuration(configuration, run.parallelism);
    if (!settings)
      return settings.error();
    graph::job_id id;
    if (run.job_id) {
      id = *run.job_id;
    } else {
      std::random_device rd;
      auto draw = [&] { return (static_cast<std::uint64_t>(rd()) << 32) ^ rd(); };
      id = graph::job_id{draw(), draw()};
    }
    auto program = gateways_.job_programs.build(run.library, run.args, *settings, id, run.entry);
    if (!program)
      return program.error();
    return built_program{std::move(*settings), std::move(*program)};
  }

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
  std::int64_t file_chunk_bytes_;
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
