/// `windowed_clicks.so [flags]`: the windowed_clicks example (apps/examples/event_time/event_time_jobs.hpp) as a job
/// library: `flint run build/jobs/windowed_clicks.so [--count N] [--rate R] [--output DIR] ...`; runs until
/// cancelled unless --count bounds its generated input.

#include "api/job_entry.hpp"
#include "apps/examples/event_time/event_time_jobs.hpp"

namespace {

void windowed_clicks_main(flint::api::job_context& ctx) {
  flint::examples::build_windowed_clicks(ctx.env(), flint::examples::windowed_clicks_flags(ctx.args()));
  ctx.set_job_name(flint::examples::windowed_clicks_job_name);
}

} // namespace

FLINT_JOB_ENTRY(windowed_clicks_main)
