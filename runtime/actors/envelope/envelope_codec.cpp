#include "runtime/actors/envelope/envelope.hpp"

#include "schemas/codec_support.hpp"
#include "schemas/rpc.capnp.h"

namespace flint::rpc {

void write_envelope_header(std::vector<char>& out, const envelope& header,
                           std::size_t payload_size) {
  // The header is a few words plus two short texts: a zeroed buffer on the stack serves as its
  // only segment, so writing it allocates nothing but `out`.
  constexpr unsigned scratch_words = 32;
  capnp::word scratch[scratch_words] = {};
  capnp::MallocMessageBuilder message(kj::arrayPtr(scratch, scratch_words));
  auto root = message.initRoot<schema::Envelope>();
  root.setMethodId(header.method_id);
  auto token = root.initToken();
  token.setHi(header.token.hi);
  token.setLo(header.token.lo);
  if (!header.fencing_scope.empty())
    root.setFencingScope(wire::as_text(header.fencing_scope));
  auto trace = root.initTrace();
  trace.setTraceId(header.trace.trace_id);
  trace.setSpanId(header.trace.span_id);
  trace.setParentSpanId(header.trace.parent_span_id);
  root.setSender(wire::as_text(header.sender));
  wire::append_bytes(out, message, payload_size);
}

std::vector<char> encode_envelope(const envelope& e) {
  std::vector<char> out;
  write_envelope_header(out, e, e.payload.size());
  out.insert(out.end(), e.payload.begin(), e.payload.end());
  return out;
}

expected<received_envelope> read_envelope(std::span<const char> bytes) {
  // The header is whole words; the request after it is the handler's to judge.
  if (bytes.size() < sizeof(capnp::word))
    return make_error(errc::malformed_message,
                      "rpc envelope: " + std::to_string(bytes.size())
                        + " bytes is not a whole Cap'n Proto message");
  try {
    wire::aligned_words storage(bytes);
    capnp::FlatArrayMessageReader reader(storage.words(),
                                         wire::reader_options(storage.words().size()));
    auto root = reader.getRoot<schema::Envelope>();
    received_envelope e;
    auto& h = e.header;
    h.method_id = root.getMethodId();
    h.token = {root.getToken().getHi(), root.getToken().getLo()};
    h.fencing_scope = wire::text(root.getFencingScope());
    h.trace = {root.getTrace().getTraceId(), root.getTrace().getSpanId(),
               root.getTrace().getParentSpanId()};
    h.sender = wire::text(root.getSender());
    auto header_bytes = (reader.getEnd() - storage.words().begin()) * sizeof(capnp::word);
    e.payload = bytes.subspan(header_bytes);
    return e;
  } catch (const kj::Exception& ex) {
    return make_error(errc::malformed_message,
                      std::string("rpc envelope: ") + ex.getDescription().cStr());
  }
}

expected<envelope> decode_envelope(std::span<const char> bytes) {
  auto received = read_envelope(bytes);
  if (!received)
    return received.error();
  auto e = std::move(received->header);
  e.payload.assign(received->payload.begin(), received->payload.end());
  return e;
}

} // namespace flint::rpc
