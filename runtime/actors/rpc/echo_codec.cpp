#include "runtime/actors/rpc/echo_gateway.hpp"

#include "schemas/codec_support.hpp"
#include "schemas/echo.capnp.h"

namespace flint::rpc {

using wire::as_data;
using wire::from_data;

std::vector<char> codec<echo_request>::encode(const echo_request& x) {
  capnp::MallocMessageBuilder message(16 + x.data.size() / 8);
  auto root = message.initRoot<schema::EchoRequest>();
  root.setText(x.text);
  root.setData(as_data(x.data));
  return wire::to_bytes(message);
}

expected<echo_request> codec<echo_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::EchoRequest>(bytes, "echo request",
                                          [](schema::EchoRequest::Reader r) -> expected<echo_request> {
                                            return echo_request{r.getText().cStr(),
                                                                from_data(r.getData())};
                                          });
}

std::vector<char> codec<echo_response>::encode(const echo_response& x) {
  capnp::MallocMessageBuilder message(16 + x.data.size() / 8);
  auto root = message.initRoot<schema::EchoResponse>();
  root.setText(x.text);
  root.setData(as_data(x.data));
  root.setResponder(x.responder);
  return wire::to_bytes(message);
}

expected<echo_response> codec<echo_response>::decode(std::span<const char> bytes) {
  return wire::read<schema::EchoResponse>(
    bytes, "echo response", [](schema::EchoResponse::Reader r) -> expected<echo_response> {
      return echo_response{r.getText().cStr(), from_data(r.getData()), r.getResponder().cStr()};
    });
}

} // namespace flint::rpc
