#pragma once
/// Delivers the data-transport messages an actor received (transport_messages.hpp) to whom they
/// are for: the remote channels of a consuming task, or a partition request server. The one place
/// that reads them; handlers get named messages, never positional elements.

#include "runtime/common/expected.hpp"
#include "runtime/network/network_messages.hpp"

#include <caf/fwd.hpp>

namespace flint::network::transport {

class remote_channel_client;
struct partition_request_message;
struct add_credit_message;
struct cancel_request_message;

/// A consuming task's remote channels, as the router reaches them (the task's thread only).
class consumer_routes {
public:
  virtual ~consumer_routes() = default;
  /// The client of `channel`; null when it has none (a local, released or unknown channel): its
  /// messages are dropped.
  virtual remote_channel_client* client_of(const input_channel_id& channel) = 0;
  /// Whether `channel` still reads its partition (a retry for an ended one is dropped).
  virtual bool is_reading(const input_channel_id& channel) const = 0;
  /// The channels cannot go on: a client refused a buffer, a request was refused for good, or a
  /// message was malformed.
  virtual void fail(error cause) = 0;
  /// A monitored partition request server is gone.
  virtual void server_down(const caf::down_msg& down) = 0;
};

/// Routes `content`, a message the consumer's actor has no handler for: a buffer, local buffer,
/// partition error or retry goes to the client of its (gate, channel), a `caf::down_msg` to
/// server_down. True when it was one of these (delivered; dropped for a channel without client;
/// or malformed, and then `to.fail` got the reason); false when it is none of them. A buffer
/// message that `content` holds alone (not shared) gives its bytes away: its vector is left empty.
bool route_to_consumer(caf::type_erased_tuple& content, consumer_routes& to);

/// What a partition request server does with its consumers' messages (the server's thread).
class server_routes {
public:
  virtual ~server_routes() = default;
  virtual void on_request(const partition_request_message& request) = 0;
  virtual void on_credit(const add_credit_message& credit) = 0;
  virtual void on_cancel(const cancel_request_message& cancel) = 0;
  /// A message with a server atom but another layout (a peer of another version, or a bug).
  virtual void on_malformed(error cause) = 0;
};

/// Routes a partition request, add credit or cancel to `to`; true when `content` was one of them
/// (malformed ones included, given to on_malformed), false otherwise.
bool route_to_server(caf::type_erased_tuple& content, server_routes& to);

} // namespace flint::network::transport
