#pragma once
/// How a gateway method is described: an id, a name for traces and logs, a request and a
/// response type, each a message of the protocol's schema (its `codec<T>` is generated into
/// "schemas/<protocol>.messages.hpp"). Example:
///
///     struct request_slot {
///       static constexpr std::uint32_t id = 0x0202;
///       static constexpr const char* name = "request_slot";
///       using request = slot_request;
///       using response = ack;
///     };
///
/// With security.ssl.internal.* on, a peer holding a client certificate (gen-certs.sh --client)
/// may call only the methods that say `static constexpr bool open_to_clients = true;`: what
/// Flink's CLI does (submit, list, cancel, savepoint, status, reads). Every other method is the
/// cluster's own (register as a TaskManager or JobManager, offer slots, deploy, heartbeat).

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/common/expected.hpp"

namespace flint::rpc {

template <class M>
inline constexpr bool open_to_clients_v = requires { requires M::open_to_clients; };

template <class T>
struct codec; // specialize: static std::vector<char> encode(const T&);
  //             static void encode_to(std::vector<char>& out, const T&); (appends)
  //             static expected<T> decode(std::span<const char>);

/// Declares `codec<T>` for a message type. flint-capnpc writes these for every message of a
/// schema (schemas/gen/flint_capnpc.cpp) and defines them; code does not write codecs by hand.
#define FLINT_DECLARE_CODEC(T)                                 \
  template <>                                                  \
  struct codec<T> {                                            \
    static std::vector<char> encode(const T& x);               \
    static void encode_to(std::vector<char>& out, const T& x); \
    static expected<T> decode(std::span<const char> bytes);    \
  };

/// The empty answer of methods that only confirm.
struct ack {
  friend bool operator==(ack, ack) = default;
};

template <>
struct codec<ack> {
  static std::vector<char> encode(const ack&) { return {}; }
  static void encode_to(std::vector<char>&, const ack&) {}
  static expected<ack> decode(std::span<const char> bytes) {
    if (!bytes.empty())
      return make_error(errc::malformed_message, "ack: expected no payload");
    return ack{};
  }
};

} // namespace flint::rpc
