// flint-bench rpc: round trip of an endpoint ask (envelope, fencing, trace, codecs) against a
// bare CAF request/response carrying the same number of bytes, measured in the same run, in one
// process and between two processes on loopback (the second process is this binary with
// --serve). Between processes also over TLS, and to a process whose port the inbound guard does
// not watch (--serve --no-guard): what TLS and the guard cost, rounds alternating.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "apps/bench/benches.hpp"
#include "apps/bench/bench_processes.hpp"
#include "apps/bench/bench_tls.hpp"
#include "apps/bench/serving_child.hpp"
#include "runtime/actors/rpc/echo_endpoint.hpp"
#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/flat_message.hpp"
#include "runtime/actors/rpc/in_place.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "schemas/echo.capnp.h"

namespace flint::bench {

namespace {

using clock_type = std::chrono::steady_clock;
using samples = std::vector<double>; // microseconds

constexpr rpc::fencing_token bench_token{0x1234, 0x5678};

struct options {
  /// --serve over TLS (the certificate files the measuring side made).
  std::string tls_keystore, tls_truststore;
  int iterations = 5000;
  int warmup = 500;
  std::size_t payload = 128;
  std::string policy = "stealing";
  /// Record every envelope in the node's trace (the default, as in production); --no-trace
  /// measures what recording costs.
  bool trace = true;
  /// --serve with the inbound guard on its port (--no-guard measures what the guard costs).
  bool guard = true;
  /// --one-process: skip the runs between processes (profiling the local path).
  bool one_process_only = false;
  /// --breakdown: also time each step an endpoint call adds to a bare request, alone in a loop.
  bool breakdown = false;
  /// --only endpoint|bare: one process, only that side's asks (for a profile of one side).
  std::string only;
};

/// A bare CAF echo: the baseline.
caf::behavior bare_echo() {
  return {[](std::vector<char>& bytes) { return std::move(bytes); }};
}

/// What one measuring loop holds for its whole run; each call refers to it instead of copying
/// the payload or the gateway (a caller keeps its gateway; the message copies the request).
template <class Target, class Request>
struct loop_state {
  Target target;
  Request request;
  int left;
  samples out;
  std::promise<void> done;
};

using bare_state = loop_state<caf::actor, std::vector<char>>;

/// Sequential bare requests from an event-based actor; latencies into `st->out`.
void bare_loop(caf::event_based_actor* self, std::shared_ptr<bare_state> st) {
  if (st->left-- == 0) {
    st->done.set_value();
    return;
  }
  auto t0 = clock_type::now();
  self->request(st->target, std::chrono::seconds(10), st->request)
    .then(
      [self, st, t0](std::vector<char>&) {
        st->out.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
        bare_loop(self, st);
      },
      [st](caf::error&) { st->done.set_value(); });
}

/// An endpoint that only asks.
class bench_client : public rpc::rpc_endpoint {
public:
  using rpc::rpc_endpoint::rpc_endpoint;
};

struct endpoint_state : loop_state<rpc::gateway, rpc::echo_request> {
  /// Read the response in place (gateway::ask_in_place, as hot paths do) rather than decode it
  /// into an echo_response (ask<M>).
  bool in_place = true;
};

/// Fails the loop: the run ends early and reports what it has.
void endpoint_failed(endpoint_state& st, const error& e) {
  std::fprintf(stderr, "flint-bench rpc: %s\n", e.to_string().c_str());
  st.done.set_value();
}

void endpoint_loop(bench_client* self, std::shared_ptr<endpoint_state> st) {
  if (st->left-- == 0) {
    st->done.set_value();
    return;
  }
  auto t0 = clock_type::now();
  auto* s = st.get();
  // The continuation holds the loop's state (moved from call to call: no reference counting).
  auto next = [self, t0](std::shared_ptr<endpoint_state> st) {
    st->out.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
    endpoint_loop(self, std::move(st));
  };
  if (s->in_place) {
    // The request written and the response read word by word (flat_message.hpp), as the echo
    // handler reads the request and writes the response: EchoRequest text @0, data @1;
    // EchoResponse data @1. The same bytes as the generated codec's.
    s->target.ask_written<rpc::echo_method>(
      *self,
      [s](std::vector<char>& out) {
        rpc::flat::struct_writer w(out, 0, 2, s->request.text.size() + s->request.data.size() + 16);
        w.text(0, s->request.text);
        w.data(1, std::span<const char>(s->request.data.data(), s->request.data.size()));
        w.finish();
      },
      [st = std::move(st), next](expected<std::span<const char>> r) mutable {
        if (!r)
          return endpoint_failed(*st, r.error());
        auto seen = rpc::flat::read_struct(
          *r, "echo response", [&](const rpc::flat::struct_view& resp) -> expected<std::size_t> {
            return resp.data(1).size();
          });
        if (!seen || *seen != st->request.data.size())
          return endpoint_failed(*st, seen ? make_error(errc::internal, "echo: wrong answer")
                                           : seen.error());
        next(std::move(st));
      });
  } else {
    s->target.ask<rpc::echo_method>(*self, s->request,
                                    [st = std::move(st), next](expected<rpc::echo_response> r) mutable {
                                      if (!r)
                                        return endpoint_failed(*st, r.error());
                                      if (r->data.size() != st->request.data.size())
                                        return endpoint_failed(
                                          *st, make_error(errc::internal, "echo: wrong answer"));
                                      next(std::move(st));
                                    });
  }
}

samples measure_bare(caf::actor_system& sys, const caf::actor& target, std::size_t bytes, int n) {
  auto st = std::make_shared<bare_state>(
    bare_state{target, std::vector<char>(bytes, 'x'), n, {}, {}});
  st->out.reserve(static_cast<std::size_t>(n));
  auto fut = st->done.get_future();
  sys.spawn([st](caf::event_based_actor* self) { bare_loop(self, st); });
  fut.wait();
  return std::move(st->out);
}

samples measure_endpoint(caf::actor_system& sys, trace::trace_recorder* rec, const rpc::gateway& gw,
                         const rpc::echo_request& req, int n, bool in_place = true) {
  auto st = std::make_shared<endpoint_state>(endpoint_state{{gw, req, n, {}, {}}, in_place});
  st->out.reserve(static_cast<std::size_t>(n));
  auto fut = st->done.get_future();
  auto client = sys.spawn<bench_client>(rpc::endpoint_context{"bench_client", rec, {}});
  auto* self = &dynamic_cast<bench_client&>(*caf::actor_cast<caf::abstract_actor*>(client));
  self->run_async([self, st] { endpoint_loop(self, st); });
  fut.wait();
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
  return std::move(st->out);
}

double percentile(samples s, double p) {
  if (s.empty())
    return 0;
  std::sort(s.begin(), s.end());
  auto i = static_cast<std::size_t>(p * static_cast<double>(s.size() - 1));
  return s[i];
}

/// Size of the envelope an ask of `req` puts on the wire: the bare baseline carries as much.
std::size_t envelope_bytes(const rpc::echo_request& req) {
  rpc::envelope env;
  env.method_id = rpc::echo_method::id;
  env.token = bench_token;
  env.sender = "bench_client";
  env.trace = {1, 2, 3};
  env.payload = rpc::codec<rpc::echo_request>::encode(req);
  return rpc::encode_envelope(env).size();
}

void report(const char* where, const options& o, std::size_t wire_bytes, const samples& ep,
            const samples& bare) {
  auto ep50 = percentile(ep, 0.5), ep99 = percentile(ep, 0.99);
  auto b50 = percentile(bare, 0.5), b99 = percentile(bare, 0.99);
  std::printf(
    "{\"bench\":\"rpc\",\"where\":\"%s\",\"payload_bytes\":%zu,\"wire_bytes\":%zu,"
    "\"iterations\":%d,\"scheduler\":\"%s\",\"trace\":%s,\"endpoint_median_us\":%.2f,"
    "\"endpoint_p99_us\":%.1f,\"bare_median_us\":%.2f,\"bare_p99_us\":%.1f,"
    "\"ratio_median\":%.2f,\"ratio_p99\":%.2f}\n",
    where, o.payload, wire_bytes, o.iterations, o.policy.c_str(), o.trace ? "true" : "false", ep50,
    ep99, b50, b99, b50 > 0 ? ep50 / b50 : 0.0, b99 > 0 ? ep99 / b99 : 0.0);
  std::fflush(stdout);
}

/// Nanoseconds per run of `f`, over `n` runs (after n / 10 to warm up).
template <class F>
double ns_per(int n, F&& f) {
  for (int i = 0; i < n / 10; ++i)
    f();
  auto t0 = clock_type::now();
  for (int i = 0; i < n; ++i)
    f();
  return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / n;
}

/// What each step an endpoint call adds to a bare CAF request costs alone, in a loop on one
/// thread (caches warm: a lower bound of what it costs inside a call).
void breakdown(const rpc::echo_request& req) {
  constexpr int n = 200000;
  rpc::envelope header;
  header.method_id = rpc::echo_method::id;
  header.token = bench_token;
  header.sender = "bench_client";
  header.trace = {1, 2, 3};
  std::vector<char> call;
  rpc::write_envelope_header(call, header, 256);
  rpc::codec<rpc::echo_request>::encode_to(call, req);
  rpc::echo_response resp{req.text, req.data, "echo_server"};
  auto reply = rpc::codec<rpc::echo_response>::encode(resp);
  trace::trace_recorder rec(trace::system_now_us);
  std::size_t sink = 0;
  auto encode_call = ns_per(n, [&] {
    std::vector<char> out;
    rpc::write_envelope_header(out, header, 256);
    rpc::codec<rpc::echo_request>::encode_to(out, req);
    sink += out.size();
  });
  auto read_header = ns_per(n, [&] {
    auto e = rpc::read_envelope(call);
    sink += e->payload.size();
  });
  auto payload = rpc::read_envelope(call)->payload;
  auto decode_request = ns_per(n, [&] {
    auto r = rpc::codec<rpc::echo_request>::decode(payload);
    sink += r->data.size();
  });
  auto encode_response = ns_per(n, [&] { sink += rpc::codec<rpc::echo_response>::encode(resp).size(); });
  auto decode_response = ns_per(n, [&] {
    auto r = rpc::codec<rpc::echo_response>::decode(reply);
    sink += r->data.size();
  });
  // What the echo handler and an ask_in_place caller do instead of the two decodes and the
  // struct encode: read the request in place and build the response from it; read the
  // response in place.
  // Word by word (flat_message.hpp), as echo_endpoint.cpp and the measured caller do.
  auto handle_in_place = ns_per(n, [&] {
    auto out = rpc::flat::read_struct(
      payload, "echo request", [&](const rpc::flat::struct_view& r) -> expected<std::vector<char>> {
        auto text = r.text(0);
        auto data = r.data(1);
        std::vector<char> bytes;
        rpc::flat::struct_writer b(bytes, 0, 3, text.size() + data.size() + 40);
        b.text(0, text);
        b.data(1, data);
        b.text(2, "echo_server");
        b.finish();
        return bytes;
      });
    sink += out->size();
  });
  auto read_response_in_place = ns_per(n, [&] {
    auto size = rpc::flat::read_struct(
      reply, "echo response",
      [&](const rpc::flat::struct_view& r) -> expected<std::size_t> { return r.data(1).size(); });
    sink += *size;
  });
  // The recorder's clock calibrates the time stamp counter over its first 20 ms of use (reading
  // the system clock until then): time it once calibrated, as a running node's is.
  for (auto until = clock_type::now() + std::chrono::milliseconds(30); clock_type::now() < until;)
    sink += static_cast<std::size_t>(rec.now_us());
  auto clock_read = ns_per(n, [&] { sink += static_cast<std::size_t>(rec.now_us()); });
  // The raw time stamp counter alone: what a clock read is without its conversion to
  // microseconds (0 where there is no such counter).
  double counter_read = 0;
#if defined(__x86_64__) || defined(__i386__)
  counter_read = ns_per(n, [&] { sink += static_cast<std::size_t>(__rdtsc()); });
#endif
  // As endpoints record: their own id, the method and the target interned, the caller's name
  // (from the wire) as text on receive.
  const auto client_name = trace::intern("bench_client"), server_name = trace::intern("echo_server"),
             method_name = trace::intern(rpc::echo_method::name);
  auto trace_event = ns_per(n, [&] {
    rec.record_event(trace::event{.dir = trace::direction::send,
                                  .token = bench_token,
                                  .trace = {1, 2, 3},
                                  .is_ask = true,
                                  .bytes = 280,
                                  .from_name = client_name,
                                  .to_name = server_name,
                                  .method_name = method_name});
  });
  std::printf(
    "{\"bench\":\"rpc\",\"kind\":\"breakdown\",\"encode_call_ns\":%.0f,\"read_header_ns\":%.0f,"
    "\"decode_request_ns\":%.0f,\"encode_response_ns\":%.0f,\"decode_response_ns\":%.0f,"
    "\"handle_in_place_ns\":%.0f,\"read_response_in_place_ns\":%.0f,"
    "\"clock_read_ns\":%.1f,\"counter_read_ns\":%.1f,\"trace_event_ns\":%.0f,\"per_call_ns\":%.0f,"
    "\"per_call_in_place_ns\":%.0f,\"check\":%zu}\n",
    encode_call, read_header, decode_request, encode_response, decode_response, handle_in_place,
    read_response_in_place, clock_read, counter_read, trace_event,
    encode_call + read_header + decode_request + encode_response + decode_response
      + 4 * trace_event,
    encode_call + read_header + handle_in_place + read_response_in_place + 4 * trace_event,
    sink % 10);
  std::fflush(stdout);
}

int serve(const options& o) {
  caf::actor_system_config cfg;
  rpc::configure_node(cfg, {o.policy, 0, true, tls_of(o.tls_keystore, o.tls_truststore), {}});
  caf::actor_system sys{cfg};
  trace::trace_recorder rec(trace::system_now_us);
  auto echo =
    sys.spawn<rpc::echo_endpoint>(rpc::endpoint_context{"echo_server", &rec, {}}, bench_token);
  auto bare = sys.spawn(bare_echo);
  auto locator = rpc::spawn_endpoint_locator(sys);
  rpc::register_endpoint(locator, "echo_server", echo);
  rpc::register_endpoint(locator, "bare_echo", bare);
  auto port = rpc::publish_locator(sys, locator, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "%s\n", port.error().to_string().c_str());
    return 1;
  }
  if (!o.guard)
    rpc::unguard_inbound_port(*port);
  std::printf("port=%u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(bare, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
  return 0;
}

int parse(int argc, char** argv, options& o, bool& serve_mode) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--serve") {
      serve_mode = true;
    } else if (a == "--tls-keystore" && (v = next())) {
      o.tls_keystore = v;
    } else if (a == "--tls-truststore" && (v = next())) {
      o.tls_truststore = v;
    } else if (a == "--no-trace") {
      o.trace = false;
    } else if (a == "--breakdown") {
      o.breakdown = true;
    } else if (a == "--only" && (v = next())) {
      o.only = v;
      if (o.only != "endpoint" && o.only != "bare") {
        std::fprintf(stderr, "flint-bench rpc: --only must be endpoint or bare\n");
        return 2;
      }
    } else if (a == "--one-process") {
      o.one_process_only = true;
    } else if (a == "--no-guard") {
      o.guard = false;
    } else if (a == "--iterations" && (v = next())) {
      o.iterations = std::max(1, std::atoi(v));
    } else if (a == "--payload" && (v = next())) {
      o.payload = static_cast<std::size_t>(std::atoll(v));
    } else if (a == "--scheduler" && (v = next())) {
      o.policy = v;
      if (o.policy != "stealing" && o.policy != "sharing") {
        std::fprintf(stderr, "flint-bench rpc: --scheduler must be stealing or sharing\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: flint-bench rpc [--iterations N] [--payload BYTES] "
                   "[--scheduler stealing|sharing] [--no-trace] [--one-process] [--only endpoint|bare] "
                   "[--breakdown]\n");
      return 2;
    }
  }
  return 0;
}

} // namespace

int rpc(int argc, char** argv) {
  options o;
  bool serve_mode = false;
  if (auto rc = parse(argc, argv, o, serve_mode); rc != 0)
    return rc;
  if (serve_mode)
    return serve(o);

  rpc::echo_request req{"bench", std::vector<char>(o.payload, 'p')};
  auto wire = envelope_bytes(req);
  if (o.breakdown)
    breakdown(req);

  caf::actor_system_config cfg;
  rpc::configure_node(cfg, {o.policy, 0, true, {}, {}});
  caf::actor_system sys{cfg};
  trace::trace_recorder rec(trace::system_now_us);

  { // one process
    auto echo = sys.spawn<rpc::echo_endpoint>(
      rpc::endpoint_context{"echo_server", o.trace ? &rec : nullptr, {}}, bench_token);
    auto bare = sys.spawn(bare_echo);
    rpc::gateway gw(echo, "echo_server", bench_token);
    measure_endpoint(sys, o.trace ? &rec : nullptr, gw, req, o.warmup);
    measure_bare(sys, bare, wire, o.warmup);
    if (!o.only.empty()) { // one side alone, for a profile of it
      auto s = o.only == "bare" ? measure_bare(sys, bare, wire, o.iterations)
                                : measure_endpoint(sys, o.trace ? &rec : nullptr, gw, req, o.iterations);
      std::printf("{\"bench\":\"rpc\",\"only\":\"%s\",\"iterations\":%d,\"median_us\":%.3f}\n",
                  o.only.c_str(), o.iterations, percentile(s, 0.5));
      caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
      caf::anon_send_exit(bare, caf::exit_reason::user_shutdown);
      return 0;
    }
    // Alternate rounds so drift on a noisy machine hits both sides alike.
    // The endpoint asks read the response in place; the "decoded" series asks with ask<M>,
    // which decodes it into an echo_response (the server reads in place either way).
    constexpr int local_rounds = 10;
    samples ep, b, decoded, b2;
    for (int round = 0; round < local_rounds; ++round) {
      auto n = std::max(1, o.iterations / local_rounds);
      auto e = measure_endpoint(sys, o.trace ? &rec : nullptr, gw, req, n);
      auto x = measure_bare(sys, bare, wire, n);
      auto d = measure_endpoint(sys, o.trace ? &rec : nullptr, gw, req, n, false);
      auto y = measure_bare(sys, bare, wire, n);
      ep.insert(ep.end(), e.begin(), e.end());
      b.insert(b.end(), x.begin(), x.end());
      decoded.insert(decoded.end(), d.begin(), d.end());
      b2.insert(b2.end(), y.begin(), y.end());
    }
    report("one_process", o, wire, ep, b);
    report("one_process_decoded_response", o, wire, decoded, b2);
    caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(bare, caf::exit_reason::user_shutdown);
  }
  if (o.one_process_only)
    return 0;

  // Two processes, plain and over mutual TLS (security.ssl.internal.*): both serving processes
  // run at once and the rounds alternate between them, so drift on a noisy machine hits both.
  auto certs = bench_certificates::make("rpc");
  serving_child child({"rpc", "--serve", "--scheduler", o.policy});
  std::optional<serving_child> tls_child;
  if (certs)
    tls_child.emplace(std::vector<std::string>{"rpc", "--serve", "--scheduler", o.policy,
                                               "--tls-keystore", certs->server(),
                                               "--tls-truststore", certs->ca()});
  serving_child unguarded_child({"rpc", "--serve", "--no-guard", "--scheduler", o.policy});
  if (!child.port() || (tls_child && !tls_child->port()) || !unguarded_child.port()) {
    std::fprintf(stderr, "flint-bench rpc: a serving process did not start\n");
    return 1;
  }
  caf::actor_system_config tls_cfg;
  if (certs)
    rpc::configure_node(tls_cfg, {o.policy, 0, true, tls_of(certs->client(), certs->ca()), {}});
  std::optional<caf::actor_system> tls_sys;
  if (certs)
    tls_sys.emplace(tls_cfg);
  struct side {
    caf::actor_system* sys;
    std::optional<rpc::gateway> gw;
    caf::actor bare;
    samples ep, b;
  };
  // Plain (guarded), plain without the guard, then TLS.
  std::vector<side> sides;
  for (int k = 0; k < (certs ? 3 : 2); ++k) {
    auto& s = k < 2 ? sys : *tls_sys;
    auto port = k == 0 ? *child.port() : k == 1 ? *unguarded_child.port() : *tls_child->port();
    auto echo = rpc::connect_endpoint(s, "127.0.0.1", port, "echo_server");
    auto bare = rpc::connect_endpoint(s, "127.0.0.1", port, "bare_echo");
    if (!echo || !bare) {
      std::fprintf(stderr, "flint-bench rpc: %s\n",
                   (!echo ? echo.error() : bare.error()).to_string().c_str());
      return 1;
    }
    sides.push_back(side{&s, rpc::gateway(*echo, "echo_server", bench_token), *bare, {}, {}});
    measure_endpoint(s, o.trace ? &rec : nullptr, *sides.back().gw, req, o.warmup);
    measure_bare(s, *bare, wire, o.warmup);
  }
  constexpr int rounds = 20;
  samples paired; // TLS over plain median, round by round
  samples guard_paired; // guarded over unguarded median, round by round
  for (int round = 0; round < rounds; ++round) {
    std::vector<double> medians(sides.size());
    // Odd rounds run the sides in reverse, so that no side always follows the same one.
    for (std::size_t i = 0; i < sides.size(); ++i) {
      auto k = round % 2 == 0 ? i : sides.size() - 1 - i;
      auto& sd = sides[k];
      auto e = measure_endpoint(*sd.sys, o.trace ? &rec : nullptr, *sd.gw, req,
                                std::max(1, o.iterations / rounds));
      auto x = measure_bare(*sd.sys, sd.bare, wire, std::max(1, o.iterations / rounds));
      medians[k] = percentile(e, 0.5);
      sd.ep.insert(sd.ep.end(), e.begin(), e.end());
      sd.b.insert(sd.b.end(), x.begin(), x.end());
    }
    if (medians[1] > 0)
      guard_paired.push_back(medians[0] / medians[1]);
    if (medians.size() == 3 && medians[0] > 0)
      paired.push_back(medians[2] / medians[0]);
  }
  report("two_processes", o, wire, sides[0].ep, sides[0].b);
  report("two_processes_unguarded", o, wire, sides[1].ep, sides[1].b);
  {
    auto guarded = percentile(sides[0].ep, 0.5), unguarded = percentile(sides[1].ep, 0.5);
    auto guarded_bare = percentile(sides[0].b, 0.5), unguarded_bare = percentile(sides[1].b, 0.5);
    std::printf(
      "{\"bench\":\"rpc\",\"kind\":\"guard_cost\",\"guarded_median_us\":%.1f,"
      "\"unguarded_median_us\":%.1f,\"ratio\":%.3f,\"paired_ratio\":%.3f,"
      "\"bare_ratio\":%.3f,\"rounds\":%d,\"goal\":\"<= 1.02\"}\n",
      guarded, unguarded, unguarded > 0 ? guarded / unguarded : 0.0, percentile(guard_paired, 0.5),
      unguarded_bare > 0 ? guarded_bare / unguarded_bare : 0.0, rounds);
  }
  if (sides.size() == 3) {
    report("two_processes_tls", o, wire, sides[2].ep, sides[2].b);
    auto plain_median = percentile(sides[0].ep, 0.5);
    auto tls_median = percentile(sides[2].ep, 0.5);
    std::printf(
      "{\"bench\":\"rpc\",\"kind\":\"tls_vs_plain\",\"plain_median_us\":%.1f,"
      "\"tls_median_us\":%.1f,\"ratio\":%.2f,\"paired_ratio\":%.2f,\"rounds\":%d,"
      "\"goal\":\"<= 1.3\"}\n",
      plain_median, tls_median, plain_median > 0 ? tls_median / plain_median : 0.0,
      percentile(paired, 0.5), rounds);
  }
  return 0;
}

} // namespace flint::bench
