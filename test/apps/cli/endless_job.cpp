/// `cli_endless.so`: a job that runs until it is cancelled (a sequence source far longer than any
/// test), for `flint cancel`, `flint list`'s running section and `run --timeout`. It emits nothing.

#include "api/job_entry.hpp"

#include <cstdint>
#include <limits>

namespace {

void endless_main(flint::api::job_context& ctx) {
  ctx.env()
    .generate_sequence(0, std::numeric_limits<std::int64_t>::max() - 1)
    .filter([](const std::int64_t&) { return false; })
    .print();
  ctx.set_job_name("Endless Sequence");
}

} // namespace

FLINT_JOB_ENTRY(endless_main)
