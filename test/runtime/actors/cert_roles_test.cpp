// Certificates with roles and pinned fingerprints (security.ssl.internal.*): real actor systems
// over loopback TLS, certificates from deploy/gen-certs.sh. A client certificate may call only
// the methods open to clients; a certificate outside security.ssl.internal.cert.fingerprint is
// refused at the handshake; a node does not take a client for a node to connect to.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>
#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <spdlog/sinks/ostream_sink.h>

#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/peer_roles.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/rpc/tls.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/logging.hpp"

using namespace flint;
using namespace flint::rpc;
using namespace std::chrono_literals;

namespace {

/// What a CLI may call, and what only the cluster may.
struct open_echo {
  static constexpr std::uint32_t id = 0x0F01;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "open_echo";
  using request = echo_request;
  using response = echo_response;
};

struct node_echo {
  static constexpr std::uint32_t id = 0x0F02;
  static constexpr const char* name = "node_echo";
  using request = echo_request;
  using response = echo_response;
};

static_assert(open_to_clients_v<open_echo>);
static_assert(!open_to_clients_v<node_echo>);

class roles_endpoint : public rpc_endpoint {
public:
  using rpc_endpoint::rpc_endpoint;

protected:
  void on_start() override {
    auto answer = [this](echo_request req) -> expected<echo_response> {
      return echo_response{std::move(req.text), std::move(req.data), endpoint_id()};
    };
    handle<open_echo>(fencing::unfenced, answer);
    handle<node_echo>(fencing::unfenced, answer);
  }
};

struct certificates {
  std::filesystem::path dir;

  certificates() {
    auto made = std::filesystem::temp_directory_path() / "flint-cert-roles-XXXXXX";
    std::string buf = made.string();
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    dir = buf;
    auto cmd = "bash '" FLINT_SOURCE_DIR "/deploy/gen-certs.sh' '" + dir.string()
      + "' server node stranger --client alice >/dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  ~certificates() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  node_options node(const std::string& name, std::vector<std::string> pins = {}) const {
    node_options o;
    o.tls.enabled = true;
    o.tls.keystore = (dir / (name + ".pem")).string();
    o.tls.truststore = (dir / "ca.pem").string();
    o.tls.fingerprints = std::move(pins);
    o.inbound = inbound_limits::for_frame_size(64u << 10);
    return o;
  }

  std::string fingerprint(const std::string& name) const {
    auto f = certificate_fingerprint((dir / (name + ".pem")).string());
    REQUIRE(f.has_value());
    return *f;
  }
};

struct server {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  trace::trace_recorder recorder{trace::system_now_us};
  caf::actor endpoint;
  caf::actor locator;
  std::uint16_t port = 0;

  explicit server(const node_options& o) : sys(configure_node(cfg, o)) {
    endpoint = sys.spawn<roles_endpoint>(endpoint_context{"roles", &recorder, {}});
    locator = spawn_endpoint_locator(sys);
    register_endpoint(locator, "roles", endpoint);
    auto p = publish_locator(sys, locator, 0, "127.0.0.1");
    REQUIRE(p.has_value());
    port = *p;
  }
  ~server() {
    caf::anon_send_exit(endpoint, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
  }
};

struct call_results {
  bool connected = false;
  expected<echo_response> open = make_error(errc::unreachable, "not called");
  expected<echo_response> node_only = make_error(errc::unreachable, "not called");
};

/// A peer in an actor system of its own: connects with `o`, calls both methods.
call_results call_both(std::uint16_t port, const node_options& o) {
  call_results out;
  caf::actor_system_config cfg;
  caf::actor_system peer{configure_node(cfg, o)};
  auto handle = connect_endpoint(peer, "127.0.0.1", port, "roles", 5s);
  if (!handle)
    return out;
  out.connected = true;
  trace::trace_recorder rec{trace::system_now_us};
  client_identity who{"cli", &rec, 5s};
  gateway gw(*handle, "roles", fencing_token{});
  caf::scoped_actor self{peer, true};
  out.open = gw.ask_blocking<open_echo>(*self, who, echo_request{"open", {}});
  out.node_only = gw.ask_blocking<node_echo>(*self, who, echo_request{"node", {}});
  return out;
}

} // namespace

// First in this file: the TLS logger is made at its first line, with the sinks configured then.
TEST_CASE("TLS refusal lines are rate limited: a flood of bad handshakes writes at most 10 a second") {
  // Lives as long as the loggers made now: later tests log through them.
  static auto* lines = new std::ostringstream;
  configure_logging({std::make_shared<spdlog::sinks::ostream_sink_mt>(*lines)},
                    spdlog::level::info);
  certificates certs;
  server s(certs.node("server"));
  auto start = std::chrono::steady_clock::now();
  constexpr int attempts = 40;
  for (int i = 0; i < attempts; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(s.port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    const char hello[] = "GET / HTTP/1.0\r\n\r\n"; // not a TLS record: the handshake fails
    (void)::send(fd, hello, sizeof(hello) - 1, MSG_NOSIGNAL);
    char buf[64];
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 2000) > 0)
      (void)::recv(fd, buf, sizeof(buf), 0); // the node's close
    ::close(fd);
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  std::this_thread::sleep_for(200ms);
  auto text = lines->str();
  std::size_t refused = 0;
  for (auto at = text.find("TLS handshake (accept)"); at != std::string::npos;
       at = text.find("TLS handshake (accept)", at + 1))
    ++refused;
  MESSAGE(refused << " refusal lines for " << attempts << " bad handshakes in "
                  << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
                  << " ms");
  CHECK(refused > 0);
  // Every started second may write 10.
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count() + 1;
  CHECK(refused <= static_cast<std::size_t>(10 * seconds));
  CHECK(refused < static_cast<std::size_t>(attempts));
}

TEST_CASE("the TLS settings are checked: fingerprints, protocol and algorithms by name") {
  certificates certs;
  auto o = certs.node("server");
  CHECK(check_tls_files(o.tls).has_value());

  o.tls.fingerprints = {"not-hex"};
  auto bad = check_tls_files(o.tls);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("security.ssl.internal.cert.fingerprint") != std::string::npos);
  o.tls.fingerprints = {certs.fingerprint("server"), "ab:cd"};
  CHECK_FALSE(check_tls_files(o.tls));
  o.tls.fingerprints = {certs.fingerprint("server")};
  CHECK(check_tls_files(o.tls).has_value());

  o.tls.protocol = "SSLv3";
  auto old = check_tls_files(o.tls);
  REQUIRE_FALSE(old);
  CHECK(old.error().message.find("security.ssl.protocol") != std::string::npos);
  o.tls.protocol = "TLSv1.2";

  // Flink's (IANA) names and OpenSSL's are both understood; an unknown one is named.
  o.tls.algorithms = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, ECDHE-ECDSA-AES256-GCM-SHA384";
  CHECK(check_tls_files(o.tls).has_value());
  o.tls.algorithms = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,NO_SUCH_SUITE";
  auto unknown = check_tls_files(o.tls);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("NO_SUCH_SUITE") != std::string::npos);
  o.tls.algorithms = "TLS_AES_128_GCM_SHA256"; // TLS 1.3 only, with TLSv1.2
  CHECK_FALSE(check_tls_files(o.tls));
}

TEST_CASE("a node id announced under one certificate role is refused under the other") {
  reset_peer_roles();
  set_connection_role(7, peer_role::client);
  CHECK(peer_announced(7, "node-a"));
  CHECK(is_client_node("node-a"));
  CHECK(any_client_nodes());
  set_connection_role(8, peer_role::node);
  CHECK_FALSE(peer_announced(8, "node-a"));
  CHECK(peer_announced(8, "node-b"));
  CHECK_FALSE(is_client_node("node-b"));
  set_connection_role(9, peer_role::client);
  CHECK_FALSE(peer_announced(9, "node-b"));
  connection_closed(7);
  CHECK(connection_role(7) == peer_role::node);
  CHECK(is_client_node("node-a")); // a client's id keeps its role for the process's life
  CHECK_FALSE(peer_announced(8, "node-a"));
  // A node's id is forgotten with its last connection.
  CHECK(peer_announced(10, "node-b")); // no TLS: a node's connection
  connection_closed(8);
  CHECK_FALSE(peer_announced(9, "node-b"));
  connection_closed(10);
  CHECK(peer_announced(9, "node-b"));
  CHECK(is_client_node("node-b"));
  reset_peer_roles();
}

TEST_CASE("a client certificate calls what is open to clients and nothing else") {
  certificates certs;
  reset_peer_roles();
  server s(certs.node("server"));

  auto node = call_both(s.port, certs.node("node"));
  REQUIRE(node.connected);
  CHECK(node.open.has_value());
  CHECK(node.node_only.has_value());

  auto client = call_both(s.port, certs.node("alice"));
  REQUIRE(client.connected);
  CHECK(client.open.has_value());
  REQUIRE_FALSE(client.node_only.has_value());
  CHECK(client.node_only.error().code == errc::rejected);
  CHECK(client.node_only.error().message.find("Permission denied: node_echo") != std::string::npos);
  CHECK(client.node_only.error().message.find("client certificate") != std::string::npos);
  reset_peer_roles();
}

TEST_CASE("a node does not connect to a peer serving with a client certificate") {
  // OpenSSL's purpose check refuses it already (no serverAuth); admit_peer would otherwise.
  certificates certs;
  server s(certs.node("alice"));
  auto node = call_both(s.port, certs.node("node"));
  CHECK_FALSE(node.connected);
}

TEST_CASE("with pinned fingerprints a certificate the CA signed but not pinned is refused") {
  certificates certs;
  std::vector<std::string> pins{certs.fingerprint("server"), certs.fingerprint("node")};
  server s(certs.node("server", pins));
  auto before = tls_peers_refused();
  auto stranger = call_both(s.port, certs.node("stranger", pins));
  CHECK_FALSE(stranger.connected);
  CHECK(tls_peers_refused() > before);
  auto node = call_both(s.port, certs.node("node", pins));
  REQUIRE(node.connected);
  CHECK(node.node_only.has_value());
}
