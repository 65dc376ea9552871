// The inbound guard: what a peer's bytes may be (basp_inspector), and the guard on a published
// port of a real actor system over loopback: strangers' bytes, a 4 GiB frame claim, the
// connection cap and the handshake bound, while a real client is served.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
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
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

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

  explicit guarded_server(const node_options& o) : sys(configure_node(cfg, o)) {
    echo = sys.spawn<echo_endpoint>(endpoint_context{"echo_server", &recorder, {}}, token);
    locator = spawn_endpoint_locator(sys);
    register_endpoint(locator, "echo_server", echo);
    auto p = publish_locator(sys, locator, 0, "127.0.0.1");
    REQUIRE(p.has_value());
    port = *p;
  }

  ~guarded_server() {
    caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
  }

  /// A real client in another actor system: connect, look up, one echo round trip.
  bool serves_a_client(const node_options& o) {
    caf::actor_system_config client_cfg;
    caf::actor_system client{configure_node(client_cfg, o)};
    auto handle = connect_endpoint(client, "127.0.0.1", port, "echo_server", 5s);
    if (!handle)
      return false;
    trace::trace_recorder rec{trace::system_now_us};
    client_identity who{"test_client", &rec, 5s};
    gateway gw(*handle, "echo_server", token);
    caf::scoped_actor self{client, true};
    auto r = gw.ask_blocking<echo_method>(*self, who, echo_request{"still here", {}});
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
