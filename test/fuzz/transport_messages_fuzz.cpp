// libFuzzer target: the data-transport messages of remote channels
// (runtime/network/transport/transport_messages). The input is a CAF message as a peer's
// middleman sends it (caf::binary_serializer); it is deserialized as the receiving middleman
// does, then read as every kind a consumer or a partition request server accepts, and a
// buffer message's bytes as the event they may carry.

#include "runtime/network/checkpoint_barrier.hpp"
#include "runtime/network/transport/transport_messages.hpp"
#include "test/fuzz/fuzz_input.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>

namespace {

namespace transport = flint::network::transport;

caf::actor_system& actor_system() {
  // One system for the whole run (no middleman: a remote actor handle cannot become a proxy).
  static caf::actor_system_config config;
  static caf::actor_system system{config};
  return system;
}

template <class Msg>
void read_as(const caf::type_erased_tuple& content) {
  (void)transport::is_message<Msg>(content);
  (void)transport::from_message<Msg>(content);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto bytes = flint::fuzz::as_chars(data, size);
  caf::message msg;
  caf::binary_deserializer source{actor_system(), bytes.data(), bytes.size()};
  if (source(msg))
    return 0;
  const auto& content = msg.content();
  (void)transport::leading_atom(content);
  read_as<transport::partition_request_message>(content);
  read_as<transport::add_credit_message>(content);
  read_as<transport::partition_error_message>(content);
  read_as<transport::cancel_request_message>(content);
  read_as<transport::retry_request_message>(content);
  if (auto buffer = transport::from_message<transport::buffer_message>(content)) {
    // What the consumer's channel builds from the bytes of an event.
    if (buffer->kind
        == static_cast<transport::wire_kind>(flint::network::buffer_kind::checkpoint_barrier))
      (void)flint::network::barrier_of(flint::network::buffer::unpooled_copy(
        buffer->bytes, flint::network::buffer_kind::checkpoint_barrier));
  }
  return 0;
}
