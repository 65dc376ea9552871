#include "runtime/actors/trace_server/trace_record_codec.hpp"

#include "schemas/codec_support.hpp"

namespace flint::wire {

void put(schema::TraceRecord::Builder b, const trace::record& r) {
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
  b.setMonitoring(r.monitoring);
}

expected<unit> get(schema::TraceRecord::Reader r, trace::record& out) {
  // Enum values from another node are checked, not cast blindly.
  if (r.getDirection() > static_cast<std::uint8_t>(trace::direction::response))
    return make_error(errc::malformed_message,
                      "trace record: unknown direction " + std::to_string(r.getDirection()));
  if (r.getOutcome() > static_cast<std::uint8_t>(trace::outcome::unreachable))
    return make_error(errc::malformed_message,
                      "trace record: unknown outcome " + std::to_string(r.getOutcome()));
  out.sequence = r.getSequence();
  out.time_us = r.getTimeUs();
  out.dir = static_cast<trace::direction>(r.getDirection());
  out.from = text(r.getFrom());
  out.to = text(r.getTo());
  out.method = text(r.getMethod());
  out.token = {r.getToken().getHi(), r.getToken().getLo()};
  out.trace = {r.getTrace().getTraceId(), r.getTrace().getSpanId(), r.getTrace().getParentSpanId()};
  out.is_ask = r.getIsAsk();
  out.bytes = r.getBytes();
  out.result = static_cast<trace::outcome>(r.getOutcome());
  out.latency_us = r.getLatencyUs();
  out.detail = text(r.getDetail());
  out.monitoring = r.getMonitoring();
  return unit{};
}

} // namespace flint::wire
