#include "runtime/actors/rpc/inbound_guard.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/config.hpp>
#include <caf/node_id.hpp>
#include <spdlog/logger.h>

#include "runtime/actors/rpc/basp_inspector.hpp"
#include "runtime/actors/rpc/peer_roles.hpp"
#include "runtime/common/logging.hpp"

namespace flint::rpc {

namespace {

using clock = std::chrono::steady_clock;

/// The CAF whose BASP framing basp_inspector follows and whose calls are interposed.
constexpr int written_for_caf = 1706;
constexpr const char* written_for_caf_io = "libcaf_io.so.0.17.6";

constexpr int max_guarded_fd = 65536;

/// How long a port announced before its socket listens waits to be claimed by one (a publish
/// takes milliseconds; a failed one must not leave the number guarded for the next listener).
constexpr auto pending_port_lifetime = std::chrono::seconds(30);

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
  /// When a byte last arrived (clock ticks), for `idle_timeout`.
  std::atomic<clock::rep> last_read{0};
  /// The payload bytes its incomplete frame claims from the budget.
  std::atomic<std::uint64_t> claim{0};
  /// Written under the guard's lock at accept.
  clock::time_point accepted_at;
  std::string peer;
  std::string host;
  /// Touched by the thread reading the connection only (CAF's multiplexer).
  std::optional<basp_inspector> inspector;
};

/// What a listening socket is to the guard. Set under the guard's lock, read without it.
enum listener_kind : std::uint8_t { unknown = 0, not_guarded, guarded_plain, guarded_tls };

/// Zero before any constructor runs: `close` may be called before main.
std::atomic<connection*> slots[max_guarded_fd];
std::atomic<std::uint8_t> listeners[max_guarded_fd];
std::atomic<bool> installed{false};

/// The reasons a connection is refused or closed, each with its own log rate.
enum class refusal : std::uint8_t {
  over_cap,
  over_host_cap,
  handshake_timeout,
  idle,
  protocol,
  over_budget,
  truncated,
  role,
  count
};

constexpr const char* refusal_names[] = {"rpc.max-connections",
                                         "rpc.max-connections-per-host",
                                         "rpc.handshake-timeout",
                                         "rpc.idle-timeout",
                                         "protocol",
                                         "rpc.max-incomplete-frames-size",
                                         "truncated frame",
                                         "certificate role"};

struct pending_port {
  bool tls = false;
  clock::time_point until;
};

struct guard_state {
  std::mutex mtx;
  std::condition_variable cv;
  inbound_limits limits;
  /// Ports announced before a socket listened on them.
  std::map<std::uint16_t, pending_port> pending;
  std::size_t listener_count = 0;
  std::size_t open = 0;
  std::unordered_map<std::string, std::size_t> per_host;
  int high_water = -1;
  bool started = false;
  bool warned_high_fd = false;
  std::atomic<std::uint64_t> claimed{0}, budget{0};
  std::atomic<std::size_t> lines_per_second{10};
  std::atomic<std::uint64_t> refused{0}, refused_per_host{0}, timed_out{0}, idle_closed{0},
    dropped{0}, over_budget{0}, truncated{0};
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

/// At most `lines_per_second` refusal lines per reason and second; the rest are counted and
/// summed up in one line when their second is over (a flood must not flood the log).
class log_limiter {
public:
  bool admit(refusal r) {
    std::uint64_t summary = 0;
    bool ok = false;
    {
      std::lock_guard<std::mutex> lock(mtx_);
      auto& w = windows_[static_cast<std::size_t>(r)];
      auto now = clock::now();
      if (now - w.start >= std::chrono::seconds(1)) {
        summary = w.suppressed;
        w = window{now, 0, 0};
      }
      if (w.lines < guard().lines_per_second.load(std::memory_order_relaxed)) {
        ++w.lines;
        ok = true;
      } else {
        ++w.suppressed;
        ++suppressed_;
      }
    }
    if (summary > 0)
      write_summary(r, summary);
    return ok;
  }

  /// Writes the summaries of the seconds that are over (the reaper calls it).
  void flush() {
    std::array<std::uint64_t, static_cast<std::size_t>(refusal::count)> due{};
    {
      std::lock_guard<std::mutex> lock(mtx_);
      auto now = clock::now();
      for (std::size_t i = 0; i < due.size(); ++i) {
        auto& w = windows_[i];
        if (w.suppressed > 0 && now - w.start >= std::chrono::seconds(1)) {
          due[i] = w.suppressed;
          w = window{now, 0, 0};
        }
      }
    }
    for (std::size_t i = 0; i < due.size(); ++i)
      if (due[i] > 0)
        write_summary(static_cast<refusal>(i), due[i]);
  }

  std::uint64_t suppressed() const { return suppressed_.load(); }

private:
  struct window {
    clock::time_point start;
    std::size_t lines = 0;
    std::uint64_t suppressed = 0;
  };

  static void write_summary(refusal r, std::uint64_t n) {
    logger()->warn("Suppressed {} similar lines about refused or closed connections ({}).", n,
                   refusal_names[static_cast<std::size_t>(r)]);
  }

  std::mutex mtx_;
  std::array<window, static_cast<std::size_t>(refusal::count)> windows_{};
  std::atomic<std::uint64_t> suppressed_{0};
};

log_limiter& limiter() {
  static auto* l = new log_limiter;
  return *l;
}

template <class... Ts>
void refusal_warn(refusal r, fmt::format_string<Ts...> format, Ts&&... args) {
  if (limiter().admit(r))
    logger()->warn(format, std::forward<Ts>(args)...);
}

std::string host_of(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = {};
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, host, sizeof(host));
  } else if (addr->sa_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(addr);
    if (IN6_IS_ADDR_V4MAPPED(&in->sin6_addr))
      inet_ntop(AF_INET, &in->sin6_addr.s6_addr[12], host, sizeof(host)); // an IPv4 peer
    else
      inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
  } else {
    return "an unknown peer";
  }
  return host;
}

std::string address_of(const sockaddr* addr) {
  std::uint16_t port = 0;
  if (addr->sa_family == AF_INET)
    port = ntohs(reinterpret_cast<const sockaddr_in*>(addr)->sin_port);
  else if (addr->sa_family == AF_INET6)
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port);
  else
    return "an unknown peer";
  return host_of(addr) + ":" + std::to_string(port);
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

bool listening_on(int fd, std::uint16_t port) {
  int listening = 0;
  socklen_t len = sizeof(listening);
  return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening != 0
    && local_port(fd) == port;
}

/// The sockets of this process listening on `port`.
std::vector<int> listening_sockets(std::uint16_t port) {
  std::vector<int> found;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (auto* entry = ::readdir(dir)) {
      char* end = nullptr;
      auto fd = std::strtol(entry->d_name, &end, 10);
      if (end == entry->d_name || *end != '\0' || fd >= max_guarded_fd || fd == ::dirfd(dir))
        continue;
      if (listening_on(static_cast<int>(fd), port))
        found.push_back(static_cast<int>(fd));
    }
    ::closedir(dir);
    return found;
  }
  rlimit lim{};
  auto top = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 ? std::min<rlim_t>(lim.rlim_cur, max_guarded_fd)
                                                   : max_guarded_fd;
  for (int fd = 0; fd < static_cast<int>(top); ++fd)
    if (listening_on(fd, port))
      found.push_back(fd);
  return found;
}

/// Under the guard's lock.
void set_listener(guard_state& g, int fd, listener_kind kind) {
  auto was = listeners[fd].exchange(kind);
  bool was_guarded = was == guarded_plain || was == guarded_tls;
  bool is_guarded = kind == guarded_plain || kind == guarded_tls;
  if (was_guarded && !is_guarded)
    --g.listener_count;
  else if (!was_guarded && is_guarded)
    ++g.listener_count;
}

/// What the socket `listener` is to the guard; at its first accept, a port announced for it
/// makes it guarded.
listener_kind kind_of(int listener) {
  if (listener < 0 || listener >= max_guarded_fd)
    return not_guarded;
  auto kind = static_cast<listener_kind>(listeners[listener].load(std::memory_order_acquire));
  if (kind != unknown)
    return kind;
  auto port = local_port(listener);
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  kind = static_cast<listener_kind>(listeners[listener].load());
  if (kind != unknown)
    return kind;
  kind = not_guarded;
  auto it = g.pending.find(port);
  if (it != g.pending.end()) {
    if (clock::now() <= it->second.until)
      kind = it->second.tls ? guarded_tls : guarded_plain;
    g.pending.erase(it);
  }
  set_listener(g, listener, kind);
  return kind;
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
    auto now = clock::now();
    auto handshake = g.limits.handshake_timeout;
    auto idle = g.limits.idle_timeout;
    std::vector<std::string> timed_out, idled;
    for (int fd = 0; fd <= g.high_water; ++fd) {
      auto* c = slots[fd].load(std::memory_order_acquire);
      if (c == nullptr || !c->open.load() || c->closing.load())
        continue;
      bool late = false;
      if (!c->handshake_done.load()) {
        late = now - c->accepted_at > handshake;
        if (late)
          timed_out.push_back(c->peer);
      } else if (idle.count() > 0) {
        late = now - clock::time_point(clock::duration(c->last_read.load())) > idle;
        if (late)
          idled.push_back(c->peer);
      }
      if (!late)
        continue;
      // Under the lock: `close` takes it too, so this descriptor is still the connection's.
      c->closing.store(true);
      ::shutdown(fd, SHUT_RDWR);
    }
    g.timed_out += timed_out.size();
    g.idle_closed += idled.size();
    // Logged without the lock: accept and close wait on it.
    lock.unlock();
    for (const auto& peer : timed_out)
      refusal_warn(refusal::handshake_timeout,
                   "Closing the connection with {}: its RPC handshake did not arrive within {} "
                   "ms (rpc.handshake-timeout).",
                   peer, handshake.count());
    for (const auto& peer : idled)
      refusal_warn(refusal::idle,
                   "Closing the connection with {}: it sent nothing for {} ms (rpc.idle-timeout).",
                   peer, idle.count());
    limiter().flush();
    lock.lock();
  }
}

/// The bytes of a read broke the rules: shut the connection down; the read reports its end.
void drop(int fd, connection& c, refusal why, std::atomic<std::uint64_t>& counter,
          const std::string& reason) {
  // Counted first: whoever sees the connection end sees it counted.
  ++counter;
  c.closing.store(true);
  ::shutdown(fd, SHUT_RDWR);
  refusal_warn(why, "Closing the connection with {}: {}.", c.peer, reason);
}

/// Takes `claim` payload bytes for the connection's incomplete frame from the budget (giving
/// back what it held); false if they do not fit.
bool take_claim(connection& c, std::uint64_t claim) {
  auto& g = guard();
  auto held = c.claim.load(std::memory_order_relaxed);
  if (claim <= held) {
    g.claimed.fetch_sub(held - claim);
    c.claim.store(claim, std::memory_order_relaxed);
    return true;
  }
  auto more = claim - held;
  auto budget = g.budget.load(std::memory_order_relaxed);
  auto now = g.claimed.load();
  do {
    if (now + more > budget)
      return false;
  } while (!g.claimed.compare_exchange_weak(now, now + more));
  c.claim.store(claim, std::memory_order_relaxed);
  return true;
}

/// The peer's client handshake has arrived: hand the node id it announces to peer_roles.
bool announce(int fd, connection& c) {
  auto& g = guard();
  const auto& payload = c.inspector->handshake_payload();
  caf::binary_deserializer source(static_cast<caf::execution_unit*>(nullptr),
                                  reinterpret_cast<const char*>(payload.data()), payload.size());
  caf::node_id node;
  auto err = source(node);
  c.inspector->release_handshake_payload();
  if (err || !node) {
    drop(fd, c, refusal::protocol, g.dropped, "its RPC handshake does not begin with a node id");
    return false;
  }
  auto id = caf::to_string(node);
  if (!peer_announced(fd, id)) {
    drop(fd, c, refusal::role, g.dropped,
         "it announced node id " + id
           + ", known under the other certificate role (a process holds a node's or a "
             "client's certificate, not both)");
    return false;
  }
  return true;
}

/// What a read of a guarded connection returned, `n` bytes (0: end of stream), as the caller
/// should see it.
ssize_t after_read(int fd, connection& c, const void* buf, ssize_t n) {
  if (c.closing.load(std::memory_order_relaxed))
    return 0;
  auto& g = guard();
  if (n > 0) {
    c.last_read.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    bool before_handshake = !c.handshake_done.load(std::memory_order_relaxed);
    // tls.cpp learns the role when the TLS handshake completes, before the first RPC byte.
    if (before_handshake)
      c.inspector->refuse_routed(connection_role(fd) == peer_role::client);
    if (auto reason = c.inspector->feed(buf, static_cast<std::size_t>(n))) {
      drop(fd, c, refusal::protocol, g.dropped, *reason);
      return 0;
    }
    auto claim = c.inspector->incomplete_claim();
    if (claim != c.claim.load(std::memory_order_relaxed) && !take_claim(c, claim)) {
      drop(fd, c, refusal::over_budget, g.over_budget,
           "its frame claims " + std::to_string(claim)
             + " bytes while incomplete frames already claim " + std::to_string(g.claimed.load())
             + " (rpc.max-incomplete-frames-size: " + std::to_string(g.budget.load()) + ")");
      return 0;
    }
    if (before_handshake && c.inspector->handshake_done()) {
      if (!announce(fd, c))
        return 0;
      c.handshake_done.store(true);
    }
  } else if (n == 0 && c.inspector->mid_frame()) {
    ++g.truncated;
    refusal_warn(
      refusal::truncated, "The connection with {} ended in the middle of a frame ({}{}).", c.peer,
      c.inspector->position(), c.inspector->handshake_done() ? "" : ", before its RPC handshake");
  }
  return n;
}

/// A connection was accepted on `listener` as `fd`: guard it, refuse it past a cap (closed;
/// -1 with EAGAIN, which CAF takes as "nothing to accept"), or leave it (not a guarded socket).
int after_accept(int listener, int fd, const sockaddr* peer) {
  auto kind = kind_of(listener);
  if (kind != guarded_plain && kind != guarded_tls)
    return fd;
  auto& g = guard();
  std::string address = address_of(peer);
  std::string host = host_of(peer);
  std::size_t open = 0, limit = 0;
  bool per_host = false;
  {
    std::lock_guard<std::mutex> lock(g.mtx);
    if (fd >= max_guarded_fd) {
      if (!g.warned_high_fd) {
        g.warned_high_fd = true;
        logger()->warn("Connections on descriptors above {} are not guarded.", max_guarded_fd - 1);
      }
      return fd;
    }
    auto& from_host = g.per_host[host];
    if (g.open < g.limits.max_connections && from_host < g.limits.max_connections_per_host) {
      auto* c = slots[fd].load();
      if (c == nullptr) {
        c = new connection;
        slots[fd].store(c, std::memory_order_release);
      }
      if (!c->open.load())
        ++g.open;
      ++from_host;
      c->accepted_at = clock::now();
      c->last_read.store(c->accepted_at.time_since_epoch().count());
      c->claim.store(0);
      c->peer = std::move(address);
      c->host = std::move(host);
      c->inspector.emplace(g.limits.max_payload);
      c->handshake_done.store(false);
      c->closing.store(false);
      c->tls.store(kind == guarded_tls);
      c->open.store(true, std::memory_order_release);
      g.high_water = std::max(g.high_water, fd);
      return fd;
    }
    per_host = g.open < g.limits.max_connections;
    if (per_host) {
      open = from_host;
      limit = g.limits.max_connections_per_host;
      ++g.refused_per_host;
    } else {
      open = g.open;
      limit = g.limits.max_connections;
      ++g.refused;
    }
    if (from_host == 0)
      g.per_host.erase(host);
  }
  ::syscall(SYS_close, fd);
  if (per_host)
    refusal_warn(refusal::over_host_cap,
                 "Refusing the connection from {}: {} connections from {} are open "
                 "(rpc.max-connections-per-host: {}).",
                 address, open, host, limit);
  else
    refusal_warn(refusal::over_cap,
                 "Refusing the connection from {}: {} connections are open "
                 "(rpc.max-connections: {}).",
                 address, open, limit);
  errno = EAGAIN;
  return -1;
}

int close_guarded(int fd, connection& c) {
  auto& g = guard();
  {
    std::lock_guard<std::mutex> lock(g.mtx);
    if (c.open.exchange(false)) {
      --g.open;
      auto it = g.per_host.find(c.host);
      if (it != g.per_host.end() && --it->second == 0)
        g.per_host.erase(it);
      g.claimed.fetch_sub(c.claim.exchange(0));
      // Before the number can be reused: the next connection's role is its own.
      connection_closed(fd);
    }
  }
  return static_cast<int>(::syscall(SYS_close, fd));
}

/// A listening socket is closed: whatever it was to the guard, the next socket with its number
/// is judged afresh.
void forget_listener(int fd) {
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  set_listener(g, fd, unknown);
}

expected<unit> check_caf_version() {
  if (CAF_VERSION != written_for_caf)
    return make_error(errc::illegal_state,
                      "Flint was compiled against CAF " + std::to_string(CAF_VERSION)
                        + "; its inbound connection guard follows CAF 0.17.6's wire protocol "
                          "(CAF_VERSION 1706) and cannot guard another");
  std::string found;
  dl_iterate_phdr(
    [](dl_phdr_info* info, std::size_t, void* out) {
      std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
      if (name.find("libcaf_io.so") == std::string::npos)
        return 0;
      char real[PATH_MAX];
      *static_cast<std::string*>(out) = ::realpath(name.c_str(), real) != nullptr ? real : name;
      return 1;
    },
    &found);
  if (found.empty())
    return make_error(errc::illegal_state,
                      "libcaf_io is not loaded: the inbound connection guard interposes the "
                      "socket calls of CAF's shared middleman library");
  auto slash = found.rfind('/');
  auto file = slash == std::string::npos ? found : found.substr(slash + 1);
  if (file != written_for_caf_io)
    return make_error(errc::illegal_state,
                      "the process loaded " + found + ", but the inbound connection guard was "
                        + "written for " + written_for_caf_io + " (CAF 0.17.6's wire protocol)");
  return unit{};
}

/// An error of the self-test, closing what it opened.
error self_test_failed(const std::string& what, std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) {
      if (auto* c = guarded(fd))
        close_guarded(fd, *c);
      else {
        if (fd < max_guarded_fd && listeners[fd].load() != unknown)
          forget_listener(fd);
        ::syscall(SYS_close, fd);
      }
    }
  return make_error(errc::illegal_state,
                    "the inbound connection guard is not live: " + what
                      + " (the executable must export accept, recv and close: link it against "
                        "flint_rpc, whose link options do)");
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
  g.budget.store(std::max(limits.incomplete_frames_budget, limits.max_payload));
  g.lines_per_second.store(limits.log_lines_per_second);
  installed.store(true);
  if (!g.started) {
    g.started = true;
    std::thread(reap).detach();
  }
}

void guard_inbound_port(std::uint16_t port, bool tls) {
  if (port == 0)
    return;
  auto sockets = listening_sockets(port);
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  for (int fd : sockets)
    set_listener(g, fd, tls ? guarded_tls : guarded_plain);
  if (sockets.empty())
    g.pending[port] = pending_port{tls, clock::now() + pending_port_lifetime};
  else
    g.pending.erase(port);
}

void expect_inbound_port(std::uint16_t port, bool tls) {
  if (port == 0)
    return;
  auto sockets = listening_sockets(port);
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  for (int fd : sockets)
    if (listeners[fd].load() == unknown)
      set_listener(g, fd, not_guarded);
  g.pending[port] = pending_port{tls, clock::now() + pending_port_lifetime};
}

void unguard_inbound_port(std::uint16_t port) {
  auto sockets = listening_sockets(port);
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  g.pending.erase(port);
  for (int fd : sockets)
    set_listener(g, fd, unknown);
}

bool inspect_decrypted(int fd, const void* data, std::size_t n) {
  auto* c = guarded(fd);
  if (c == nullptr || !c->tls.load(std::memory_order_relaxed))
    return true;
  return after_read(fd, *c, data, static_cast<ssize_t>(n)) > 0;
}

bool is_guarded_connection(int fd) {
  return guarded(fd) != nullptr;
}

expected<unit> check_inbound_guard_live() {
  socket_calls calls;
  calls.accept = reinterpret_cast<decltype(calls.accept)>(::dlsym(RTLD_DEFAULT, "accept"));
  calls.recv = reinterpret_cast<decltype(calls.recv)>(::dlsym(RTLD_DEFAULT, "recv"));
  calls.close = reinterpret_cast<decltype(calls.close)>(::dlsym(RTLD_DEFAULT, "close"));
  return check_inbound_guard_live(calls);
}

expected<unit> check_inbound_guard_live(const socket_calls& calls) {
  if (auto ok = check_caf_version(); !ok)
    return ok;
  if (!installed.load())
    return make_error(errc::illegal_state,
                      "the inbound connection guard is not installed (install_inbound_guard)");
  if (calls.accept == nullptr || calls.recv == nullptr || calls.close == nullptr)
    return self_test_failed("accept, recv or close cannot be resolved", {});
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      || ::listen(listener, 1) != 0
      || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return self_test_failed(std::string("cannot listen on loopback: ") + std::strerror(errno),
                            {listener});
  if (listener >= max_guarded_fd)
    return self_test_failed("descriptor numbers above 65535", {listener});
  {
    auto& g = guard();
    std::lock_guard<std::mutex> lock(g.mtx);
    set_listener(g, listener, guarded_plain);
  }
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return self_test_failed(std::string("cannot connect on loopback: ") + std::strerror(errno),
                            {client, listener});
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof(peer);
  int accepted = calls.accept(listener, reinterpret_cast<sockaddr*>(&peer), &peer_len);
  if (accepted < 0)
    return self_test_failed(
      std::string("the self-test connection was not accepted: ") + std::strerror(errno),
      {client, listener});
  auto* c = guarded(accepted);
  if (c == nullptr)
    return self_test_failed("accept() does not reach the guard", {accepted, client, listener});
  // The start of a client handshake: read, judged, and waiting for the rest.
  const std::uint8_t start[] = {0x01, 0x00, 0x00};
  if (::send(client, start, sizeof(start), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(start)))
    return self_test_failed("cannot write on loopback", {accepted, client, listener});
  std::uint8_t buf[sizeof(start)];
  std::size_t got = 0;
  while (got < sizeof(buf)) {
    auto n = calls.recv(accepted, buf + got, sizeof(buf) - got, 0);
    if (n <= 0)
      return self_test_failed("the self-test connection ended", {accepted, client, listener});
    got += static_cast<std::size_t>(n);
  }
  if (c->inspector->bytes() != sizeof(start))
    return self_test_failed("recv() does not reach the guard", {accepted, client, listener});
  calls.close(accepted);
  if (c->open.load())
    return self_test_failed("close() does not reach the guard", {accepted, client, listener});
  ::syscall(SYS_close, client);
  forget_listener(listener);
  ::syscall(SYS_close, listener);
  return unit{};
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
  inbound_counters out;
  out.refused = g.refused.load();
  out.refused_per_host = g.refused_per_host.load();
  out.timed_out = g.timed_out.load();
  out.idle_closed = g.idle_closed.load();
  out.dropped = g.dropped.load();
  out.over_budget = g.over_budget.load();
  out.truncated = g.truncated.load();
  out.log_lines_suppressed = limiter().suppressed();
  out.open = g.open;
  out.claimed = g.claimed.load();
  out.listeners = g.listener_count;
  return out;
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
  if (fd >= 0 && fd < flint::rpc::max_guarded_fd) {
    if (flint::rpc::listeners[fd].load(std::memory_order_relaxed) != flint::rpc::unknown)
      flint::rpc::forget_listener(fd);
    if (auto* c = flint::rpc::guarded(fd))
      return flint::rpc::close_guarded(fd, *c);
  }
  return static_cast<int>(::syscall(SYS_close, fd));
}

} // extern "C"
