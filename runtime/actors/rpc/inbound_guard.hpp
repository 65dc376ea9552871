#pragma once
/// Guards on the connections a node accepts on its published ports (the endpoint locator's, the
/// partition server's), whether or not TLS is on. CAF 0.17's middleman has no hook where a new
/// connection or its first bytes could be judged, so the process interposes `accept`, `recv`
/// and `close` (it defines them and calls the kernel itself; other sockets pass untouched):
///
/// - At most `max_connections` accepted connections are open at once, and at most
///   `max_connections_per_host` from one peer address (loopback counts like any other). One more
///   is closed as it is accepted, logged with the peer's address: a stranger can exhaust neither
///   the descriptors nor the slots a TaskManager on another host needs.
/// - A connection whose RPC handshake has not arrived `handshake_timeout` after it was accepted
///   is shut down and logged (an idle or trickling peer stayed forever); with `idle_timeout`, so
///   is one that sent nothing for that long after its handshake.
/// - Every byte read goes through a `basp_inspector` first. Bytes that break the protocol — a
///   wrong protocol, an invalid frame header, a frame larger than `max_payload` (64 KiB before
///   the handshake) — shut the connection down before CAF sees the header, logged with the
///   peer's address and the reason. So does a frame whose claim would take the payload bytes
///   claimed by all connections' incomplete frames past `incomplete_frames_budget` (CAF
///   allocates a frame's payload when its header arrives). A connection that ends in the middle
///   of a frame is logged too. With TLS the inspector sees the decrypted bytes
///   (`inspect_decrypted`, from tls.cpp's SSL_read).
/// - The node id a peer announces in its client handshake is handed to peer_roles.hpp
///   (`peer_announced`); the connection is dropped if that id is known under the other
///   certificate role, and one with a client certificate may not route messages.
///
/// The guard belongs to a listening socket, not to a port number: a port is claimed by the
/// socket listening on it when `guard_inbound_port` is called (or, for a port announced before
/// it is bound, by the first socket on it that accepts), and the claim ends when that socket is
/// closed (CAF's unpublish), so a later listener on the same number (a REST server) is not
/// judged as RPC. Refusal log lines are rate limited per reason (`log_lines_per_second`, then
/// one line counting the suppressed ones).
///
/// Descriptors above 65535 are not guarded. The executable must export `accept`, `recv` and
/// `close`: targets linking flint_rpc get the linker flags; `check_inbound_guard_live` proves it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <sys/socket.h>
#include <sys/types.h>

#include "runtime/common/expected.hpp"

namespace flint::rpc {

struct inbound_limits {
  /// What a frame may carry beyond an RPC call of rpc.max-frame-size (the message's own header).
  static constexpr std::uint64_t transport_overhead = 64u << 10;

  /// The largest frame payload after the handshake.
  std::uint64_t max_payload = (128u << 20) + transport_overhead;
  /// `rpc.max-connections`.
  std::size_t max_connections = 1024;
  /// `rpc.max-connections-per-host`: from one peer address.
  std::size_t max_connections_per_host = 128;
  /// `rpc.handshake-timeout`: from the accept to the peer's complete RPC handshake.
  std::chrono::milliseconds handshake_timeout{10000};
  /// `rpc.idle-timeout`: after the handshake, a connection that sent nothing for this long is
  /// closed; 0 never. Off by default: CAF's own heartbeats (middleman.heartbeat-interval) are
  /// off, and a legitimate connection may stay silent for long (a data connection between two
  /// stages, a client waiting for its job); closing one cuts every actor behind it off.
  std::chrono::milliseconds idle_timeout{0};
  /// `rpc.max-incomplete-frames-size`: the payload bytes all connections' incomplete frames may
  /// claim at once. Never below `max_payload` (one largest frame always fits).
  std::uint64_t incomplete_frames_budget = 1u << 30;
  /// Refusal log lines per reason and second; the rest are counted in one line.
  std::size_t log_lines_per_second = 10;

  static inbound_limits for_frame_size(std::uint64_t max_frame_size);
};

/// Turns the guards on for this process (the latest limits win). Connections are guarded on the
/// ports passed to `guard_inbound_port` only.
void install_inbound_guard(const inbound_limits& limits);

/// Guards what is accepted from now on by the sockets listening on `port` (publish_actor calls
/// it after publishing). With `tls` the bytes read are TLS records: the inspector reads what
/// SSL_read decrypted instead. Called for a port nothing listens on yet, it does what
/// `expect_inbound_port` does.
void guard_inbound_port(std::uint16_t port, bool tls);

/// Before publishing on `port`: the socket that will listen on it is guarded from its first
/// accept (if that comes within 30 s); one listening on the number already is someone else's and
/// stays unguarded (the publish will fail).
void expect_inbound_port(std::uint16_t port, bool tls);

/// Ends the guard of `port`'s listening socket, or of a port announced that no socket claimed
/// (a failed publish). Closing the listening socket does the same.
void unguard_inbound_port(std::uint16_t port);

/// For tls.cpp: the decrypted bytes of the connection on `fd`. False if they break the protocol
/// (the connection is then being shut down and the bytes must not be handed on).
bool inspect_decrypted(int fd, const void* data, std::size_t n);

/// Whether `fd` is a connection accepted on a guarded port and not yet closed.
bool is_guarded_connection(int fd);

/// The socket calls CAF's middleman binds to (by default what the process resolves the names
/// to, as libcaf_io's own calls do).
struct socket_calls {
  int (*accept)(int, sockaddr*, socklen_t*) = nullptr;
  ssize_t (*recv)(int, void*, std::size_t, int) = nullptr;
  int (*close)(int) = nullptr;
};

/// Whether the guard can work in this process: the CAF it was written for (0.17.6, whose BASP
/// the inspector follows: the headers and the loaded libcaf_io), installed, and `calls` land in
/// the guard — a loopback connection through a guarded listener is seen accepted, read and
/// closed. Errors say what is wrong; a node must not start without the guard.
expected<unit> check_inbound_guard_live(const socket_calls& calls);
expected<unit> check_inbound_guard_live();

struct inbound_counters {
  /// Refused past `max_connections`.
  std::uint64_t refused = 0;
  /// Refused past `max_connections_per_host`.
  std::uint64_t refused_per_host = 0;
  /// Shut down for want of a handshake.
  std::uint64_t timed_out = 0;
  /// Shut down after `idle_timeout` without a byte.
  std::uint64_t idle_closed = 0;
  /// Shut down because their bytes broke the protocol (or the announced node id's role).
  std::uint64_t dropped = 0;
  /// Shut down because their frame's claim exceeded `incomplete_frames_budget`.
  std::uint64_t over_budget = 0;
  /// Ended in the middle of a frame.
  std::uint64_t truncated = 0;
  /// Refusal log lines not written (rate limit).
  std::uint64_t log_lines_suppressed = 0;
  /// Guarded connections open now.
  std::size_t open = 0;
  /// Payload bytes incomplete frames claim now.
  std::uint64_t claimed = 0;
  /// Listening sockets guarded now.
  std::size_t listeners = 0;
};

inbound_counters inbound_guard_counters();

/// "host:port" of the socket's peer, for log lines.
std::string peer_address(int fd);

} // namespace flint::rpc
