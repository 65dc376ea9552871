#include "runtime/actors/heartbeat/heartbeat_gateway.hpp"

#include "schemas/codec_support.hpp"
#include "schemas/heartbeat.capnp.h"

namespace flint::rpc {

std::vector<char> codec<heartbeat::heartbeat_request>::encode(const heartbeat::heartbeat_request& x) {
  capnp::MallocMessageBuilder message(16 + (x.origin.size() + x.data.size()) / 8);
  auto root = message.initRoot<schema::HeartbeatRequest>();
  root.setOrigin(x.origin);
  root.setPayload(kj::ArrayPtr<const kj::byte>(reinterpret_cast<const kj::byte*>(x.data.data()),
                                               x.data.size()));
  return wire::to_bytes(message);
}

expected<heartbeat::heartbeat_request>
codec<heartbeat::heartbeat_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::HeartbeatRequest>(
    bytes, "heartbeat request",
    [](schema::HeartbeatRequest::Reader r) -> expected<heartbeat::heartbeat_request> {
      auto data = r.getPayload();
      return heartbeat::heartbeat_request{
        r.getOrigin().cStr(),
        {reinterpret_cast<const char*>(data.begin()), reinterpret_cast<const char*>(data.end())}};
    });
}

} // namespace flint::rpc
