#pragma once
/// Guards on the connections a node accepts on its published ports (the endpoint locator's, the
/// partition server's), whether or not TLS is on. CAF 0.17's middleman has no hook where a new
/// connection or its first bytes could be judged, so the process interposes `accept`, `recv`
/// and `close` (it defines them and calls the kernel itself; other sockets pass untouched):
///
/// - At most `max_connections` accepted connections are open at once. One more is closed as it
///   is accepted, logged with the peer's address (a stranger cannot exhaust the descriptors).
/// - A connection whose RPC handshake has not arrived `handshake_timeout` after it was accepted
///   is shut down and logged (an idle or trickling peer stayed forever).
/// - Every byte read goes through a `basp_inspector` first. Bytes that break the protocol — a
///   wrong protocol, an invalid frame header, a frame larger than `max_payload` — shut the
///   connection down before CAF sees the header, logged with the peer's address and the reason.
///   A connection that ends in the middle of a frame is logged too. With TLS the inspector sees
///   the decrypted bytes (`inspect_decrypted`, from tls.cpp's SSL_read).
///
/// Descriptors above 65535 are not guarded. The executable must export `accept`, `recv` and
/// `close`: targets linking flint_rpc get the linker flags.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace flint::rpc {

struct inbound_limits {
  /// What a frame may carry beyond an RPC call of rpc.max-frame-size (the message's own header).
  static constexpr std::uint64_t transport_overhead = 64u << 10;

  /// The largest frame payload after the handshake.
  std::uint64_t max_payload = (128u << 20) + transport_overhead;
  /// `rpc.max-connections`.
  std::size_t max_connections = 1024;
  /// `rpc.handshake-timeout`: from the accept to the peer's complete RPC handshake.
  std::chrono::milliseconds handshake_timeout{10000};

  static inbound_limits for_frame_size(std::uint64_t max_frame_size);
};

/// Turns the guards on for this process (the latest limits win). Connections are guarded on the
/// ports passed to `guard_inbound_port` only.
void install_inbound_guard(const inbound_limits& limits);

/// Guards what is accepted on `port` from now on (publish_actor calls it). With `tls` the bytes
/// read are TLS records: the inspector reads what SSL_read decrypted instead.
void guard_inbound_port(std::uint16_t port, bool tls);

/// For tls.cpp: the decrypted bytes of the connection on `fd`. False if they break the protocol
/// (the connection is then being shut down and the bytes must not be handed on).
bool inspect_decrypted(int fd, const void* data, std::size_t n);

struct inbound_counters {
  /// Refused past `max_connections`.
  std::uint64_t refused = 0;
  /// Shut down for want of a handshake.
  std::uint64_t timed_out = 0;
  /// Shut down because their bytes broke the protocol.
  std::uint64_t dropped = 0;
  /// Ended in the middle of a frame.
  std::uint64_t truncated = 0;
  /// Guarded connections open now.
  std::size_t open = 0;
};

inbound_counters inbound_guard_counters();

/// "host:port" of the socket's peer, for log lines.
std::string peer_address(int fd);

} // namespace flint::rpc
