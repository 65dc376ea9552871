#include "runtime/network/transport/network_router.hpp"

#include "runtime/network/transport/remote_channel_client.hpp"
#include "runtime/network/transport/transport_messages.hpp"

#include <caf/system_messages.hpp>

namespace flint::network::transport {

namespace {

/// Parses a `Msg` and hands it to `deliver`; a malformed one goes to `malformed`.
template <class Msg, class Deliver, class Malformed>
bool parse_and(const caf::type_erased_tuple& content, Deliver&& deliver, Malformed&& malformed) {
  auto msg = from_message<Msg>(content);
  if (!msg)
    malformed(std::move(msg.error()));
  else
    deliver(*msg);
  return true;
}

} // namespace

bool route_to_consumer(caf::type_erased_tuple& content, consumer_routes& to) {
  if (content.match_elements<caf::down_msg>()) {
    to.server_down(content.get_as<caf::down_msg>(0));
    return true;
  }
  auto atom = leading_atom(content);
  if (!atom)
    return false;
  auto fail = [&](error cause) { to.fail(std::move(cause)); };
  auto after = [&](const expected<unit>& ok) {
    if (!ok)
      to.fail(ok.error());
  };
  switch (static_cast<std::uint64_t>(*atom)) {
    case buffer_atom::uint_value():
      return parse_and<buffer_message>(
        content,
        [&](const buffer_message& msg) {
          auto* client = to.client_of(msg.channel);
          if (!client)
            return;
          if (content.shared()) {
            // Someone else holds the message too: read its bytes in place.
            after(client->on_buffer(msg));
            return;
          }
          // The message is ours alone: its bytes are handed over, not copied (msg.bytes views
          // them and is not read again), the header behind the payload cut off (no copy).
          auto& bytes = content.get_mutable_as<std::vector<char>>(buffer_message::bytes_index);
          bytes.resize(msg.bytes.size());
          after(client->on_buffer(msg, std::move(bytes)));
        },
        fail);
    case local_buffer_atom::uint_value():
      // A holder dropped here returns the producer's buffer to its pool.
      return parse_and<local_buffer_message>(
        content,
        [&](const local_buffer_message& msg) {
          if (auto* client = to.client_of(msg.channel))
            after(client->on_local_buffer(msg));
        },
        fail);
    case partition_error_atom::uint_value():
      return parse_and<partition_error_message>(
        content,
        [&](const partition_error_message& msg) {
          // Not found: retried after Flink's back-off; anything else, or the back-off used up, fails.
          if (auto* client = to.client_of(msg.channel))
            if (auto delay = client->on_partition_error(msg); !delay)
              to.fail(delay.error());
        },
        fail);
    case retry_request_atom::uint_value():
      return parse_and<retry_request_message>(
        content,
        [&](const retry_request_message& msg) {
          if (auto* client = to.client_of(msg.channel); client && to.is_reading(msg.channel))
            client->retry();
        },
        fail);
    default: return false;
  }
}

bool route_to_server(caf::type_erased_tuple& content, server_routes& to) {
  auto atom = leading_atom(content);
  if (!atom)
    return false;
  auto malformed = [&](error cause) { to.on_malformed(std::move(cause)); };
  switch (static_cast<std::uint64_t>(*atom)) {
    case partition_request_atom::uint_value():
      return parse_and<partition_request_message>(
        content, [&](const partition_request_message& msg) { to.on_request(msg); }, malformed);
    case add_credit_atom::uint_value():
      return parse_and<add_credit_message>(
        content, [&](const add_credit_message& msg) { to.on_credit(msg); }, malformed);
    case cancel_request_atom::uint_value():
      return parse_and<cancel_request_message>(
        content, [&](const cancel_request_message& msg) { to.on_cancel(msg); }, malformed);
    default: return false;
  }
}

} // namespace flint::network::transport
