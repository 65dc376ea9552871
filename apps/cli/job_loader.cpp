#include "apps/cli/job_loader.hpp"

#include <random>

#include "runtime/config/job_configuration.hpp"

#if FLINT_HAVE_JOB_LIBRARY
#include "api/job_library.hpp"
#endif

namespace flint::cli {

expected<api::configuration> job_configuration(const cli_settings& settings,
                                               std::optional<int> parallelism) {
  return config::job_configuration(settings.config, parallelism);
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
                              const api::configuration& config, const graph::job_id& id,
                              const std::string& entry) {
  auto lib = api::load_job_library(library_path, entry);
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
                              const api::configuration&, const graph::job_id&, const std::string&) {
  return make_error(
    errc::internal,
    "this flint was built without job library support; cannot load " + library_path);
}

#endif

} // namespace flint::cli
