#pragma once
/// The job program builder a JobManager's REST endpoint runs uploaded job libraries with
/// (/jars/:jarid/run and /plan): the api layer's load_job_library, build_job_program and
/// upload_job behind runtime/rest's job_program_builder, which knows nothing of the api layer.
/// flint-node hands it to its JobManager as it hands a TaskManager make_library_task_factory.

#include "runtime/rest/job_program_builder.hpp"

namespace flint::api {

rest::job_program_builder make_rest_job_program_builder();

} // namespace flint::api
