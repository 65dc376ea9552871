#include "runtime/actors/trace/trace_server_gateway.hpp"

#include "schemas/codec_support.hpp"
#include "schemas/trace_service.capnp.h"

namespace flint::rpc {

namespace {

using wire::as_text;
using wire::text;

/// Text fields plus fixed fields of one record, for sizing the first segment.
std::size_t approx_words(const trace::record& r) {
  return 16 + (r.from.size() + r.to.size() + r.method.size() + r.detail.size()) / 8 + 4;
}

void write_record(schema::TraceRecord::Builder b, const trace::record& r) {
  b.setSequence(r.sequence);
  b.setTimeUs(r.time_us);
  b.setDirection(static_cast<std::uint8_t>(r.dir));
  b.setFrom(as_text(r.from));
  b.setTo(as_text(r.to));
  b.setMethod(as_text(r.method));
  auto token = b.initToken();
  token.setHi(r.token.hi);
  token.setLo(r.token.lo);
  auto ctx = b.initTrace();
  ctx.setTraceId(r.trace.trace_id);
  ctx.setSpanId(r.trace.span_id);
  ctx.setParentSpanId(r.trace.parent_span_id);
  b.setIsAsk(r.is_ask);
  b.setBytes(r.bytes);
  b.setOutcome(static_cast<std::uint8_t>(r.result));
  b.setLatencyUs(r.latency_us);
  b.setDetail(as_text(r.detail));
}

expected<trace::record> read_record(schema::TraceRecord::Reader r) {
  // Enum values from another node are checked, not cast blindly.
  if (r.getDirection() > static_cast<std::uint8_t>(trace::direction::response))
    return make_error(errc::malformed_message,
                      "trace record: unknown direction " + std::to_string(r.getDirection()));
  if (r.getOutcome() > static_cast<std::uint8_t>(trace::outcome::unreachable))
    return make_error(errc::malformed_message,
                      "trace record: unknown outcome " + std::to_string(r.getOutcome()));
  trace::record out;
  out.sequence = r.getSequence();
  out.time_us = r.getTimeUs();
  out.dir = static_cast<trace::direction>(r.getDirection());
  out.from = text(r.getFrom());
  out.to = text(r.getTo());
  out.method = text(r.getMethod());
  out.token = {r.getToken().getHi(), r.getToken().getLo()};
  out.trace = {r.getTrace().getTraceId(), r.getTrace().getSpanId(),
               r.getTrace().getParentSpanId()};
  out.is_ask = r.getIsAsk();
  out.bytes = r.getBytes();
  out.result = static_cast<trace::outcome>(r.getOutcome());
  out.latency_us = r.getLatencyUs();
  out.detail = text(r.getDetail());
  return out;
}

} // namespace

std::vector<char> codec<trace::fetch_trace_request>::encode(const trace::fetch_trace_request& x) {
  capnp::MallocMessageBuilder message(wire::small_message_words);
  auto root = message.initRoot<schema::FetchTraceRequest>();
  root.setFromSequence(x.from_sequence);
  root.setMaxRecords(x.max_records);
  return wire::to_bytes(message);
}

expected<trace::fetch_trace_request>
codec<trace::fetch_trace_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::FetchTraceRequest>(
    bytes, "fetch trace request",
    [](schema::FetchTraceRequest::Reader r) -> expected<trace::fetch_trace_request> {
      return trace::fetch_trace_request{r.getFromSequence(), r.getMaxRecords()};
    });
}

std::vector<char> codec<trace::fetch_trace_response>::encode(const trace::fetch_trace_response& x) {
  std::size_t words = wire::small_message_words;
  for (const auto& r : x.records)
    words += approx_words(r);
  capnp::MallocMessageBuilder message(static_cast<unsigned>(words));
  auto root = message.initRoot<schema::FetchTraceResponse>();
  auto list = root.initRecords(static_cast<unsigned>(x.records.size()));
  for (unsigned i = 0; i < x.records.size(); ++i)
    write_record(list[i], x.records[i]);
  root.setMissed(x.missed);
  root.setNextSequence(x.next_sequence);
  root.setRecorded(x.recorded);
  return wire::to_bytes(message);
}

expected<trace::fetch_trace_response>
codec<trace::fetch_trace_response>::decode(std::span<const char> bytes) {
  return wire::read<schema::FetchTraceResponse>(
    bytes, "fetch trace response",
    [](schema::FetchTraceResponse::Reader r) -> expected<trace::fetch_trace_response> {
      trace::fetch_trace_response out;
      out.records.reserve(r.getRecords().size());
      for (auto rec : r.getRecords()) {
        auto decoded = read_record(rec);
        if (!decoded)
          return decoded.error();
        out.records.push_back(std::move(*decoded));
      }
      out.missed = r.getMissed();
      out.next_sequence = r.getNextSequence();
      out.recorded = r.getRecorded();
      return out;
    });
}

} // namespace flint::rpc
