/// `endless.so [--rate N]`: a keyed job that never finishes on its own — a sequence source up to
/// INT64_MAX, about N records per second per subtask (default 1000), a keyBy/sum across the
/// TaskManagers, and a sink that keeps nothing. Tests and drills use it for what happens to a
/// running job: cancel, a lost TaskManager, live traces.

#include "api/job_entry.hpp"

#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

namespace {

void endless_main(flint::api::job_context& ctx) {
  std::int64_t rate = 1000;
  const auto& args = ctx.args();
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--rate" && i + 1 < args.size())
      rate = std::stoll(args[++i]);
    else
      throw std::invalid_argument("endless: unexpected argument '" + args[i]
                                  + "'; usage: endless.so [--rate N]");
  }
  if (rate <= 0)
    throw std::invalid_argument("endless: --rate must be positive");
  auto pause = std::chrono::microseconds(1000000 / rate);
  ctx.env()
    .generate_sequence(0, std::numeric_limits<std::int64_t>::max())
    .map([pause](std::int64_t x) {
      std::this_thread::sleep_for(pause);
      return std::tuple<std::int64_t, std::int64_t>{x % 64, 1};
    })
    .uid("pace")
    .key_by<0>()
    .sum<1>()
    .uid("sum")
    .filter([](const std::tuple<std::int64_t, std::int64_t>&) { return false; })
    .print();
  ctx.set_job_name("Endless Sequence");
}

} // namespace

FLINT_JOB_ENTRY(endless_main)
