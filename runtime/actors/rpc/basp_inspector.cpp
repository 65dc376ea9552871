#include "runtime/actors/rpc/basp_inspector.hpp"

#include <algorithm>
#include <cstring>

namespace flint::rpc {

namespace {

constexpr const char* operation_names[] = {"server_handshake", "client_handshake", "direct_message",
                                           "routed_message",   "monitor_message",  "down_message",
                                           "heartbeat"};
constexpr std::uint8_t server_handshake = 0;
constexpr std::uint8_t client_handshake = 1;
constexpr std::uint8_t routed_message = 3;
constexpr std::uint8_t last_operation = 6;

std::uint64_t big_endian(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v = (v << 8) | p[i];
  return v;
}

/// The first bytes as hex and as text, so a log line shows what the peer spoke.
std::string describe(const std::uint8_t* p, std::size_t n) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string bytes, text;
  for (std::size_t i = 0; i < std::min<std::size_t>(n, 8); ++i) {
    if (i > 0)
      bytes += ' ';
    bytes += hex[p[i] >> 4];
    bytes += hex[p[i] & 0xf];
    text += (p[i] >= 0x20 && p[i] < 0x7f) ? static_cast<char>(p[i]) : '.';
  }
  return bytes + " \"" + text + "\"";
}

/// CAF's own field rules per operation (caf::io::basp::valid).
bool fields_valid(std::uint8_t op, std::uint64_t payload, std::uint64_t data, std::uint64_t source,
                  std::uint64_t dest) {
  switch (op) {
    case 0: return data != 0;
    case 1: return source == 0 && dest == 0;
    case 2:
    case 3: return dest != 0 && payload != 0;
    case 4: return payload != 0 && data == 0;
    case 5: return source != 0 && dest == 0 && payload != 0 && data == 0;
    case 6: return source == 0 && dest == 0 && payload == 0 && data == 0;
    default: return false;
  }
}

} // namespace

std::optional<std::string> basp_inspector::feed(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  bytes_ += n;
  while (n > 0) {
    if (payload_left_ > 0) {
      auto take = static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, n));
      if (in_handshake_ && handshake_payload_.size() < kept_handshake_payload) {
        auto keep = std::min(take, kept_handshake_payload - handshake_payload_.size());
        handshake_payload_.insert(handshake_payload_.end(), p, p + keep);
      }
      payload_left_ -= take;
      p += take;
      n -= take;
      if (payload_left_ == 0 && in_handshake_) {
        in_handshake_ = false;
        handshake_done_ = true;
      }
      continue;
    }
    auto take = std::min(header_size - got_, n);
    std::memcpy(header_.data() + got_, p, take);
    got_ += take;
    p += take;
    n -= take;
    // A peer's first byte must open a client handshake: a short request in another protocol
    // is judged at once, not after the handshake bound.
    if (frames_ == 0 && header_[0] != client_handshake)
      return wrong_first_frame();
    if (got_ < header_size)
      break;
    if (auto reason = check_header())
      return reason;
    got_ = 0;
    payload_left_ = payload_len_;
    if (payload_left_ == 0 && in_handshake_) {
      in_handshake_ = false;
      handshake_done_ = true;
    }
  }
  return std::nullopt;
}

std::optional<std::string> basp_inspector::check_header() {
  const auto* h = header_.data();
  auto op = h[0];
  payload_len_ = big_endian(h + 4, 4);
  auto data = big_endian(h + 8, 8);
  auto source = big_endian(h + 16, 8);
  auto dest = big_endian(h + 24, 8);
  if (!handshake_done_) {
    if (op != client_handshake || !fields_valid(op, payload_len_, data, source, dest))
      return wrong_first_frame();
    if (payload_len_ > max_handshake_payload)
      return "its handshake claims " + std::to_string(payload_len_) + " bytes (at most "
        + std::to_string(max_handshake_payload) + ")";
    in_handshake_ = true;
    ++frames_;
    return std::nullopt;
  }
  if (op > last_operation || !fields_valid(op, payload_len_, data, source, dest))
    return "it sent an invalid frame header " + describe(h, header_size) + " after "
      + std::to_string(frames_) + " good frames";
  // A peer that connected to us sends one client handshake and never a server's: whatever it
  // claims for another one is bounded as before its handshake.
  if ((op == server_handshake || op == client_handshake) && payload_len_ > max_handshake_payload)
    return std::string("it sent a ") + operation_names[op] + " frame claiming "
      + std::to_string(payload_len_) + " bytes (at most " + std::to_string(max_handshake_payload)
      + ")";
  if (op == routed_message && refuse_routed_)
    return "it may only call this node (a client certificate's connection) but sent a routed "
           "message";
  if (payload_len_ > max_payload_)
    return "it sent a frame of " + std::to_string(payload_len_)
      + " bytes, more than rpc.max-frame-size allows (" + std::to_string(max_payload_)
      + " bytes with the transport's own overhead)";
  ++frames_;
  return std::nullopt;
}

std::string basp_inspector::wrong_first_frame() const {
  auto op = header_[0];
  if (op > last_operation)
    return "it does not speak Flint's RPC protocol (CAF BASP); it began with "
      + describe(header_.data(), got_);
  return std::string("its first frame is not a valid client handshake (") + operation_names[op]
    + "); it began with " + describe(header_.data(), got_);
}

std::string basp_inspector::position() const {
  if (payload_left_ > 0)
    return std::to_string(payload_len_ - payload_left_) + " of " + std::to_string(payload_len_)
      + " payload bytes";
  return std::to_string(got_) + " of " + std::to_string(header_size) + " header bytes";
}

} // namespace flint::rpc
