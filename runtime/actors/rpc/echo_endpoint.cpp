#include "runtime/actors/rpc/echo_endpoint.hpp"

#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/rpc/in_place.hpp"
#include "schemas/echo.capnp.h"

namespace flint::rpc {

echo_endpoint::echo_endpoint(caf::actor_config& cfg, endpoint_context ctx, fencing_token token)
  : rpc_endpoint(cfg, std::move(ctx)),
    initial_token_(token) {}

void echo_endpoint::on_start() {
  set_token(initial_token_);
  // Read in place: the text and data go from the request's bytes to the response's without a
  // decoded echo_request in between (the benchmark's hot path).
  handle_in_place<echo_method>(fencing::fenced, [this](std::span<const char> bytes) {
    return read_in_place<schema::EchoRequest>(
      bytes, "echo request", [&](schema::EchoRequest::Reader req) -> expected<std::vector<char>> {
        ++served_;
        auto text = req.getText();
        auto data = req.getData();
        const auto& responder = endpoint_id();
        auto words = wire::small_message_words + (text.size() + data.size() + responder.size()) / 8;
        return build_in_place<schema::EchoResponse>(words, [&](schema::EchoResponse::Builder b) {
          b.setText(text);
          b.setData(data);
          b.setResponder(wire::as_text(responder));
        });
      });
  });
}

} // namespace flint::rpc
