// The same gateway calls between two processes, over CAF's middleman on 127.0.0.1.

#include <doctest/doctest.h>

#include <future>
#include <random>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_error.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "test/support/child_process.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::rpc;
using namespace std::chrono_literals;

namespace {

struct remote_fixture {
  std::mt19937_64 rng{std::random_device{}()};
  fencing_token token = fencing_token::generate(rng);
  test::child_process peer{
    {FLINT_TEST_RPC_PEER, std::to_string(token.hi), std::to_string(token.lo)}};
  std::uint16_t port = 0;
  caf::actor_system_config cfg;
  caf::actor_system sys{configure_node(cfg, {})};
  trace::trace_recorder recorder{trace::system_now_us};
  client_identity who{"test_client", &recorder, 5s};

  remote_fixture() {
    REQUIRE(peer.started());
    auto line = peer.read_line(10s);
    REQUIRE(line.has_value());
    REQUIRE(line->rfind("port=", 0) == 0);
    port = static_cast<std::uint16_t>(std::stoi(line->substr(5)));
  }

  gateway connect(fencing_token t) {
    auto handle = connect_endpoint(sys, "127.0.0.1", port, "echo_server", 5s);
    REQUIRE(handle.has_value());
    return gateway(*handle, "echo_server", t);
  }
};

} // namespace

TEST_CASE_FIXTURE(remote_fixture, "a blocking gateway ask reaches an endpoint in another process") {
  auto gw = connect(token);
  caf::scoped_actor self{sys, true};
  auto r = gw.ask_blocking<echo_method>(*self, who, echo_request{"over the wire", {'\0', '\1'}});
  REQUIRE(r.has_value());
  CHECK(r->text == "over the wire");
  CHECK(r->data == std::vector<char>{'\0', '\1'});
  CHECK(r->responder == "echo_server");
  CHECK(test::contains_in_order(
    recorder.snapshot(), {{trace::direction::send, "echo"}, {trace::direction::response, "echo"}}));
}

TEST_CASE_FIXTURE(remote_fixture, "fencing holds across processes") {
  auto wrong = fencing_token::generate(rng);
  auto gw = connect(wrong);
  caf::scoped_actor self{sys, true};
  auto r = gw.ask_blocking<echo_method>(*self, who, echo_request{"x", {}});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == errc::fencing_token_mismatch);
  CHECK(r.error().message.find(wrong.to_string()) != std::string::npos);
  CHECK(r.error().message.find(token.to_string()) != std::string::npos);
  auto records = recorder.snapshot();
  REQUIRE_FALSE(records.empty());
  CHECK(records.back().result == trace::outcome::rejected);
}

TEST_CASE_FIXTURE(remote_fixture,
                  "an endpoint asks an endpoint in another process on the same code path") {
  auto gw = connect(token);
  endpoint_context ctx{"client_endpoint", &recorder, {}};
  auto client = sys.spawn<test::fake_endpoint>(ctx);
  std::promise<expected<echo_response>> done;
  auto* ep = &dynamic_cast<test::fake_endpoint&>(*caf::actor_cast<caf::abstract_actor*>(client));
  ep->run_async([&, ep] {
    gw.ask<echo_method>(*ep, echo_request{"async", {}},
                        [&](expected<echo_response> r) { done.set_value(std::move(r)); });
  });
  auto fut = done.get_future();
  REQUIRE(fut.wait_for(10s) == std::future_status::ready);
  auto r = fut.get();
  REQUIRE(r.has_value());
  CHECK(r->text == "async");
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(remote_fixture,
                  "malformed bytes across processes get an error and the peer keeps serving") {
  auto gw = connect(token);
  caf::scoped_actor self{sys, true};
  auto garbage = gw.ask_raw_blocking(*self, who, echo_method::id, "echo", {'n', 'o', 'p', 'e'});
  REQUIRE_FALSE(garbage.has_value());
  CHECK(garbage.error().code == errc::malformed_message);
  auto unknown = gw.ask_raw_blocking(*self, who, 0x7777, "nope", {});
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == errc::unknown_method);
  // Raw junk instead of an envelope.
  std::optional<expected<std::vector<char>>> junk;
  self->request(gw.target(), 5s, ask_atom::value, std::vector<char>(24, 'x'))
    .receive([&](std::vector<char>& bytes) { junk.emplace(std::move(bytes)); },
             [&](caf::error& err) { junk.emplace(from_caf_error(err, "junk", "peer", 5s)); });
  REQUIRE(junk.has_value());
  REQUIRE_FALSE(junk->has_value());
  CHECK(junk->error().code == errc::malformed_message);
  auto ok = gw.ask_blocking<echo_method>(*self, who, echo_request{"still here", {}});
  REQUIRE(ok.has_value());
  CHECK(ok->text == "still here");
}

TEST_CASE_FIXTURE(remote_fixture, "connecting to nothing or to an unknown endpoint fails clearly") {
  auto missing = connect_endpoint(sys, "127.0.0.1", port, "no_such_endpoint", 5s);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().message.find("no_such_endpoint") != std::string::npos);
  peer.stop();
  auto gone = connect_endpoint(sys, "127.0.0.1", port, "echo_server", 5s);
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().code == errc::unreachable);
  CHECK(gone.error().message.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
}
