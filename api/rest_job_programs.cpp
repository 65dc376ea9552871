#include "api/rest_job_programs.hpp"

#include "api/job_library.hpp"
#include "runtime/streaming/output_initialization.hpp"

namespace flint::api {

rest::job_program_builder make_rest_job_program_builder() {
  rest::job_program_builder b;
  b.build = [](const std::filesystem::path& path, const std::vector<std::string>& args,
               const config::job_settings& settings,
               const graph::job_id& id,
               const std::string& entry) -> expected<rest::job_program> {
    auto library = load_job_library(path.string(), entry);
    if (!library)
      return library.error();
    auto program = build_job_program(**library, args, settings, id);
    if (!program)
      return program.error();
    // The library and the graphs that use its code stay together as long as the caller holds them.
    struct loaded {
      std::shared_ptr<job_library> library;
      streaming::job_program program;
    };
    auto held = std::make_shared<const loaded>(loaded{std::move(*library), std::move(*program)});
    rest::job_program p;
    p.job = *held->program.job;
    p.initialize_outputs = [held] { return streaming::initialize_outputs(*held->program.stream); };
    p.library = held;
    return p;
  };
  b.upload = [](caf::actor_system& system, const caf::actor& blob_server,
                const std::filesystem::path& library, const std::vector<std::string>& args,
                const config::job_settings& settings, graph::job_graph& job,
                const std::string& entry) {
    return upload_job(system, blob_server, library.string(), args, settings, job, entry);
  };
  return b;
}

} // namespace flint::api
