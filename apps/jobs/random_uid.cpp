/// A job that breaks the determinism rule on purpose: its map's uid is random (or, when set,
/// the FLINT_TEST_JOB_UID environment variable), so every process builds a different JobGraph.
/// Tests use it to check that a TaskExecutor refuses a program that differs from the submitted
/// one and that the job fails with the difference named.

#include "api/job_entry.hpp"

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace {

void random_uid_main(flint::api::job_context& ctx) {
  std::string uid;
  if (const char* fixed = std::getenv("FLINT_TEST_JOB_UID"))
    uid = fixed;
  else
    uid = "map-" + std::to_string(std::random_device{}());
  ctx.env().generate_sequence(1, 100).map([](std::int64_t x) { return x * 2; }).uid(uid).print();
  ctx.set_job_name("Random Uid");
}

} // namespace

FLINT_JOB_ENTRY(random_uid_main)
