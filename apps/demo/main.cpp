// flint-demo: starts endpoints in one process, makes fenced calls (one with the current leader's
// token, one with a stale token after a leadership change, one malformed) and prints the
// message trace the node recorded. The main job until WordCount runs on the MiniCluster.

#include <cstdio>
#include <future>
#include <string>

#include <caf/all.hpp>

#include "runtime/actors/leader/embedded_leader_service.hpp"
#include "runtime/actors/rpc/echo_endpoint.hpp"
#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

using namespace flint;

namespace {

/// Follows the leader and keeps a gateway carrying its session id.
struct leader_follower : leader::leader_retrieval_listener {
  std::promise<rpc::gateway> next;
  bool waiting = false;
  void notify_leader_address(const leader::leader_address& a,
                             const rpc::fencing_token& id) override {
    if (waiting && a.handle) {
      waiting = false;
      next.set_value(rpc::gateway(a.handle, a.endpoint_id, id));
    }
  }
  std::future<rpc::gateway> expect() {
    next = {};
    waiting = true;
    return next.get_future();
  }
};

/// Leads with an echo endpoint; the endpoint adopts each granted session id as its token.
struct echo_leader : leader::leader_contender {
  caf::actor_system& sys;
  trace::trace_recorder& recorder;
  leader::leader_election_service& election;
  caf::actor current;
  echo_leader(caf::actor_system& s, trace::trace_recorder& r, leader::leader_election_service& e)
    : sys(s),
      recorder(r),
      election(e) {}
  void grant_leadership(const rpc::fencing_token& id) override {
    // A fresh endpoint incarnation per leadership keeps the demo short; it starts fenced by `id`.
    current = sys.spawn<rpc::echo_endpoint>(rpc::endpoint_context{"dispatcher", &recorder, {}}, id);
    election.confirm_leadership(id, {"dispatcher", current, {}, 0});
  }
  void revoke_leadership() override {
    caf::anon_send_exit(current, caf::exit_reason::user_shutdown);
  }
  std::string description() const override { return "dispatcher"; }
};

void print_call(const char* label, const expected<rpc::echo_response>& r) {
  if (r)
    std::printf("%-34s -> ok: \"%s\" from %s\n", label, r->text.c_str(), r->responder.c_str());
  else
    std::printf("%-34s -> %s\n", label, r.error().to_string().c_str());
}

} // namespace

int main() {
  caf::actor_system_config cfg;
  rpc::configure_node(cfg, {"stealing", 0, false, {}, {}});
  caf::actor_system sys{cfg};
  trace::trace_recorder recorder(trace::system_now_us);
  rpc::client_identity cli{"cli", &recorder, std::chrono::seconds(10)};
  caf::scoped_actor self{sys, true};

  leader::embedded_leader_service leadership(std::random_device{}());
  auto election = leadership.create_election_service();
  auto retrieval = leadership.create_retrieval_service();
  leader_follower follower;
  echo_leader contender(sys, recorder, *election);

  auto first = follower.expect();
  retrieval->start(follower);
  election->start(contender);
  auto gw = first.get();
  std::printf("leader: dispatcher with session id %s\n\n", gw.token().to_string().c_str());

  print_call("ask with the leader's token",
             gw.ask_blocking<rpc::echo_method>(*self, cli, {"hello", {}}));

  auto second = follower.expect();
  leadership.revoke_and_regrant();
  auto new_gw = second.get();
  std::printf("leadership changed: new session id %s\n", new_gw.token().to_string().c_str());
  print_call("ask the old leader", gw.ask_blocking<rpc::echo_method>(*self, cli, {"stale", {}}));
  // The old incarnation is gone; the new one refuses the stale token.
  print_call(
    "ask the new leader, old token",
    new_gw.with_token(gw.token()).ask_blocking<rpc::echo_method>(*self, cli, {"stale", {}}));
  print_call("ask the new leader, new token",
             new_gw.ask_blocking<rpc::echo_method>(*self, cli, {"fresh", {}}));
  auto bad = new_gw.ask_raw_blocking(*self, cli, rpc::echo_method::id, "echo", {'b', 'a', 'd'});
  std::printf("%-34s -> %s\n\n", "ask with a malformed payload",
              bad ? "ok?!" : bad.error().to_string().c_str());

  std::printf("message trace (%llu records):\n",
              static_cast<unsigned long long>(recorder.recorded()));
  auto records = recorder.snapshot();
  auto t0 = records.empty() ? 0 : records.front().time_us;
  for (const auto& r : records)
    std::printf("  +%6lld us  %-8s %-10s -> %-10s %-5s %-5s token=%.8s… %s%s%s\n",
                static_cast<long long>(r.time_us - t0), trace::to_string(r.dir), r.from.c_str(),
                r.to.c_str(), r.method.c_str(), r.is_ask ? "ask" : "tell",
                r.token.to_string().c_str(), trace::to_string(r.result),
                r.detail.empty() ? "" : ": ", r.detail.substr(0, 60).c_str());
  retrieval->stop();
  election->stop();
  caf::anon_send_exit(contender.current, caf::exit_reason::user_shutdown);
  return 0;
}
