// The inbound guard: what a peer's bytes may be (basp_inspector), and the guard on a published
// port of a real actor system over loopback: strangers' bytes, a 4 GiB frame claim, the
// connection caps (global and per host), the handshake and idle bounds, the budget of incomplete
// frames, the node id a peer announces and its certificate role, the guard's end with its
// listening socket, and the self-test a node runs at start — while a real client is served.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <functional>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/actors/rpc/basp_inspector.hpp"
#include "runtime/actors/rpc/echo_endpoint.hpp"
#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/inbound_guard.hpp"
#include "runtime/actors/rpc/peer_roles.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "test/support/loopback_ports.hpp"

using namespace flint;
using namespace flint::rpc;
using namespace std::chrono_literals;

namespace {

using bytes = std::vector<std::uint8_t>;

void put_be(bytes& out, std::uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i)
    out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

/// A BASP header as CAF 0.17 writes it.
bytes header(std::uint8_t op, std::uint32_t payload, std::uint64_t data = 0,
             std::uint64_t source = 0, std::uint64_t dest = 0) {
  bytes h{op, 0, 0, 0};
  put_be(h, payload, 4);
  put_be(h, data, 8);
  put_be(h, source, 8);
  put_be(h, dest, 8);
  return h;
}

bytes concat(std::initializer_list<bytes> parts) {
  bytes out;
  for (const auto& p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}

/// A client handshake with a 40-byte payload, then a direct message and a heartbeat.
bytes good_stream() {
  return concat(
    {header(1, 40), bytes(40, 0xab), header(2, 100, 7, 3, 9), bytes(100, 0x11), header(6, 0)});
}

std::optional<std::string> feed_all(basp_inspector& in, const bytes& b) {
  return in.feed(b.data(), b.size());
}

} // namespace

TEST_CASE("basp inspector: a client handshake and later frames pass in any split") {
  auto stream = good_stream();
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    basp_inspector in(1u << 20);
    CHECK_FALSE(in.feed(stream.data(), cut).has_value());
    CHECK(in.handshake_done() == (cut >= 72));
    CHECK_FALSE(in.feed(stream.data() + cut, stream.size() - cut).has_value());
    CHECK(in.handshake_done());
    CHECK_FALSE(in.mid_frame());
    CHECK(in.bytes() == stream.size());
  }
  // Byte by byte.
  basp_inspector in(1u << 20);
  for (auto b : stream)
    REQUIRE_FALSE(in.feed(&b, 1).has_value());
  CHECK(in.handshake_done());
}

TEST_CASE("basp inspector: a wrong protocol, zeros and a bad first frame are named") {
  std::string http = "GET / HTTP/1.1\r\nHost: flint\r\nAccept: */*\r\n\r\n";
  basp_inspector a(1u << 20);
  auto reason = a.feed(http.data(), http.size());
  REQUIRE(reason.has_value());
  CHECK(reason->find("does not speak Flint's RPC protocol") != std::string::npos);
  CHECK(reason->find("47 45 54 20 2f 20 48 54 \"GET / HT\"") != std::string::npos);

  basp_inspector b(1u << 20);
  auto zeros = bytes(100, 0);
  reason = feed_all(b, zeros);
  REQUIRE(reason.has_value());
  CHECK(reason->find("not a valid client handshake (server_handshake)") != std::string::npos);

  // A direct message before any handshake.
  basp_inspector c(1u << 20);
  reason = feed_all(c, header(2, 10, 0, 1, 2));
  REQUIRE(reason.has_value());
  CHECK(reason->find("(direct_message)") != std::string::npos);

  // A short request in another protocol is judged by its first byte, without waiting for more.
  basp_inspector d(1u << 20);
  auto hello = bytes{0x16, 0x03, 0x01};
  reason = feed_all(d, hello);
  REQUIRE(reason.has_value());
  CHECK(reason->find("it began with 16 03 01 \"...\"") != std::string::npos);

  // The start of a client handshake waits for the rest, and an end now stops it mid-frame.
  basp_inspector e(1u << 20);
  auto start = bytes{0x01, 0x00, 0x00};
  CHECK_FALSE(feed_all(e, start).has_value());
  CHECK(e.mid_frame());
  CHECK(e.position() == "3 of 32 header bytes");
}

TEST_CASE("basp inspector: frames claiming more than the bounds are refused before their payload") {
  basp_inspector a(1u << 20);
  auto reason = feed_all(a, header(1, 0xffffffffu));
  REQUIRE(reason.has_value());
  CHECK(reason->find("its handshake claims 4294967295 bytes (at most 65536)") != std::string::npos);

  basp_inspector b(4096);
  auto stream = concat({header(1, 0), header(2, 4096, 0, 1, 2), bytes(4096, 1)});
  CHECK_FALSE(feed_all(b, stream).has_value());
  reason = feed_all(b, header(2, 4097, 0, 1, 2));
  REQUIRE(reason.has_value());
  CHECK(reason->find("a frame of 4097 bytes, more than rpc.max-frame-size allows (4096 bytes")
        != std::string::npos);

  basp_inspector c(4096);
  CHECK_FALSE(
    feed_all(c, concat({header(1, 0), header(2, 100, 0, 1, 2), bytes(10, 1)})).has_value());
  CHECK(c.position() == "10 of 100 payload bytes");
  reason = feed_all(c, concat({bytes(90, 1), header(9, 0)}));
  REQUIRE(reason.has_value());
  CHECK(reason->find("invalid frame header 09") != std::string::npos);
  CHECK(reason->find("after 2 good frames") != std::string::npos);
}

namespace {

int connect_raw(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

/// Reads until the node closes the connection; false if it is still open after `limit`.
bool closed_by_node(int fd, std::chrono::milliseconds limit = 10s) {
  auto until = std::chrono::steady_clock::now() + limit;
  char buf[4096];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0)
      continue;
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0)
      return true;
  }
  return false;
}

template <class Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred())
      return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

node_options guarded_node(std::size_t max_connections, std::chrono::milliseconds timeout) {
  node_options o;
  o.inbound = inbound_limits::for_frame_size(64u << 10);
  o.inbound.max_connections = max_connections;
  o.inbound.handshake_timeout = timeout;
  return o;
}

struct guarded_server {
  std::mt19937_64 rng{std::random_device{}()};
  fencing_token token = fencing_token::generate(rng);
  caf::actor_system_config cfg;
  caf::actor_system sys;
  trace::trace_recorder recorder{trace::system_now_us};
  caf::actor echo;
  caf::actor locator;
  std::uint16_t port = 0;

  explicit guarded_server(const node_options& o, std::uint16_t at = 0)
    : sys(configure_node(cfg, o)) {
    echo = sys.spawn<echo_endpoint>(endpoint_context{"echo_server", &recorder, {}}, token);
    locator = spawn_endpoint_locator(sys);
    register_endpoint(locator, "echo_server", echo);
    auto p = publish_locator(sys, locator, at, "127.0.0.1");
    REQUIRE(p.has_value());
    port = *p;
  }

  ~guarded_server() {
    caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
  }

  /// A real client in another actor system: connect, look up, one echo round trip. `node`
  /// receives the client's node id.
  /// `while_connected` runs after the round trip, before the client goes.
  bool serves_a_client(const node_options& o, std::string* node = nullptr,
                       const std::function<void()>& while_connected = {}) {
    caf::actor_system_config client_cfg;
    caf::actor_system client{configure_node(client_cfg, o)};
    if (node != nullptr)
      *node = caf::to_string(client.node());
    auto handle = connect_endpoint(client, "127.0.0.1", port, "echo_server", 5s);
    if (!handle)
      return false;
    trace::trace_recorder rec{trace::system_now_us};
    client_identity who{"test_client", &rec, 5s};
    gateway gw(*handle, "echo_server", token);
    caf::scoped_actor self{client, true};
    auto r = gw.ask_blocking<echo_method>(*self, who, echo_request{"still here", {}});
    if (while_connected)
      while_connected();
    return r.has_value() && r->text == "still here";
  }
};

void send_bytes(int fd, const bytes& b) {
  REQUIRE(::send(fd, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size()));
}

} // namespace

TEST_CASE("inbound guard: strangers' bytes are refused before CAF reads them, a client is served") {
  auto opts = guarded_node(64, 10s);
  guarded_server server(opts);
  auto before = inbound_guard_counters();

  struct stranger {
    const char* what;
    bytes data;
  };
  std::string http = "GET / HTTP/1.1\r\nHost: flint\r\n\r\n";
  std::vector<stranger> strangers{
    {"an HTTP request", bytes(http.begin(), http.end())},
    {"100 kB of zeros", bytes(100000, 0)},
    {"a handshake claiming 4 GiB", header(1, 0xffffffffu)},
    {"a direct message before the handshake", concat({header(2, 16, 0, 1, 2), bytes(16, 7)})},
  };
  for (const auto& s : strangers) {
    CAPTURE(s.what);
    int fd = connect_raw(server.port);
    send_bytes(fd, s.data);
    CHECK(closed_by_node(fd));
    ::close(fd);
  }
  CHECK(eventually([&] { return inbound_guard_counters().dropped >= before.dropped + 4; }));

  // A truncated frame: the node logs the end in the middle of the frame.
  int fd = connect_raw(server.port);
  send_bytes(fd, concat({header(1, 40), bytes(10, 0)}));
  ::shutdown(fd, SHUT_WR);
  CHECK(closed_by_node(fd));
  ::close(fd);
  CHECK(eventually([&] { return inbound_guard_counters().truncated >= before.truncated + 1; }));

  CHECK(server.serves_a_client(opts));
}

TEST_CASE(
  "inbound guard: past rpc.max-connections a connection is closed at once, an idle one "
  "after rpc.handshake-timeout") {
  auto opts = guarded_node(2, 500ms);
  guarded_server server(opts);
  auto before = inbound_guard_counters();
  int a = connect_raw(server.port);
  int b = connect_raw(server.port);
  REQUIRE(eventually([&] { return inbound_guard_counters().open >= before.open + 2; }));
  int c = connect_raw(server.port);
  CHECK(closed_by_node(c, 5s));
  CHECK(inbound_guard_counters().refused == before.refused + 1);
  ::close(c);
  // The two idle ones are shut down after the handshake bound; then a client is served.
  CHECK(closed_by_node(a, 5s));
  CHECK(closed_by_node(b, 5s));
  ::close(a);
  ::close(b);
  CHECK(inbound_guard_counters().timed_out >= before.timed_out + 2);
  REQUIRE(eventually([&] { return inbound_guard_counters().open == before.open; }));
  CHECK(server.serves_a_client(opts));
}

namespace {

/// A socket bound to `from` (another loopback address), connected to 127.0.0.1:`port`.
int connect_raw_from(std::uint16_t port, const char* from) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  REQUIRE(::inet_pton(AF_INET, from, &src.sin_addr) == 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) == 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

// A port below the ephemeral range: the test binds it again later, and a port bind(0) handed
// out could meanwhile become the local end of an outgoing connection.
std::uint16_t free_port() { return flint::test::free_loopback_ports(1).front(); }

/// A plain listening socket on 127.0.0.1:`port`, once the number is free again.
int listen_on(std::uint16_t port) {
  for (int i = 0; i < 500; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && ::listen(fd, 16) == 0)
      return fd;
    ::close(fd);
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

/// A client handshake as CAF 0.17.6 writes it: its payload is the client's node id.
bytes handshake_of(const caf::node_id& node) {
  std::vector<char> payload;
  caf::binary_serializer sink(static_cast<caf::execution_unit*>(nullptr), payload);
  auto id = node;
  REQUIRE_FALSE(sink(id));
  return concat(
    {header(1, static_cast<std::uint32_t>(payload.size())), bytes(payload.begin(), payload.end())});
}

/// A node id no other test announces.
caf::node_id fresh_node_id() {
  static std::mt19937 rng{std::random_device{}()};
  caf::node_id::default_data::host_id_type host;
  for (auto& b : host)
    b = static_cast<std::uint8_t>(rng());
  return caf::make_node_id(static_cast<std::uint32_t>(rng()), host);
}

/// The node's side of the raw connection `client`.
int node_side(int client) {
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  REQUIRE(::getsockname(client, reinterpret_cast<sockaddr*>(&local), &len) == 0);
  auto want = "127.0.0.1:" + std::to_string(ntohs(local.sin_port));
  int found = -1;
  eventually([&] {
    for (int fd = 0; fd < 8192 && found < 0; ++fd)
      if (is_guarded_connection(fd) && peer_address(fd) == want)
        found = fd;
    return found >= 0;
  });
  return found;
}

/// Whether `fd` stays open (the node closes nothing) for `d`.
bool stays_open(int fd, std::chrono::milliseconds d = 300ms) {
  return !closed_by_node(fd, d);
}

} // namespace

TEST_CASE(
  "inbound guard: 1 200 idle connections from one address do not keep a real client out "
  "(rpc.max-connections-per-host), and their refusals are logged at a limited rate") {
  auto opts = guarded_node(1024, 30s);
  REQUIRE(opts.inbound.max_connections_per_host == 128);
  guarded_server server(opts);
  auto before = inbound_guard_counters();
  std::vector<int> flood;
  for (int i = 0; i < 1200; ++i)
    flood.push_back(connect_raw_from(server.port, "127.0.0.2"));
  CHECK(eventually([&] {
    auto now = inbound_guard_counters();
    return now.open == before.open + 128 && now.refused_per_host == before.refused_per_host + 1072;
  }));
  auto after = inbound_guard_counters();
  CHECK(after.refused == before.refused); // the global cap was never reached
  CHECK(after.log_lines_suppressed > before.log_lines_suppressed + 1000);
  // A client from another address (127.0.0.1) is served while the flood stays connected.
  CHECK(server.serves_a_client(opts));
  for (int fd : flood)
    ::close(fd);
  CHECK(eventually([&] { return inbound_guard_counters().open == before.open; }));
}

TEST_CASE("inbound guard: a listener given the port number of a closed RPC port is served") {
  auto opts = guarded_node(64, 10s);
  auto port = free_port();
  auto before = inbound_guard_counters();
  guarded_server server(opts, port);
  REQUIRE(server.port == port);
  CHECK(inbound_guard_counters().listeners == before.listeners + 1);
  CHECK(server.serves_a_client(opts));
  // The RPC port is closed while the node lives on; a plain server (say REST) takes the number.
  REQUIRE(server.sys.middleman().unpublish(server.locator, port));
  CHECK(eventually([&] { return inbound_guard_counters().listeners == before.listeners; }));
  int listener = listen_on(port);
  REQUIRE(listener >= 0);
  int client = connect_raw(port);
  int served = ::accept(listener, nullptr, nullptr);
  REQUIRE(served >= 0);
  CHECK_FALSE(is_guarded_connection(served));
  std::string request = "GET /overview HTTP/1.1\r\nHost: flint\r\n\r\n";
  send_bytes(client, bytes(request.begin(), request.end()));
  std::string got(request.size(), '\0');
  std::size_t n = 0;
  while (n < got.size()) {
    auto r = ::recv(served, got.data() + n, got.size() - n, 0);
    REQUIRE(r > 0);
    n += static_cast<std::size_t>(r);
  }
  CHECK(got == request);
  std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  REQUIRE(::send(served, reply.data(), reply.size(), MSG_NOSIGNAL)
          == static_cast<ssize_t>(reply.size()));
  std::string answer(reply.size(), '\0');
  n = 0;
  while (n < answer.size()) {
    auto r = ::recv(client, answer.data() + n, answer.size() - n, 0);
    REQUIRE(r > 0);
    n += static_cast<std::size_t>(r);
  }
  CHECK(answer == reply);
  ::close(client);
  ::close(served);
  ::close(listener);
  CHECK(inbound_guard_counters().dropped == before.dropped);
}

TEST_CASE(
  "inbound guard: a port expected for a publish leaves a listener already on the number alone, "
  "and guards the next one") {
  auto opts = guarded_node(64, 10s);
  guarded_server server(opts); // installs the guard
  auto port = free_port();
  auto before = inbound_guard_counters();
  int other = listen_on(port);
  REQUIRE(other >= 0);
  expect_inbound_port(port, false); // a publish on the number is about to fail
  int client = connect_raw(port);
  int served = ::accept(other, nullptr, nullptr);
  REQUIRE(served >= 0);
  CHECK_FALSE(is_guarded_connection(served));
  ::close(client);
  ::close(served);
  ::close(other);
  // The socket that listens next on the number (within the 30 s) is the one expected.
  int next = listen_on(port);
  REQUIRE(next >= 0);
  client = connect_raw(port);
  served = ::accept(next, nullptr, nullptr);
  REQUIRE(served >= 0);
  CHECK(is_guarded_connection(served));
  CHECK(inbound_guard_counters().listeners == before.listeners + 1);
  ::close(client);
  ::close(served);
  ::close(next);
  CHECK(inbound_guard_counters().listeners == before.listeners);
  CHECK(inbound_guard_counters().open == before.open);
}

TEST_CASE("inbound guard: a frame claiming more than 64 KiB is dropped before or as a handshake") {
  node_options opts; // rpc.max-frame-size at its default: 128 MiB after the handshake
  opts.inbound.handshake_timeout = 10s;
  guarded_server server(opts);
  auto before = inbound_guard_counters();

  int a = connect_raw(server.port);
  send_bytes(a, header(1, (64u << 10) + 1));
  CHECK(closed_by_node(a));
  ::close(a);

  // After a good handshake, another handshake frame is bounded as the first was.
  int b = connect_raw(server.port);
  send_bytes(b, handshake_of(fresh_node_id()));
  CHECK(stays_open(b));
  send_bytes(b, header(1, 1u << 20));
  CHECK(closed_by_node(b));
  ::close(b);

  int c = connect_raw(server.port);
  send_bytes(c, handshake_of(fresh_node_id()));
  CHECK(stays_open(c));
  send_bytes(c, header(0, 1u << 20, 1));
  CHECK(closed_by_node(c));
  ::close(c);

  CHECK(eventually([&] { return inbound_guard_counters().dropped == before.dropped + 3; }));
  CHECK(server.serves_a_client(opts));
}

TEST_CASE(
  "inbound guard: the node id a real client announces is recorded for its certificate role") {
  auto opts = guarded_node(64, 10s);
  guarded_server server(opts);
  std::string node;
  // Recorded as a node's while it is connected: the same id over a client certificate's
  // connection is refused.
  constexpr int probe = 1 << 20;
  REQUIRE(server.serves_a_client(opts, &node, [&] {
    set_connection_role(probe, peer_role::client);
    CHECK_FALSE(peer_announced(probe, node));
    CHECK(peer_announced(probe, caf::to_string(fresh_node_id())));
    connection_closed(probe);
  }));
}

TEST_CASE(
  "inbound guard: a client certificate's connection may not route messages, nor announce a "
  "node's id") {
  auto opts = guarded_node(64, 10s);
  guarded_server server(opts);
  auto before = inbound_guard_counters();

  int a = connect_raw(server.port);
  int a_node = node_side(a);
  REQUIRE(a_node >= 0);
  set_connection_role(a_node, peer_role::client);
  send_bytes(a, handshake_of(fresh_node_id()));
  CHECK(stays_open(a));
  send_bytes(a, concat({header(3, 16, 0, 1, 2), bytes(16, 0)}));
  CHECK(closed_by_node(a));
  ::close(a);
  CHECK(eventually([&] { return inbound_guard_counters().dropped == before.dropped + 1; }));
  CHECK(eventually([&] { return connection_role(a_node) == peer_role::node; })); // forgotten

  // Y announces itself as a node, then over a client certificate's connection.
  auto y = fresh_node_id();
  int b = connect_raw(server.port);
  send_bytes(b, handshake_of(y));
  CHECK(stays_open(b));
  int c = connect_raw(server.port);
  int c_node = node_side(c);
  REQUIRE(c_node >= 0);
  set_connection_role(c_node, peer_role::client);
  send_bytes(c, handshake_of(y));
  CHECK(closed_by_node(c));
  CHECK(stays_open(b));
  ::close(b);
  ::close(c);
  CHECK(eventually([&] { return inbound_guard_counters().dropped == before.dropped + 2; }));
}

TEST_CASE("inbound guard: the payload bytes claimed by incomplete frames are bounded") {
  auto opts = guarded_node(64, 10s); // frames up to 128 KiB after the handshake
  opts.inbound.incomplete_frames_budget = 256u << 10;
  guarded_server server(opts);
  auto before = inbound_guard_counters();
  auto open_with_claim = [&](std::uint32_t claim) {
    int fd = connect_raw(server.port);
    send_bytes(fd, concat({handshake_of(fresh_node_id()), header(2, claim, 0, 1, 2)}));
    return fd;
  };
  int a = open_with_claim(100u << 10);
  int b = open_with_claim(100u << 10);
  REQUIRE(
    eventually([&] { return inbound_guard_counters().claimed == before.claimed + (200u << 10); }));
  int c = open_with_claim(100u << 10);
  CHECK(closed_by_node(c));
  CHECK(inbound_guard_counters().over_budget == before.over_budget + 1);
  CHECK(stays_open(a));
  CHECK(stays_open(b));
  ::close(c);
  // A's claim is given back when it goes.
  ::close(a);
  CHECK(
    eventually([&] { return inbound_guard_counters().claimed == before.claimed + (100u << 10); }));
  int d = open_with_claim(100u << 10);
  CHECK(stays_open(d));
  ::close(b);
  ::close(d);
  CHECK(eventually([&] { return inbound_guard_counters().claimed == before.claimed; }));
}

TEST_CASE(
  "inbound guard: with rpc.idle-timeout a silent connection is closed after its handshake") {
  auto opts = guarded_node(64, 10s);
  opts.inbound.idle_timeout = 300ms;
  guarded_server server(opts);
  auto before = inbound_guard_counters();
  int fd = connect_raw(server.port);
  send_bytes(fd, handshake_of(fresh_node_id()));
  CHECK(closed_by_node(fd, 5s));
  ::close(fd);
  CHECK(inbound_guard_counters().idle_closed == before.idle_closed + 1);
  CHECK(inbound_guard_counters().timed_out == before.timed_out);
}

TEST_CASE("inbound guard: the node checks at start that the guard is live") {
  auto opts = guarded_node(64, 10s);
  guarded_server server(opts);
  auto before = inbound_guard_counters();
  auto live = check_inbound_guard_live();
  CHECK_MESSAGE(live.has_value(), (live ? std::string() : live.error().message));
  // Calls that bypass the guard (libc's own, as a binary without the exports would bind).
  socket_calls libc;
  libc.accept = reinterpret_cast<decltype(libc.accept)>(::dlsym(RTLD_NEXT, "accept"));
  libc.recv = reinterpret_cast<decltype(libc.recv)>(::dlsym(RTLD_NEXT, "recv"));
  libc.close = reinterpret_cast<decltype(libc.close)>(::dlsym(RTLD_NEXT, "close"));
  auto dead = check_inbound_guard_live(libc);
  REQUIRE_FALSE(dead.has_value());
  CHECK(dead.error().message.find("accept() does not reach the guard") != std::string::npos);
  auto after = inbound_guard_counters();
  CHECK(after.open == before.open);
  CHECK(after.listeners == before.listeners);
}
