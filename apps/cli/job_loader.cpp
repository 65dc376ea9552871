#include "apps/cli/job_loader.hpp"

#include <random>

#include "runtime/config/config_options.hpp"

#if FLINT_HAVE_JOB_LIBRARY
#include "api/job_library.hpp"
#endif

namespace flint::cli {

expected<api::configuration> job_configuration(const cli_settings& settings,
                                               std::optional<int> parallelism) {
  api::configuration out;
  auto p = settings.config.get(config::options::parallelism_default);
  if (!p)
    return p.error();
  out["parallelism.default"] = std::to_string(parallelism ? *parallelism : *p);
  auto buffer_timeout = settings.config.get(config::options::execution_buffer_timeout);
  if (!buffer_timeout)
    return buffer_timeout.error();
  // The API reads milliseconds.
  out["execution.buffer-timeout"] =
    std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(*buffer_timeout).count());
  for (const char* key : {"pipeline.max-parallelism", "pipeline.operator-chaining",
                          "execution.global-data-exchange-mode", "execution.runtime-mode",
                          "execution.checkpointing.interval"})
    if (auto v = settings.config.get_raw(key))
      out[key] = *v;
  // The job's own recovery and checkpoint settings (`-D restart-strategy.type=fixed-delay`,
  // `-D state.backend.type=rocksdb`): the JobMaster reads them over the cluster's, and the
  // Dispatcher refuses a bad one naming the key.
  for (const auto& key : settings.config.keys())
    if (key.starts_with("restart-strategy") || key == "jobmanager.execution.failover-strategy"
        || key.starts_with("execution.checkpointing.") || key.starts_with("state."))
      out[key] = *settings.config.get_raw(key);
  return out;
}

graph::job_id new_job_id() {
  std::random_device rd;
  auto draw = [&] { return (static_cast<std::uint64_t>(rd()) << 32) ^ rd(); };
  return graph::job_id{draw(), draw()};
}

#if FLINT_HAVE_JOB_LIBRARY

bool job_libraries_supported() {
  return true;
}

expected<loaded_job> load_job(const std::string& library_path, const std::vector<std::string>& args,
                              const api::configuration& config, const graph::job_id& id) {
  auto lib = api::load_job_library(library_path);
  if (!lib)
    return lib.error(); // its message names the library and what is wrong with it
  auto program = api::build_job_program(**lib, args, config, id);
  if (!program) {
    auto e = program.error();
    // `flint run job.so --input F -p 2` hands -p to the job; say where flint's options go.
    for (const auto& a : args)
      if (a == "-p" || a == "-d" || a == "-m" || a == "--parallelism" || a == "--detached"
          || a == "--jobmanager" || a == "--timeout" || a == "--local") {
        e.message += " (flint's own options, like " + a + ", go before the job library: everything after it is "
                     "the job's)";
        break;
      }
    return e;
  }
  loaded_job out;
  out.library = *lib;
  out.stream = std::move(program->stream);
  out.job = std::move(program->job);
  out.config = config;
  return out;
}

#else

bool job_libraries_supported() {
  return false;
}

expected<loaded_job> load_job(const std::string& library_path, const std::vector<std::string>&,
                              const api::configuration&, const graph::job_id&) {
  return make_error(
    errc::internal,
    "this flint was built without job library support; cannot load " + library_path);
}

#endif

} // namespace flint::cli
