#include "runtime/actors/rpc/envelope.hpp"

#include "schemas/codec_support.hpp"
#include "schemas/rpc.capnp.h"

namespace flint::rpc {

std::vector<char> encode_envelope(const envelope& e) {
  capnp::MallocMessageBuilder message(24 + (e.sender.size() + e.fencing_scope.size() + e.payload.size()) / sizeof(capnp::word));
  auto root = message.initRoot<schema::Envelope>();
  root.setMethodId(e.method_id);
  auto token = root.initToken();
  token.setHi(e.token.hi);
  token.setLo(e.token.lo);
  if (!e.fencing_scope.empty())
    root.setFencingScope(e.fencing_scope);
  auto trace = root.initTrace();
  trace.setTraceId(e.trace.trace_id);
  trace.setSpanId(e.trace.span_id);
  trace.setParentSpanId(e.trace.parent_span_id);
  root.setSender(e.sender);
  root.setPayload(kj::arrayPtr(reinterpret_cast<const kj::byte*>(e.payload.data()),
                               e.payload.size()));
  return wire::to_bytes(message);
}

expected<envelope> decode_envelope(std::span<const char> bytes) {
  return wire::read<schema::Envelope>(
    bytes, "rpc envelope", [](schema::Envelope::Reader root) -> expected<envelope> {
      envelope e;
      e.method_id = root.getMethodId();
      e.token = {root.getToken().getHi(), root.getToken().getLo()};
      e.fencing_scope = root.getFencingScope().cStr();
      e.trace = {root.getTrace().getTraceId(), root.getTrace().getSpanId(),
                 root.getTrace().getParentSpanId()};
      e.sender = root.getSender().cStr();
      auto payload = root.getPayload();
      e.payload.assign(reinterpret_cast<const char*>(payload.begin()),
                       reinterpret_cast<const char*>(payload.end()));
      return e;
    });
}

std::vector<char> encode_reply(const expected<std::vector<char>>& reply) {
  // A size hint: the default first segment is 8 KiB of zeroed memory per reply.
  capnp::MallocMessageBuilder message(8 + (reply ? reply->size() : 64) / sizeof(capnp::word));
  auto root = message.initRoot<schema::Reply>();
  if (reply) {
    root.setOk(kj::arrayPtr(reinterpret_cast<const kj::byte*>(reply->data()), reply->size()));
  } else {
    auto err = root.initError();
    err.setCode(static_cast<std::uint8_t>(reply.error().code));
    err.setMessage(reply.error().message);
  }
  return wire::to_bytes(message);
}

expected<std::vector<char>> decode_reply(std::span<const char> bytes) {
  return wire::read<schema::Reply>(
    bytes, "rpc reply", [](schema::Reply::Reader root) -> expected<std::vector<char>> {
      if (root.isError()) {
        auto err = root.getError();
        auto code = err.getCode();
        if (code == 0 || code > static_cast<std::uint8_t>(errc::internal))
          return make_error(errc::malformed_message,
                            "rpc reply: unknown error code " + std::to_string(code));
        return make_error(static_cast<errc>(code), err.getMessage().cStr());
      }
      auto ok = root.getOk();
      return std::vector<char>(reinterpret_cast<const char*>(ok.begin()),
                               reinterpret_cast<const char*>(ok.end()));
    });
}

} // namespace flint::rpc
