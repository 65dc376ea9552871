#pragma once
/// The data-transport messages of remote channels (Flink's NettyMessage kinds), each declared once
/// as a named struct whose `wire` tuple is its CAF form.
///
/// Only builtin CAF types cross processes (atoms, integers, strings, `caf::actor`,
/// `std::vector<char>`), so nothing needs registering and nothing can arrive empty on a peer that
/// forgot a registration. A message is its atom followed by the elements of `wire`; `send`,
/// `to_message` and `from_message` below build and read it from that one tuple, so no handler
/// spells the layout out again. Included by transport sources only (it pulls in caf/send.hpp).
///
/// | message                  | direction           | fields                                              |
/// |--------------------------|---------------------|-----------------------------------------------------|
/// | partition_request_message| consumer → server   | consumer, job, partition, subpartition, channel,    |
/// |                          |                     | initial credit                                      |
/// | buffer_message           | server → consumer   | bytes, then channel, sequence, backlog, kind in one |
/// |                          |                     | vector (a header behind the payload)                |
/// | local_buffer_message     | server → consumer   | channel, sequence, backlog, shared_buffer (same     |
/// |                          |                     | process only: no copy)                              |
/// | add_credit_message       | consumer → server   | consumer, channel, credit                           |
/// | partition_error_message  | server → consumer   | channel, errc code, text (request refused)          |
/// | cancel_request_message   | consumer → server   | consumer, channel, job, partition, subpartition     |
/// | retry_request_message    | consumer → itself   | channel (the back-off of a refused request elapsed) |
/// | ping (`ping_atom` alone) | consumer → server   | nothing; answered with ping (a new connection       |
/// |                          |                     | carried one round trip)                             |

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/network/buffer.hpp"
#include "runtime/network/network_messages.hpp"
#include "runtime/network/result_partition_id.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>
#include <caf/send.hpp>
#include <caf/type_erased_tuple.hpp>

namespace flint::network::transport {

using partition_request_atom = caf::atom_constant<caf::atom("flint_preq")>;
using buffer_atom = caf::atom_constant<caf::atom("flint_buf")>;
using local_buffer_atom = caf::atom_constant<caf::atom("flint_bufl")>;
using add_credit_atom = caf::atom_constant<caf::atom("flint_cred")>;
using partition_error_atom = caf::atom_constant<caf::atom("flint_perr")>;
using cancel_request_atom = caf::atom_constant<caf::atom("flint_pcnl")>;
using ping_atom = caf::atom_constant<caf::atom("flint_ping")>;
using retry_request_atom = caf::atom_constant<caf::atom("flint_prty")>;

/// Wire types of the fields (fixed width, so both processes agree whatever their size_t).
using wire_u32 = std::uint32_t;
using wire_u64 = std::uint64_t;
using wire_i32 = std::int32_t;
using wire_kind = std::uint8_t;

/// A buffer handed to an actor of the same process: ownership moves, the bytes are not copied.
/// CAF 0.17 message elements must be copyable, hence the shared holder; whoever takes the buffer
/// out leaves an empty one, and a message dropped on the way releases it to its pool.
struct shared_buffer {
  std::shared_ptr<buffer> buf;
};

/// The elements of a wire tuple as references into a received message.
template <class Wire>
struct wire_refs_of;
template <class... Ts>
struct wire_refs_of<std::tuple<Ts...>> {
  using type = std::tuple<const Ts&...>;
};
template <class Wire>
using wire_refs = typename wire_refs_of<Wire>::type;

/// Consumer → server: start reading `subpartition` of `partition` of `job` for `channel` of
/// `consumer`, with `initial_credit` credits (its exclusive buffers). Flink's PartitionRequest.
struct partition_request_message {
  using atom = partition_request_atom;
  static constexpr std::string_view name = "partition request";
  using wire = std::tuple<caf::actor, wire_u64, wire_u64, wire_u64, wire_u64, wire_i32, wire_u64,
                          wire_u32, wire_u32, wire_u64>;

  caf::actor consumer;
  graph::job_id job;
  result_partition_id partition;
  std::size_t subpartition = 0;
  input_channel_id channel;
  std::size_t initial_credit = 0;

  wire to_wire() const {
    return {consumer,
            job.upper(),
            job.lower(),
            partition.result.upper(),
            partition.result.lower(),
            static_cast<wire_i32>(partition.partition_number),
            static_cast<wire_u64>(subpartition),
            channel.gate,
            channel.channel,
            static_cast<wire_u64>(initial_credit)};
  }
  static partition_request_message from_wire(const wire_refs<wire>& w) {
    return {std::get<0>(w),
            graph::job_id{std::get<1>(w), std::get<2>(w)},
            result_partition_id{graph::intermediate_data_set_id{std::get<3>(w), std::get<4>(w)},
                                std::get<5>(w)},
            static_cast<std::size_t>(std::get<6>(w)),
            input_channel_id{std::get<7>(w), std::get<8>(w)},
            static_cast<std::size_t>(std::get<9>(w))};
  }
};

/// Server → consumer: one buffer or event for `channel`, as bytes (across processes). `bytes`
/// views the sender's buffer while sending and the received message while it is handled.
/// `backlog` is the number of data buffers still queued behind it; `sequence` numbers the
/// responses of a channel from 0. Flink's BufferResponse.
///
/// On the wire it is one byte vector after the atom: the payload, then a header of fixed size
/// (gate, channel, sequence, backlog, kind; little-endian). CAF 0.17 writes each element of a
/// message with its type's name and reads it back into an object of its own, looked up by that
/// name (a string search, an allocation, a virtual load): six header elements cost bare CAF
/// messages of the same bytes 5-10% of their rate (flint-bench exchange, alternated), and the
/// channel sends one such message per buffer.
struct buffer_message {
  using atom = buffer_atom;
  static constexpr std::string_view name = "buffer";
  using wire = std::tuple<std::vector<char>>;
  /// Where the bytes are in the CAF message (after the atom): a receiver that holds the message
  /// alone may take them (and cut the header off: the payload is `bytes`' size).
  static constexpr std::size_t bytes_index = 1;
  /// The header behind the payload: gate, channel (4 bytes each), sequence, backlog (8 each),
  /// kind (1).
  static constexpr std::size_t header_size = 4 + 4 + 8 + 8 + 1;

  input_channel_id channel;
  std::uint64_t sequence = 0;
  std::uint64_t backlog = 0;
  wire_kind kind = 0;
  std::span<const char> bytes;

  wire to_wire() const {
    std::vector<char> out;
    out.reserve(bytes.size() + header_size);
    out.assign(bytes.begin(), bytes.end());
    out.resize(bytes.size() + header_size);
    char* at = out.data() + bytes.size();
    at = put(at, channel.gate, 4);
    at = put(at, channel.channel, 4);
    at = put(at, sequence, 8);
    at = put(at, backlog, 8);
    put(at, kind, 1);
    return {std::move(out)};
  }
  /// Why `w` is no buffer message (its vector cannot hold the header), or nothing.
  static std::optional<std::string> invalid(const wire_refs<wire>& w) {
    if (std::get<0>(w).size() < header_size)
      return "the bytes (" + std::to_string(std::get<0>(w).size())
        + ") are shorter than the buffer header (" + std::to_string(header_size) + ")";
    return std::nullopt;
  }
  /// Only after `invalid` found nothing (as from_message does); a vector too short for the
  /// header still reads as an empty message of kind 0 rather than out of bounds.
  static buffer_message from_wire(const wire_refs<wire>& w) {
    const auto& b = std::get<0>(w);
    if (b.size() < header_size)
      return {};
    auto payload = b.size() - header_size;
    const char* at = b.data() + payload;
    buffer_message out;
    out.channel = input_channel_id{static_cast<std::uint32_t>(get(at, 4)),
                                   static_cast<std::uint32_t>(get(at + 4, 4))};
    out.sequence = get(at + 8, 8);
    out.backlog = get(at + 16, 8);
    out.kind = static_cast<wire_kind>(get(at + 24, 1));
    out.bytes = std::span<const char>(b.data(), payload);
    return out;
  }

private:
  static char* put(char* at, std::uint64_t value, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i)
      at[i] = static_cast<char>((value >> (8 * i)) & 0xff);
    return at + n;
  }
  static std::uint64_t get(const char* at, std::size_t n) noexcept {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < n; ++i)
      value |= static_cast<std::uint64_t>(static_cast<unsigned char>(at[i])) << (8 * i);
    return value;
  }
};

/// Server → consumer of the same process: the producer's buffer itself (no copy).
struct local_buffer_message {
  using atom = local_buffer_atom;
  static constexpr std::string_view name = "local buffer";
  using wire = std::tuple<wire_u32, wire_u32, wire_u64, wire_u64, shared_buffer>;

  input_channel_id channel;
  std::uint64_t sequence = 0;
  std::uint64_t backlog = 0;
  shared_buffer holder;

  wire to_wire() const { return {channel.gate, channel.channel, sequence, backlog, holder}; }
  static local_buffer_message from_wire(const wire_refs<wire>& w) {
    return {input_channel_id{std::get<0>(w), std::get<1>(w)}, std::get<2>(w), std::get<3>(w),
            std::get<4>(w)};
  }
};

/// Consumer → server: `credit` more buffers are free for `channel` of `consumer`. Flink's AddCredit.
struct add_credit_message {
  using atom = add_credit_atom;
  static constexpr std::string_view name = "add credit";
  using wire = std::tuple<caf::actor, wire_u32, wire_u32, wire_u64>;

  caf::actor consumer;
  input_channel_id channel;
  std::uint64_t credit = 0;

  wire to_wire() const { return {consumer, channel.gate, channel.channel, credit}; }
  static add_credit_message from_wire(const wire_refs<wire>& w) {
    return {std::get<0>(w), input_channel_id{std::get<1>(w), std::get<2>(w)}, std::get<3>(w)};
  }
};

/// Server → consumer: the request of `channel` was refused with `code` (an errc) and `text`.
/// Flink's ErrorResponse.
struct partition_error_message {
  using atom = partition_error_atom;
  static constexpr std::string_view name = "partition error";
  using wire = std::tuple<wire_u32, wire_u32, wire_i32, std::string>;

  input_channel_id channel;
  wire_i32 code = 0;
  std::string text;

  wire to_wire() const { return {channel.gate, channel.channel, code, text}; }
  static partition_error_message from_wire(const wire_refs<wire>& w) {
    return {input_channel_id{std::get<0>(w), std::get<1>(w)}, std::get<2>(w), std::get<3>(w)};
  }
};

/// Consumer → server: drop the reader of `channel` (the consumer released it early); the server
/// counts the subpartition consumed even when it never served it. Flink's CancelPartitionRequest.
struct cancel_request_message {
  using atom = cancel_request_atom;
  static constexpr std::string_view name = "cancel request";
  using wire = std::tuple<caf::actor, wire_u32, wire_u32, wire_u64, wire_u64, wire_u64, wire_u64,
                          wire_i32, wire_u64>;

  caf::actor consumer;
  input_channel_id channel;
  graph::job_id job;
  result_partition_id partition;
  std::size_t subpartition = 0;

  wire to_wire() const {
    return {consumer,
            channel.gate,
            channel.channel,
            job.upper(),
            job.lower(),
            partition.result.upper(),
            partition.result.lower(),
            static_cast<wire_i32>(partition.partition_number),
            static_cast<wire_u64>(subpartition)};
  }
  static cancel_request_message from_wire(const wire_refs<wire>& w) {
    return {std::get<0>(w), input_channel_id{std::get<1>(w), std::get<2>(w)},
            graph::job_id{std::get<3>(w), std::get<4>(w)},
            result_partition_id{graph::intermediate_data_set_id{std::get<5>(w), std::get<6>(w)},
                                std::get<7>(w)},
            static_cast<std::size_t>(std::get<8>(w))};
  }
};

/// Consumer → itself: the back-off of a refused partition request of `channel` elapsed.
struct retry_request_message {
  using atom = retry_request_atom;
  static constexpr std::string_view name = "retry request";
  using wire = std::tuple<wire_u32, wire_u32>;

  input_channel_id channel;

  wire to_wire() const { return {channel.gate, channel.channel}; }
  static retry_request_message from_wire(const wire_refs<wire>& w) {
    return {input_channel_id{std::get<0>(w), std::get<1>(w)}};
  }
};

namespace detail {

template <class Wire>
struct wire_layout;
template <class... Ts>
struct wire_layout<std::tuple<Ts...>> {
  template <class Atom>
  static bool matches(const caf::type_erased_tuple& content) noexcept {
    return content.match_elements<Atom, Ts...>();
  }
  template <std::size_t... Is>
  static std::tuple<const Ts&...> refs(const caf::type_erased_tuple& content,
                                       std::index_sequence<Is...>) {
    return std::tuple<const Ts&...>{content.template get_as<Ts>(Is + 1)...};
  }
};

/// The name of a wire element type in describe_layout.
template <class T>
constexpr std::string_view wire_name() {
  if constexpr (std::is_same_v<T, caf::actor>)
    return "actor";
  else if constexpr (std::is_same_v<T, wire_u64>)
    return "u64";
  else if constexpr (std::is_same_v<T, wire_u32>)
    return "u32";
  else if constexpr (std::is_same_v<T, wire_i32>)
    return "i32";
  else if constexpr (std::is_same_v<T, wire_kind>)
    return "u8";
  else if constexpr (std::is_same_v<T, std::string>)
    return "string";
  else if constexpr (std::is_same_v<T, std::vector<char>>)
    return "bytes";
  else
    return "shared_buffer";
}
template <class... Ts>
std::vector<std::string_view> wire_names(std::tuple<Ts...>*) {
  return {wire_name<Ts>()...};
}
/// The error of a message that is not a well-formed `name` message.
error malformed(std::string_view name, caf::atom_value atom,
                const std::vector<std::string_view>& fields, const caf::type_erased_tuple& content);

} // namespace detail

/// The atom a message starts with, if it starts with one.
std::optional<caf::atom_value> leading_atom(const caf::type_erased_tuple& content) noexcept;

/// Whether `content` starts with the atom of `Msg` (well-formed or not).
template <class Msg>
bool is_message(const caf::type_erased_tuple& content) noexcept {
  return leading_atom(content) == Msg::atom::value;
}

/// Reads a `Msg` from `content`; errc::malformed_message naming the expected and the received
/// layout when it is not one (another atom, wrong arity or element types).
template <class Msg>
expected<Msg> from_message(const caf::type_erased_tuple& content) {
  using layout = detail::wire_layout<typename Msg::wire>;
  if (!layout::template matches<typename Msg::atom>(content))
    return detail::malformed(Msg::name, Msg::atom::value,
                             detail::wire_names(static_cast<typename Msg::wire*>(nullptr)),
                             content);
  auto refs =
    layout::refs(content, std::make_index_sequence<std::tuple_size_v<typename Msg::wire>>{});
  // A layout that matches may still not hold a message (buffer_message: bytes too short).
  if constexpr (requires { Msg::invalid(refs); })
    if (auto reason = Msg::invalid(refs))
      return make_error(errc::malformed_message,
                        "malformed " + std::string(Msg::name) + " message: " + *reason);
  return Msg::from_wire(refs);
}

/// `msg` as a CAF message: its atom, then the elements of its wire tuple.
template <class Msg>
caf::message to_message(const Msg& msg) {
  return std::apply(
    [](auto&&... xs) { return caf::make_message(Msg::atom::value, std::move(xs)...); },
    msg.to_wire());
}

/// Sends `msg` to `to` without a sender.
template <class Msg>
void send(const caf::actor& to, const Msg& msg) {
  std::apply([&](auto&&... xs) { caf::anon_send(to, Msg::atom::value, std::move(xs)...); },
             msg.to_wire());
}

/// Sends `msg` from the actor `self`.
template <class Self, class Msg>
void send_from(Self* self, const caf::actor& to, const Msg& msg) {
  std::apply([&](auto&&... xs) { self->send(to, Msg::atom::value, std::move(xs)...); },
             msg.to_wire());
}

/// Sends `msg` to `to` after `delay` (the actor's clock: the test coordinator drives it).
template <class Msg>
void delayed_send(const caf::actor& to, std::chrono::milliseconds delay, const Msg& msg) {
  std::apply(
    [&](auto&&... xs) { caf::delayed_anon_send(to, delay, Msg::atom::value, std::move(xs)...); },
    msg.to_wire());
}

} // namespace flint::network::transport

// Never serialized: the server sends it only to actors of its own node.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(flint::network::transport::shared_buffer)
