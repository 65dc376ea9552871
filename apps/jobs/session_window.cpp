/// `session_window.so [flags]`: the session_window example (apps/examples/event_time/event_time_jobs.hpp) as a job
/// library: `flint run build/jobs/session_window.so [--count N] [--rate R] [--output DIR] ...`; runs until
/// cancelled unless --count bounds its generated input.

#include "api/job_entry.hpp"
#include "apps/examples/event_time/event_time_jobs.hpp"

namespace {

void session_window_main(flint::api::job_context& ctx) {
  flint::examples::build_session_window(ctx.env(), flint::examples::session_window_flags(ctx.args()));
  ctx.set_job_name(flint::examples::session_window_job_name);
}

} // namespace

FLINT_JOB_ENTRY(session_window_main)
