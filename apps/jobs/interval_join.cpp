/// `interval_join.so [flags]`: the interval_join example (apps/examples/event_time/event_time_jobs.hpp) as a job
/// library: `flint run build/jobs/interval_join.so [--count N] [--rate R] [--output DIR] ...`; runs until
/// cancelled unless --count bounds its generated input.

#include "api/job_entry.hpp"
#include "apps/examples/event_time/event_time_jobs.hpp"

namespace {

void interval_join_main(flint::api::job_context& ctx) {
  flint::examples::build_interval_join(ctx.env(), flint::examples::interval_join_flags(ctx.args()));
  ctx.set_job_name(flint::examples::interval_join_job_name);
}

} // namespace

FLINT_JOB_ENTRY(interval_join_main)
