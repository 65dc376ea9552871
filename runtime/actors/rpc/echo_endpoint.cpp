#include "runtime/actors/rpc/echo_endpoint.hpp"

#include "runtime/actors/rpc/byte_buffers.hpp"
#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/rpc/flat_message.hpp"
#include "schemas/echo.capnp.h"

namespace flint::rpc {

namespace {

// EchoRequest and EchoResponse as laid out by Cap'n Proto (schemas/echo.capnp): no data words;
// pointers text @0, data @1 (and responder @2). flat_message_test checks these against the
// generated readers and builders.
constexpr unsigned text_field = 0, data_field = 1, responder_field = 2;
static_assert(schema::EchoRequest::_capnpPrivate::dataWordSize == 0
              && schema::EchoRequest::_capnpPrivate::pointerCount == 2);
static_assert(schema::EchoResponse::_capnpPrivate::dataWordSize == 0
              && schema::EchoResponse::_capnpPrivate::pointerCount == 3);

} // namespace

echo_endpoint::echo_endpoint(caf::actor_config& cfg, endpoint_context ctx, fencing_token token)
  : rpc_endpoint(cfg, std::move(ctx)),
    initial_token_(token) {}

void echo_endpoint::on_start() {
  set_token(initial_token_);
  // Read in place, word by word (flat_message.hpp): the text and data go from the request's
  // bytes to the response's with no decoded echo_request, no Cap'n Proto reader or builder in
  // between (the benchmark's hot path). The answer is the bytes the generated codec writes.
  handle_in_place<echo_method>(fencing::fenced, [this](std::span<const char> bytes) {
    return flat::read_struct(
      bytes, "echo request", [&](const flat::struct_view& req) -> expected<std::vector<char>> {
        ++served_;
        auto text = req.text(text_field);
        auto data = req.data(data_field);
        const auto& responder = endpoint_id();
        std::vector<char> out = detail::thread_byte_buffers().take(); // an earlier call's buffer
        flat::struct_writer b(out, 0, 3, text.size() + data.size() + responder.size() + 24);
        b.text(text_field, text);
        b.data(data_field, data);
        b.text(responder_field, responder);
        b.finish();
        return out;
      });
  });
}

} // namespace flint::rpc
