// The RPC substrate driven message by message on the deterministic scheduler.

#include <doctest/doctest.h>

#include <optional>
#include <random>

#include <caf/all.hpp>

#include "runtime/actors/rpc/echo_endpoint.hpp"
#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/rpc/ask_clock.hpp"
#include "runtime/actors/rpc/byte_buffers.hpp"
#include "runtime/actors/rpc/flat_message.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_error.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::rpc;
using namespace std::chrono_literals;
using flint::test::fake_endpoint;
using flint::test::test_fixture;

namespace {

std::mt19937_64 rng{42};

/// A fenced echo endpoint holding `token`; counts the calls it executed.
caf::actor spawn_echo(test_fixture& fx, fencing_token token, std::shared_ptr<int> executed) {
  return fx.spawn<fake_endpoint>(fx.context("echo_server"), [token, executed](fake_endpoint& self) {
    self.set_token(token);
    self.on<echo_method>(fencing::fenced,
                         [&self, executed](echo_request req) -> expected<echo_response> {
                           ++*executed;
                           return echo_response{req.text, req.data, self.endpoint_id()};
                         });
  });
}

struct rpc_fixture : test_fixture {
  fencing_token leader = fencing_token::generate(rng);
  std::shared_ptr<int> executed = std::make_shared<int>(0);
  caf::actor server = spawn_echo(*this, leader, executed);
  caf::actor client = spawn<fake_endpoint>(context("client"));

  rpc_fixture() { run(); }

  std::optional<expected<echo_response>> ask_echo(const gateway& gw, std::string text) {
    std::optional<expected<echo_response>> result;
    in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
      gw.ask<echo_method>(self, echo_request{text, {'a', 'b'}},
                          [&](expected<echo_response> r) { result.emplace(std::move(r)); });
    });
    run();
    return result;
  }

  std::optional<expected<std::vector<char>>> ask_raw_bytes(std::vector<char> envelope_bytes) {
    std::optional<expected<std::vector<char>>> result;
    in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
      self.request(server, 10s, ask_atom::value, std::move(envelope_bytes))
        .then([&](std::vector<char>& reply) { result.emplace(std::move(reply)); },
              [&](caf::error& err) { result.emplace(from_caf_error(err, "raw", "server", 10s)); });
    });
    run();
    return result;
  }
};

} // namespace

TEST_CASE_FIXTURE(rpc_fixture, "a fenced ask with the right token runs and answers") {
  auto r = ask_echo(gateway(server, "echo_server", leader), "hello");
  REQUIRE(r.has_value());
  REQUIRE(r->has_value());
  CHECK((*r)->text == "hello");
  CHECK((*r)->data == std::vector<char>{'a', 'b'});
  CHECK((*r)->responder == "echo_server");
  CHECK(*executed == 1);
  CHECK(test::contains_in_order(trace(),
                                {{trace::direction::send, "echo"},
                                 {trace::direction::receive, "echo"},
                                 {trace::direction::reply, "echo"},
                                 {trace::direction::response, "echo"}}));
}

TEST_CASE_FIXTURE(rpc_fixture, "a fenced ask with a wrong token is not run and names both tokens") {
  auto wrong = fencing_token::generate(rng);
  auto r = ask_echo(gateway(server, "echo_server", wrong), "hello");
  REQUIRE(r.has_value());
  REQUIRE_FALSE(r->has_value());
  CHECK(r->error().code == errc::fencing_token_mismatch);
  CHECK(r->error().message.find(wrong.to_string()) != std::string::npos);
  CHECK(r->error().message.find(leader.to_string()) != std::string::npos);
  CHECK(*executed == 0);
  auto records = trace();
  bool rejected = false;
  for (auto& rec : records)
    rejected |= rec.dir == trace::direction::receive && rec.result == trace::outcome::rejected;
  CHECK(rejected);
}

TEST_CASE_FIXTURE(rpc_fixture, "a fenced ask without a token is not run") {
  auto r = ask_echo(gateway(server, "echo_server"), "hello");
  REQUIRE(r.has_value());
  REQUIRE_FALSE(r->has_value());
  CHECK(r->error().code == errc::fencing_token_mismatch);
  CHECK(r->error().message.find("<none>") != std::string::npos);
  CHECK(r->error().message.find(leader.to_string()) != std::string::npos);
  CHECK(*executed == 0);
}

TEST_CASE_FIXTURE(rpc_fixture,
                  "a fenced tell with a wrong token is dropped and traced as rejected") {
  auto wrong = fencing_token::generate(rng);
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gateway(server, "echo_server", wrong).tell<echo_method>(self, echo_request{"x", {}});
  });
  run();
  CHECK(*executed == 0);
  auto records = trace();
  int rejected_tells = 0;
  int replies = 0;
  for (auto& rec : records) {
    if (rec.dir == trace::direction::receive && rec.result == trace::outcome::rejected
        && !rec.is_ask)
      ++rejected_tells;
    if (rec.dir == trace::direction::reply)
      ++replies;
  }
  CHECK(rejected_tells == 1);
  CHECK(replies == 0);
  // The right token goes through.
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gateway(server, "echo_server", leader).tell<echo_method>(self, echo_request{"x", {}});
  });
  run();
  CHECK(*executed == 1);
}

TEST_CASE_FIXTURE(rpc_fixture, "after a leadership change calls with the old token fail") {
  auto next = fencing_token::generate(rng);
  in_main_thread<fake_endpoint>(server, [&](fake_endpoint& self) { self.set_token(next); });
  run();
  auto old_call = ask_echo(gateway(server, "echo_server", leader), "old");
  REQUIRE(old_call.has_value());
  REQUIRE_FALSE(old_call->has_value());
  CHECK(old_call->error().code == errc::fencing_token_mismatch);
  auto new_call = ask_echo(gateway(server, "echo_server", next), "new");
  REQUIRE(new_call.has_value());
  CHECK(new_call->has_value());
  CHECK(*executed == 1);
}

TEST_CASE_FIXTURE(test_fixture,
                  "run_async and schedule_run_async run in the endpoint's main thread") {
  auto ep = spawn<fake_endpoint>(context("ep"));
  run();
  auto& self = deref<fake_endpoint>(ep);
  CHECK_FALSE(self.runs_in_main_thread());
  CHECK_THROWS_AS(self.validate_runs_in_main_thread(), std::logic_error);
  CHECK_THROWS_AS(self.set_token(fencing_token{1, 2}), std::logic_error);

  bool ran_now = false;
  bool ran_later = false;
  self.run_async([&] {
    self.validate_runs_in_main_thread();
    ran_now = self.runs_in_main_thread();
  });
  self.schedule_run_async(
    [&] {
      self.validate_runs_in_main_thread();
      ran_later = self.runs_in_main_thread();
    },
    5s);
  CHECK_FALSE(ran_now); // queued, not run inline
  run();
  CHECK(ran_now);
  CHECK_FALSE(ran_later);
  advance(4s);
  CHECK_FALSE(ran_later);
  advance(1s);
  CHECK(ran_later);
}

TEST_CASE_FIXTURE(test_fixture,
                  "call_async runs in the other endpoint and continues in the caller") {
  auto a = spawn<fake_endpoint>(context("a"));
  auto b = spawn<fake_endpoint>(context("b"));
  run();
  std::optional<expected<int>> got;
  bool ran_in_b = false;
  in_main_thread<fake_endpoint>(a, [&](fake_endpoint& self) {
    auto& other = deref<fake_endpoint>(b);
    self.call_async<int>(
      b,
      [&] {
        ran_in_b = other.runs_in_main_thread();
        return 7;
      },
      1s, [&](expected<int> v) { got.emplace(v); });
  });
  run();
  CHECK(ran_in_b);
  REQUIRE(got.has_value());
  REQUIRE(got->has_value());
  CHECK(**got == 7);
}

TEST_CASE_FIXTURE(test_fixture,
                  "an ask to an endpoint that never answers times out at the configured time") {
  // The silent endpoint parks every request and never delivers.
  auto silent = spawn<fake_endpoint>(context("silent"), [](fake_endpoint& self) {
    self.on_async<echo_method>(fencing::unfenced, [](echo_request, reply_to<echo_response>) {});
  });
  auto client = spawn<fake_endpoint>(context("client", 3s));
  run();
  std::optional<expected<echo_response>> result;
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gateway(silent, "silent")
      .ask<echo_method>(self, echo_request{"?", {}},
                        [&](expected<echo_response> r) { result.emplace(r); });
  });
  run();
  CHECK_FALSE(result.has_value());
  advance(2999ms);
  CHECK_FALSE(result.has_value());
  advance(1ms);
  REQUIRE(result.has_value());
  REQUIRE_FALSE(result->has_value());
  CHECK(result->error().code == errc::timeout);
  CHECK(result->error().message.find("3 s") != std::string::npos);
  bool traced = false;
  for (auto& rec : trace())
    traced |= rec.dir == trace::direction::response && rec.result == trace::outcome::timeout;
  CHECK(traced);
}

TEST_CASE_FIXTURE(test_fixture,
                  "open asks with different time-outs each fail at their own time, once, and "
                  "an answered ask never does") {
  // The endpoint times its asks itself (one timer for all of them, not one CAF time-out each):
  // a short ask sent after a long one must still fail first, at its own time.
  std::vector<reply_to<echo_response>> parked;
  auto silent = spawn<fake_endpoint>(context("silent"), [&](fake_endpoint& self) {
    self.on_async<echo_method>(fencing::unfenced, [&](echo_request, reply_to<echo_response> r) {
      parked.push_back(std::move(r));
    });
  });
  auto client = spawn<fake_endpoint>(context("client", 10s));
  run();
  int long_calls = 0, short_calls = 0, answered_calls = 0;
  std::optional<expected<echo_response>> long_result, short_result, answered_result;
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gateway gw(silent, "silent");
    gw.ask<echo_method>(self, echo_request{"long", {}}, [&](expected<echo_response> r) {
      ++long_calls;
      long_result.emplace(std::move(r));
    }, 5s);
    gw.ask<echo_method>(self, echo_request{"short", {}}, [&](expected<echo_response> r) {
      ++short_calls;
      short_result.emplace(std::move(r));
    }, 1s);
    gw.ask<echo_method>(self, echo_request{"answered", {}}, [&](expected<echo_response> r) {
      ++answered_calls;
      answered_result.emplace(std::move(r));
    }, 2s);
  });
  run();
  REQUIRE(parked.size() == 3);
  // The third is answered at once; its deadline passes without effect.
  in_main_thread<fake_endpoint>(silent, [&](fake_endpoint&) {
    parked[2](echo_response{"answered", {}, "silent"});
  });
  run();
  REQUIRE(answered_result.has_value());
  CHECK(answered_result->has_value());
  advance(999ms);
  CHECK_FALSE(short_result.has_value());
  advance(1ms);
  REQUIRE(short_result.has_value());
  REQUIRE_FALSE(short_result->has_value());
  CHECK(short_result->error().code == errc::timeout);
  CHECK(short_result->error().message.find("1 s") != std::string::npos);
  CHECK_FALSE(long_result.has_value());
  advance(3999ms);
  CHECK_FALSE(long_result.has_value());
  advance(1ms);
  REQUIRE(long_result.has_value());
  REQUIRE_FALSE(long_result->has_value());
  CHECK(long_result->error().code == errc::timeout);
  // An answer after the time-out finds no one waiting: the continuation ran once.
  in_main_thread<fake_endpoint>(silent, [&](fake_endpoint&) {
    parked[0](echo_response{"late", {}, "silent"});
    parked[1](echo_response{"late", {}, "silent"});
  });
  run();
  advance(10s);
  CHECK(long_calls == 1);
  CHECK(short_calls == 1);
  CHECK(answered_calls == 1);
  CHECK_FALSE(long_result->has_value());
  int timeouts = 0;
  for (auto& rec : trace())
    timeouts += rec.dir == trace::direction::response && rec.result == trace::outcome::timeout;
  CHECK(timeouts == 2);
}

TEST_CASE_FIXTURE(test_fixture,
                  "a call answered later keeps its own answer while the next calls are "
                  "answered at once") {
  // An endpoint reuses the state of a call answered before its handler returned; a responder a
  // handler kept must never be handed to another call.
  std::optional<reply_to<echo_response>> kept;
  auto server = spawn<fake_endpoint>(context("server"), [&](fake_endpoint& self) {
    self.on_async<echo_method>(fencing::unfenced, [&](echo_request req, reply_to<echo_response> r) {
      if (req.text == "later" && !kept)
        kept.emplace(std::move(r));
      else
        r(echo_response{req.text, {}, "server"});
    });
  });
  auto client = spawn<fake_endpoint>(context("client"));
  run();
  std::vector<std::string> answers;
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gateway gw(server, "server");
    for (auto text : {"now-1", "later", "now-2", "now-3"})
      gw.ask<echo_method>(self, echo_request{text, {}}, [&answers](expected<echo_response> r) {
        answers.push_back(r ? r->text : "error: " + r.error().message);
      });
  });
  run();
  CHECK(answers == std::vector<std::string>{"now-1", "now-2", "now-3"});
  REQUIRE(kept.has_value());
  in_main_thread<fake_endpoint>(server, [&](fake_endpoint&) {
    (*kept)(echo_response{"later", {}, "server"});
  });
  run();
  CHECK(answers == std::vector<std::string>{"now-1", "now-2", "now-3", "later"});
}

TEST_CASE_FIXTURE(
  test_fixture,
  "an endpoint that stops fails its open calls at once instead of leaving them to time out") {
  // The endpoint parks the request (an answer it would give later), then is stopped.
  auto parked = std::make_shared<std::vector<reply_to<echo_response>>>();
  auto parking = spawn<fake_endpoint>(context("parking"), [parked](fake_endpoint& self) {
    self.on_async<echo_method>(
      fencing::unfenced,
      [parked](echo_request, reply_to<echo_response> reply) { parked->push_back(reply); });
  });
  auto client = spawn<fake_endpoint>(context("client", 10s));
  run();
  std::optional<expected<echo_response>> result;
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gateway(parking, "parking")
      .ask<echo_method>(self, echo_request{"?", {}},
                        [&](expected<echo_response> r) { result.emplace(r); });
  });
  run();
  CHECK_FALSE(result.has_value());
  caf::anon_send_exit(parking, caf::exit_reason::user_shutdown);
  run();
  REQUIRE(result.has_value());
  REQUIRE_FALSE(result->has_value());
  CHECK(result->error().code == errc::unreachable);
  CHECK(result->error().message.find("endpoint parking is stopped") != std::string::npos);
}

TEST_CASE_FIXTURE(rpc_fixture,
                  "malformed messages get a clear error and the endpoint keeps serving") {
  SUBCASE("random bytes") {
    std::vector<char> junk(40);
    for (auto& c : junk)
      c = static_cast<char>(rng());
    auto r = ask_raw_bytes(junk);
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().code == errc::malformed_message);
  }
  SUBCASE("a truncated envelope") {
    envelope env;
    env.method_id = echo_method::id;
    env.token = leader;
    env.payload = codec<echo_request>::encode(echo_request{"hi", {}});
    auto bytes = encode_envelope(env);
    bytes.resize(bytes.size() - 16);
    auto r = ask_raw_bytes(bytes);
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().code == errc::malformed_message);
  }
  SUBCASE("a truncated payload in a whole envelope") {
    envelope env;
    env.method_id = echo_method::id;
    env.token = leader;
    env.payload = codec<echo_request>::encode(echo_request{"hello there", {}});
    env.payload.resize(env.payload.size() - 8);
    auto r = ask_raw_bytes(encode_envelope(env));
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().code == errc::malformed_message);
    CHECK(r->error().message.find("echo request") != std::string::npos);
  }
  SUBCASE("a wrong method id") {
    envelope env;
    env.method_id = 0xBEEF;
    env.token = leader;
    auto r = ask_raw_bytes(encode_envelope(env));
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().code == errc::unknown_method);
    CHECK(r->error().message.find(std::to_string(0xBEEF)) != std::string::npos);
  }
  SUBCASE("empty bytes") {
    auto r = ask_raw_bytes({});
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().code == errc::malformed_message);
  }
  CHECK(*executed == 0);
  // Still serving.
  auto ok = ask_echo(gateway(server, "echo_server", leader), "after");
  REQUIRE(ok.has_value());
  REQUIRE(ok->has_value());
  CHECK((*ok)->text == "after");
}

TEST_CASE("envelope and error answer round trip losslessly") {
  envelope env;
  env.method_id = 77;
  env.token = fencing_token{0x1234, 0x5678};
  env.fencing_scope = "job-1";
  env.trace = {1, 2, 3};
  env.sender = "resource_manager";
  env.payload = {'x', '\0', 'y'};
  auto back = decode_envelope(encode_envelope(env));
  REQUIRE(back.has_value());
  CHECK(back->method_id == 77);
  CHECK(back->token == env.token);
  CHECK(back->fencing_scope == "job-1");
  CHECK(back->trace.parent_span_id == 3);
  CHECK(back->sender == "resource_manager");
  CHECK(back->payload == env.payload);
  // The request follows the header in the same bytes and is read where it lies.
  auto in_place = read_envelope(encode_envelope(env));
  REQUIRE(in_place.has_value());
  CHECK(std::vector<char>(in_place->payload.begin(), in_place->payload.end()) == env.payload);
  auto err = from_caf_error(to_caf_error(make_error(errc::rejected, "no")), "m", "t", 1s);
  CHECK(err == make_error(errc::rejected, "no"));
  // A code past the last errc from a broken peer is no valid answer.
  auto bad = from_caf_error(
    caf::error(200, caf::atom("flint"), caf::make_message(std::string("x"))), "m", "t", 1s);
  CHECK(bad.code == errc::malformed_message);
  // Misaligned input decodes too (Cap'n Proto needs words; the codec copies).
  auto bytes = encode_envelope(env);
  std::vector<char> shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  auto misaligned = decode_envelope(std::span<const char>(shifted.data() + 1, bytes.size()));
  REQUIRE(misaligned.has_value());
  CHECK(misaligned->sender == "resource_manager");
}

TEST_CASE("fencing tokens print as UUIDs and nil as <none>") {
  std::mt19937_64 local{1};
  auto t = fencing_token::generate(local);
  auto s = t.to_string();
  CHECK(s.size() == 36);
  CHECK(s[14] == '4');
  CHECK(fencing_token{}.to_string() == "<none>");
  CHECK_FALSE(t.is_nil());
}

TEST_CASE_FIXTURE(rpc_fixture,
                  "a call larger than rpc.max-frame-size is refused unread and traced, "
                  "and the endpoint keeps serving") {
  auto ctx = context("small_server");
  ctx.config.max_frame_size = 4096;
  auto small = spawn<fake_endpoint>(ctx, [this](fake_endpoint& self) {
    self.set_token(leader);
    self.on<echo_method>(fencing::fenced, [&self](echo_request req) -> expected<echo_response> {
      return echo_response{req.text, req.data, self.endpoint_id()};
    });
  });
  run();
  gateway gw(small, "small_server", leader);
  std::optional<expected<echo_response>> big;
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gw.ask<echo_method>(self, echo_request{"big", std::vector<char>(8192, 'x')},
                        [&](expected<echo_response> r) { big.emplace(std::move(r)); });
  });
  run();
  REQUIRE(big.has_value());
  REQUIRE_FALSE(big->has_value());
  CHECK(big->error().code == errc::rejected);
  CHECK(big->error().message.find("larger than rpc.max-frame-size (4096 bytes)")
        != std::string::npos);
  bool traced = false;
  for (const auto& r : recorder.snapshot())
    if (r.to == "small_server" && r.result == trace::outcome::malformed
        && r.detail.find("rpc.max-frame-size") != std::string::npos)
      traced = true;
  CHECK(traced);
  std::optional<expected<echo_response>> small_call;
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gw.ask<echo_method>(self, echo_request{"small", {'a'}},
                        [&](expected<echo_response> r) { small_call.emplace(std::move(r)); });
  });
  run();
  REQUIRE(small_call.has_value());
  CHECK(small_call->has_value());
}

TEST_CASE_FIXTURE(rpc_fixture, "a handler reading its request in place answers what a decoding one does") {
  // echo_endpoint reads the request through its Cap'n Proto reader (handle_in_place).
  auto in_place = spawn<echo_endpoint>(context("echo_in_place"), leader);
  run();
  gateway gw(in_place, "echo_in_place", leader);
  echo_request req{"hello", {'a', '\0', 'b'}};
  std::optional<expected<echo_response>> decoded;
  std::optional<expected<std::vector<char>>> bytes;
  std::optional<expected<std::vector<char>>> truncated;
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gw.ask<echo_method>(self, req, [&](expected<echo_response> r) { decoded.emplace(std::move(r)); });
    gw.ask_in_place<echo_method>(self, req, [&](expected<std::span<const char>> r) {
      if (r)
        bytes.emplace(std::vector<char>(r->begin(), r->end()));
      else
        bytes.emplace(r.error());
    });
    auto payload = codec<echo_request>::encode(req);
    payload.resize(payload.size() - 8);
    gw.ask_raw(self, echo_method::id, echo_method::name, payload, std::nullopt,
               [&](expected<std::vector<char>> r) { truncated.emplace(std::move(r)); });
  });
  run();
  REQUIRE(decoded.has_value());
  REQUIRE(decoded->has_value());
  CHECK(**decoded == echo_response{"hello", {'a', '\0', 'b'}, "echo_in_place"});
  REQUIRE(bytes.has_value());
  REQUIRE(bytes->has_value());
  // The same bytes the generated codec writes for that response.
  CHECK(**bytes == codec<echo_response>::encode(**decoded));
  REQUIRE(truncated.has_value());
  REQUIRE_FALSE(truncated->has_value());
  CHECK(truncated->error().code == errc::malformed_message);
  CHECK(truncated->error().message.find("echo request") != std::string::npos);
  // Traced like any call, with the method's name.
  CHECK(test::contains_in_order(trace(),
                                {{trace::direction::send, "echo"},
                                 {trace::direction::receive, "echo"},
                                 {trace::direction::reply, "echo"},
                                 {trace::direction::response, "echo"}}));
  CHECK(dynamic_cast<echo_endpoint&>(*caf::actor_cast<caf::abstract_actor*>(in_place)).served() == 2);
}

TEST_CASE_FIXTURE(rpc_fixture, "an ask with its request written in place sends the bytes ask<M> sends") {
  auto in_place = spawn<echo_endpoint>(context("echo_in_place"), leader);
  run();
  gateway gw(in_place, "echo_in_place", leader);
  echo_request req{"hello", {'a', '\0', 'b'}};
  std::optional<expected<std::vector<char>>> written, encoded, empty, wrong_token;
  auto keep = [](std::optional<expected<std::vector<char>>>& into) {
    return [&into](expected<std::span<const char>> r) {
      if (r)
        into.emplace(std::vector<char>(r->begin(), r->end()));
      else
        into.emplace(r.error());
    };
  };
  auto write = [&](std::vector<char>& out) {
    flat::struct_writer w(out, 0, 2, 0);
    w.text(0, req.text);
    w.data(1, std::span<const char>(req.data.data(), req.data.size()));
    w.finish();
  };
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gw.ask_written<echo_method>(self, write, keep(written));
    gw.ask_in_place<echo_method>(self, req, keep(encoded));
    // A writer that writes nothing: the handler finds no message, the caller a clear error.
    gw.ask_written<echo_method>(self, [](std::vector<char>&) {}, keep(empty));
    gw.with_token(fencing_token::generate(rng)).ask_written<echo_method>(self, write, keep(wrong_token));
  });
  run();
  REQUIRE(written.has_value());
  REQUIRE(written->has_value());
  REQUIRE(encoded.has_value());
  REQUIRE(encoded->has_value());
  CHECK(**written == **encoded);
  CHECK(**written == codec<echo_response>::encode(echo_response{"hello", {'a', '\0', 'b'}, "echo_in_place"}));
  REQUIRE(empty.has_value());
  REQUIRE_FALSE(empty->has_value());
  CHECK(empty->error().code == errc::malformed_message);
  CHECK(empty->error().message.find("echo request") != std::string::npos);
  REQUIRE(wrong_token.has_value());
  REQUIRE_FALSE(wrong_token->has_value());
  CHECK(wrong_token->error().code == errc::fencing_token_mismatch);
  // On the wire: the same number of bytes for both asks (the same header and request bytes),
  // traced with the method's name.
  std::vector<std::uint32_t> sent;
  for (const auto& r : recorder.snapshot())
    if (r.dir == trace::direction::send && r.method == "echo" && r.to == "echo_in_place")
      sent.push_back(r.bytes);
  REQUIRE(sent.size() == 4);
  CHECK(sent[0] == sent[1]);
  CHECK(sent[3] == sent[0]);
  // Executed: the two good asks (not the empty request, not the fenced-out one).
  CHECK(dynamic_cast<echo_endpoint&>(*caf::actor_cast<caf::abstract_actor*>(in_place)).served() == 2);
}

TEST_CASE("a pending ask lives while a handle holds it and is deleted with the last one") {
  struct counted final : detail::pending_ask {
    explicit counted(int& deleted) : deleted_(deleted) {}
    ~counted() override { ++deleted_; }
    void complete(expected<std::span<const char>>) override {}
    int& deleted_;
  };
  int deleted = 0;
  {
    auto a = detail::make_pending<counted>(deleted);
    CHECK(a.use_count() == 1);
    auto b = a; // as CAF's two answer handlers copy it
    auto c = b;
    CHECK(a.use_count() == 3);
    auto d = std::move(c); // as the list of open asks takes it
    CHECK_FALSE(c);
    CHECK(d.use_count() == 3);
    b = detail::pending_ref{};
    CHECK(a.use_count() == 2);
    a = d; // assigning a handle to the same ask
    CHECK(a.use_count() == 2);
    a = detail::pending_ref{};
    CHECK(deleted == 0);
  }
  CHECK(deleted == 1);
}

TEST_CASE("a thread keeps two byte buffers of at most 64 KiB, emptied, for later calls") {
  detail::byte_buffers buffers;
  CHECK(buffers.take().capacity() == 0); // none kept yet
  std::vector<char> a(300, 'a'), b(100, 'b'), c(50, 'c');
  const auto* a_data = a.data();
  buffers.give(std::move(a));
  buffers.give(std::move(b));
  buffers.give(std::move(c)); // a third is not kept
  CHECK(buffers.size() == 2);
  auto first = buffers.take();
  auto second = buffers.take();
  CHECK(first.empty());
  CHECK(second.empty());
  CHECK(first.capacity() == 100);
  CHECK(second.capacity() == 300);
  CHECK(second.data() == a_data); // the same allocation, reused
  CHECK(buffers.size() == 0);
  buffers.give(std::vector<char>(64 * 1024 + 1));
  CHECK(buffers.size() == 0); // too large to keep
}

TEST_CASE_FIXTURE(rpc_fixture,
                  "calls write into the buffers earlier calls left, and a short call after a "
                  "long one carries only its own bytes") {
  // The test scheduler runs caller and callee on this thread: what one call gives back, the next
  // one takes.
  auto in_place = spawn<echo_endpoint>(context("echo_in_place"), leader);
  run();
  gateway gw(in_place, "echo_in_place", leader);
  auto& buffers = detail::thread_byte_buffers();
  while (buffers.size() > 0)
    buffers.take();
  std::vector<expected<echo_response>> answers;
  auto ask = [&](echo_request req) {
    in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
      gw.ask<echo_method>(self, req, [&](expected<echo_response> r) { answers.push_back(std::move(r)); });
    });
    run();
  };
  ask(echo_request{std::string(500, 'l'), std::vector<char>(700, 'L')});
  CHECK(buffers.size() == 2); // the request's buffer (given back by the callee) and the answer's
  ask(echo_request{"short", {'s'}});
  ask(echo_request{"", {}});
  REQUIRE(answers.size() == 3);
  for (const auto& a : answers)
    REQUIRE(a.has_value());
  CHECK(answers[0]->text == std::string(500, 'l'));
  CHECK(answers[0]->data == std::vector<char>(700, 'L'));
  CHECK(*answers[1] == echo_response{"short", {'s'}, "echo_in_place"});
  CHECK(*answers[2] == echo_response{"", {}, "echo_in_place"});
}

TEST_CASE_FIXTURE(rpc_fixture, "an ask's continuation may own what it captures (move-only)") {
  std::optional<int> seen;
  in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
    gateway(server, "echo_server", leader)
      .ask<echo_method>(self, echo_request{"m", {}},
                        [owned = std::make_unique<int>(7), &seen](expected<echo_response> r) {
                          if (r)
                            seen = *owned;
                        });
  });
  run();
  CHECK(seen == 7);
}

TEST_CASE("an ask's deadline counts from CAF's clock or a little later, and exactly under a manual clock") {
  {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    const auto& clock = sys.clock();
    int earlier = 0, too_late = 0;
    for (int i = 0; i < 20000; ++i) {
      auto before = clock.now();
      auto r = detail::read_ask_clock(clock, 10s);
      auto after = clock.now();
      if (r.now < before)
        ++earlier;
      if (r.now > after + r.lag)
        ++too_late;
      REQUIRE(r.lag > 0ns);
      REQUIRE(r.lag <= 40ms); // four ticks, HZ 100 or more
    }
    CHECK(earlier == 0); // a deadline never comes before the one asked for
    CHECK(too_late == 0);
    // A short wait reads the exact clock: a coarse clock lagging more than its margin (a VM's
    // steal time) would make a 100 ms ask time out early by a noticeable share.
    auto before = clock.now();
    auto exact = detail::read_ask_clock(clock, 100ms);
    CHECK(exact.lag == 0ns);
    CHECK(exact.now >= before);
    CHECK(exact.now <= clock.now());
  }
  test_fixture fx;
  auto& manual = fx.sys.clock();
  auto r = detail::read_ask_clock(manual, 10s);
  CHECK(r.now == manual.now());
  CHECK(r.lag == 0ns);
  fx.sched.advance_time(3s);
  CHECK(detail::read_ask_clock(manual, 10s).now == manual.now());
}
