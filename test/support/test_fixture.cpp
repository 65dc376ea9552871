#include "test/support/test_fixture.hpp"

#include <caf/all.hpp>

namespace flint::test {

caf::actor_system_config& deterministic_config(caf::actor_system_config& cfg) {
  // The policy must be an atom: a string is silently ignored (CAF-NOTES.md).
  cfg.set("scheduler.policy", caf::atom("testing"));
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console", caf::atom("none"));
  cfg.set("logger.inline-output", true);
  return cfg;
}

test_fixture::test_fixture()
  : sys(deterministic_config(cfg)),
    sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())),
    recorder([this] {
      return std::chrono::duration_cast<std::chrono::microseconds>(
               sched.clock().now().time_since_epoch())
        .count();
    }) {}

test_fixture::~test_fixture() {
  // ~actor_system blocks while any actor lives, including ones kept alive by pending timers.
  for (auto& a : spawned_)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  sched.run();
  sched.clock().cancel_all();
  sched.run();
}

rpc::endpoint_context test_fixture::context(std::string endpoint_id,
                                            std::chrono::nanoseconds ask_timeout) {
  rpc::endpoint_context ctx;
  ctx.endpoint_id = std::move(endpoint_id);
  ctx.recorder = &recorder;
  ctx.config.ask_timeout = ask_timeout;
  return ctx;
}

fake_endpoint::fake_endpoint(caf::actor_config& cfg, rpc::endpoint_context ctx, setup_fn setup)
  : rpc::rpc_endpoint(cfg, std::move(ctx)),
    setup_(std::move(setup)) {}

void fake_endpoint::on_start() {
  if (setup_)
    setup_(*this);
}

bool contains_in_order(const std::vector<trace::record>& records,
                       const std::vector<std::pair<trace::direction, std::string>>& steps) {
  size_t next = 0;
  for (const auto& r : records) {
    if (next == steps.size())
      break;
    if (r.dir == steps[next].first && r.method == steps[next].second)
      ++next;
  }
  return next == steps.size();
}

} // namespace flint::test
