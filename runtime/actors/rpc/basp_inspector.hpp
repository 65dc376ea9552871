#pragma once
/// Follows the bytes a peer sends on an accepted RPC connection, frame by frame, as CAF 0.17's
/// BASP lays them out (a 32-byte header in network order — operation, two padding bytes, flags,
/// payload length, operation data, source and destination actor — then the payload), and says
/// when they break the protocol before CAF acts on them. CAF checks a header's fields but
/// trusts its payload length: a stranger's header claiming 4 GiB made it allocate 4 GiB, and a
/// wrong protocol was dropped without a word.
///
/// Before a peer's client handshake has arrived, and for any handshake frame later, a frame
/// may claim at most 64 KiB. A connection that may only call this node (a client certificate's)
/// may not route messages through it.
///
/// Plain C++: the inbound guard feeds it what each read returned, in any split.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flint::rpc {

class basp_inspector {
public:
  static constexpr std::size_t header_size = 32;
  /// A client handshake carries a node id and application identifiers: far less than this.
  static constexpr std::size_t max_handshake_payload = 64u << 10;
  /// How much of the client handshake's payload is kept for `handshake_payload`: the node id
  /// it begins with is a few dozen bytes.
  static constexpr std::size_t kept_handshake_payload = 4096;

  /// `max_payload`: the largest payload after the handshake.
  explicit basp_inspector(std::uint64_t max_payload) : max_payload_(max_payload) {}

  /// Takes the next `n` bytes. The reason they break the protocol ("it does not speak …"), or
  /// nothing while they keep to it.
  std::optional<std::string> feed(const void* data, std::size_t n);

  /// The peer's client handshake, header and payload, has arrived.
  bool handshake_done() const { return handshake_done_; }

  /// The first bytes (up to `kept_handshake_payload`) of the client handshake's payload, once
  /// `handshake_done`; empty after `release_handshake_payload`.
  const std::vector<std::uint8_t>& handshake_payload() const { return handshake_payload_; }
  void release_handshake_payload() { std::vector<std::uint8_t>().swap(handshake_payload_); }

  /// From now on a routed message (operation 0x03) breaks the protocol.
  void refuse_routed(bool on) { refuse_routed_ = on; }

  /// The payload bytes the frame being received claims (CAF allocates them when its header
  /// arrives); 0 between frames.
  std::uint64_t incomplete_claim() const { return payload_left_ > 0 ? payload_len_ : 0; }

  /// Bytes seen so far.
  std::uint64_t bytes() const { return bytes_; }

  /// A frame is partly received (say an end of stream now truncates it).
  bool mid_frame() const { return got_ > 0 || payload_left_ > 0; }

  /// Where in the frame the stream stands, for a log line ("12 of 32 header bytes").
  std::string position() const;

private:
  std::optional<std::string> check_header();
  std::string wrong_first_frame() const;

  std::uint64_t max_payload_;
  std::array<std::uint8_t, header_size> header_{};
  std::size_t got_ = 0;
  std::uint64_t payload_len_ = 0;
  std::uint64_t payload_left_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t frames_ = 0;
  bool in_handshake_ = false;
  bool handshake_done_ = false;
  bool refuse_routed_ = false;
  std::vector<std::uint8_t> handshake_payload_;
};

} // namespace flint::rpc
