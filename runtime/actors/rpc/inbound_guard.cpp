#include "runtime/actors/rpc/inbound_guard.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "runtime/actors/rpc/basp_inspector.hpp"
#include "runtime/common/logging.hpp"

namespace flint::rpc {

namespace {

constexpr int max_guarded_fd = 65536;

/// One accepted connection. Its slot is made at the first accept of that descriptor number and
/// reused by later ones: never freed, so `recv` and `close` never race a deletion.
struct connection {
  /// Guarded and not yet closed.
  std::atomic<bool> open{false};
  std::atomic<bool> handshake_done{false};
  /// The guard shut it down (no second log line when the end of stream follows).
  std::atomic<bool> closing{false};
  /// Accepted on a TLS port: its bytes are inspected after SSL_read, not in recv.
  std::atomic<bool> tls{false};
  /// Written under the guard's lock at accept.
  std::chrono::steady_clock::time_point accepted_at;
  std::string peer;
  /// Touched by the thread reading the connection only (CAF's multiplexer).
  std::optional<basp_inspector> inspector;
};

/// Zero before any constructor runs: `close` may be called before main.
std::atomic<connection*> slots[max_guarded_fd];
std::atomic<bool> installed{false};

struct guard_state {
  std::mutex mtx;
  std::condition_variable cv;
  inbound_limits limits;
  /// Guarded ports, and whether they speak TLS.
  std::map<std::uint16_t, bool> ports;
  std::size_t open = 0;
  int high_water = -1;
  bool started = false;
  bool warned_high_fd = false;
  std::atomic<std::uint64_t> refused{0}, timed_out{0}, dropped{0}, truncated{0};
};

guard_state& guard() {
  // Never destroyed: the multiplexer may still read and close while the process exits.
  static auto* g = new guard_state;
  return *g;
}

const std::shared_ptr<spdlog::logger>& logger() {
  static const auto* log = new std::shared_ptr<spdlog::logger>(make_endpoint_logger("rpc"));
  return *log;
}

std::string address_of(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = {};
  std::uint16_t port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (addr->sa_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(addr);
    if (IN6_IS_ADDR_V4MAPPED(&in->sin6_addr))
      inet_ntop(AF_INET, &in->sin6_addr.s6_addr[12], host, sizeof(host)); // an IPv4 peer
    else
      inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
    port = ntohs(in->sin6_port);
  } else {
    return "an unknown peer";
  }
  return std::string(host) + ":" + std::to_string(port);
}

std::uint16_t local_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return 0;
  if (addr.ss_family == AF_INET)
    return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

connection* guarded(int fd) {
  if (fd < 0 || fd >= max_guarded_fd)
    return nullptr;
  auto* c = slots[fd].load(std::memory_order_acquire);
  return c != nullptr && c->open.load(std::memory_order_acquire) ? c : nullptr;
}

void reap() {
  auto& g = guard();
  std::unique_lock<std::mutex> lock(g.mtx);
  for (;;) {
    g.cv.wait_for(lock, std::chrono::milliseconds(100));
    auto now = std::chrono::steady_clock::now();
    auto timeout = g.limits.handshake_timeout;
    std::vector<std::string> closed;
    for (int fd = 0; fd <= g.high_water; ++fd) {
      auto* c = slots[fd].load(std::memory_order_acquire);
      if (c == nullptr || !c->open.load() || c->handshake_done.load() || c->closing.load()
          || now - c->accepted_at <= timeout)
        continue;
      // Under the lock: `close` takes it too, so this descriptor is still the connection's.
      c->closing.store(true);
      ::shutdown(fd, SHUT_RDWR);
      ++g.timed_out;
      closed.push_back(c->peer);
    }
    // Logged without the lock: accept and close wait on it.
    lock.unlock();
    for (const auto& peer : closed)
      logger()->warn(
        "Closing the connection with {}: its RPC handshake did not arrive within {} "
        "ms (rpc.handshake-timeout).",
        peer, timeout.count());
    lock.lock();
  }
}

/// The bytes of a read broke the protocol: shut the connection down; the read reports its end.
void drop(int fd, connection& c, const std::string& reason) {
  c.closing.store(true);
  ::shutdown(fd, SHUT_RDWR);
  ++guard().dropped;
  logger()->warn("Closing the connection with {}: {}.", c.peer, reason);
}

/// What a read of a guarded connection returned, `n` bytes (0: end of stream), as the caller
/// should see it.
ssize_t after_read(int fd, connection& c, const void* buf, ssize_t n) {
  if (c.closing.load())
    return 0;
  if (n > 0) {
    if (auto reason = c.inspector->feed(buf, static_cast<std::size_t>(n))) {
      drop(fd, c, *reason);
      return 0;
    }
    if (c.inspector->handshake_done() && !c.handshake_done.load())
      c.handshake_done.store(true);
  } else if (n == 0 && c.inspector->mid_frame()) {
    ++guard().truncated;
    logger()->warn("The connection with {} ended in the middle of a frame ({}{}).", c.peer,
                   c.inspector->position(),
                   c.inspector->handshake_done() ? "" : ", before its RPC handshake");
  }
  return n;
}

/// A connection was accepted on `listener` as `fd`: guard it, refuse it past the cap (closed;
/// -1 with EAGAIN, which CAF takes as "nothing to accept"), or leave it (not a guarded port).
int after_accept(int listener, int fd, const sockaddr* peer) {
  auto& g = guard();
  auto port = local_port(listener);
  std::string address = address_of(peer);
  std::size_t open = 0, limit = 0;
  {
    std::lock_guard<std::mutex> lock(g.mtx);
    auto guarded_port = g.ports.find(port);
    if (guarded_port == g.ports.end())
      return fd;
    if (fd >= max_guarded_fd) {
      if (!g.warned_high_fd) {
        g.warned_high_fd = true;
        logger()->warn("Connections on descriptors above {} are not guarded.", max_guarded_fd - 1);
      }
      return fd;
    }
    if (g.open < g.limits.max_connections) {
      auto* c = slots[fd].load();
      if (c == nullptr) {
        c = new connection;
        slots[fd].store(c, std::memory_order_release);
      }
      if (!c->open.load())
        ++g.open;
      c->accepted_at = std::chrono::steady_clock::now();
      c->peer = std::move(address);
      c->inspector.emplace(g.limits.max_payload);
      c->handshake_done.store(false);
      c->closing.store(false);
      c->tls.store(guarded_port->second);
      c->open.store(true, std::memory_order_release);
      g.high_water = std::max(g.high_water, fd);
      return fd;
    }
    open = g.open;
    limit = g.limits.max_connections;
    ++g.refused;
  }
  ::syscall(SYS_close, fd);
  logger()->warn(
    "Refusing the connection from {}: {} connections are open "
    "(rpc.max-connections: {}).",
    address, open, limit);
  errno = EAGAIN;
  return -1;
}

int close_guarded(int fd, connection& c) {
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  if (c.open.exchange(false))
    --g.open;
  return static_cast<int>(::syscall(SYS_close, fd));
}

} // namespace

inbound_limits inbound_limits::for_frame_size(std::uint64_t max_frame_size) {
  inbound_limits l;
  l.max_payload = max_frame_size + transport_overhead;
  return l;
}

void install_inbound_guard(const inbound_limits& limits) {
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  g.limits = limits;
  installed.store(true);
  if (!g.started) {
    g.started = true;
    std::thread(reap).detach();
  }
}

void guard_inbound_port(std::uint16_t port, bool tls) {
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  g.ports[port] = tls;
}

bool inspect_decrypted(int fd, const void* data, std::size_t n) {
  auto* c = guarded(fd);
  if (c == nullptr || !c->tls.load(std::memory_order_relaxed))
    return true;
  return after_read(fd, *c, data, static_cast<ssize_t>(n)) > 0;
}

std::string peer_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return "an unknown peer";
  return address_of(reinterpret_cast<const sockaddr*>(&addr));
}

inbound_counters inbound_guard_counters() {
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  return {g.refused.load(), g.timed_out.load(), g.dropped.load(), g.truncated.load(), g.open};
}

} // namespace flint::rpc

// -- the interposed socket calls -------------------------------------------------------------------
// Defined by the executable, so that CAF's calls land here first. They call the kernel directly
// (no lookup of libc's versions, which could recurse or run before the loader is done).

extern "C" {

int accept(int listener, sockaddr* addr, socklen_t* len) {
  sockaddr_storage own{};
  socklen_t own_len = sizeof(own);
  auto* where = addr != nullptr ? addr : reinterpret_cast<sockaddr*>(&own);
  auto fd =
    static_cast<int>(::syscall(SYS_accept4, listener, where, addr != nullptr ? len : &own_len, 0));
  if (fd < 0 || !flint::rpc::installed.load(std::memory_order_relaxed))
    return fd;
  return flint::rpc::after_accept(listener, fd, where);
}

ssize_t recv(int fd, void* buf, size_t len, int flags) {
  auto n = static_cast<ssize_t>(::syscall(SYS_recvfrom, fd, buf, len, flags, nullptr, nullptr));
  if ((flags & MSG_PEEK) != 0)
    return n;
  auto* c = flint::rpc::guarded(fd);
  if (c == nullptr || c->tls.load(std::memory_order_relaxed))
    return n;
  return flint::rpc::after_read(fd, *c, buf, n);
}

int close(int fd) {
  if (auto* c = flint::rpc::guarded(fd))
    return flint::rpc::close_guarded(fd, *c);
  return static_cast<int>(::syscall(SYS_close, fd));
}

} // extern "C"
