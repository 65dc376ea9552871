#include "runtime/actors/rpc/gateway.hpp"

#include <caf/all.hpp>

#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/rpc/byte_buffers.hpp"
#include "runtime/actors/rpc/rpc_error.hpp"
#include "runtime/actors/rpc/rpc_atoms.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::rpc {

namespace {

trace::outcome outcome_of(const error& e) {
  switch (e.code) {
    case errc::fencing_token_mismatch: return trace::outcome::rejected;
    case errc::malformed_message: return trace::outcome::malformed;
    case errc::unknown_method: return trace::outcome::unknown_method;
    case errc::timeout: return trace::outcome::timeout;
    case errc::unreachable: return trace::outcome::unreachable;
    default: return trace::outcome::failed;
  }
}

/// The header and bytes of one outgoing call: the envelope, then the request right after it.
struct outgoing {
  envelope header;
  std::vector<char> bytes;
};

outgoing make_outgoing(const gateway& gw, trace::trace_recorder* rec, const std::string& sender,
                       const trace_context& parent, std::uint32_t method_id,
                       gateway::request_writer write, const void* request) {
  outgoing out;
  out.header.method_id = method_id;
  out.header.token = gw.token();
  out.header.fencing_scope = gw.fencing_scope();
  out.header.sender = sender;
  if (rec != nullptr) {
    out.header.trace.trace_id = parent.trace_id != 0 ? parent.trace_id : rec->next_id();
    out.header.trace.span_id = rec->next_id();
    out.header.trace.parent_span_id = parent.span_id;
  }
  // Into a buffer an earlier call left on this thread; most requests are small, a larger one
  // grows the vector once.
  out.bytes = detail::thread_byte_buffers().take();
  write_envelope_header(out.bytes, out.header, 256);
  write(out.bytes, request);
  return out;
}

void write_raw(std::vector<char>& out, const void* payload) {
  const auto& bytes = *static_cast<const std::vector<char>*>(payload);
  out.insert(out.end(), bytes.begin(), bytes.end());
}

/// Names of a traced event: interned ids, with the text for when there is none.
struct names {
  std::string_view from;
  trace::name_id from_name;
  std::string_view to;
  trace::name_id to_name;
  std::string_view method;
  trace::name_id method_name;
};

void record(trace::trace_recorder* rec, trace::direction dir, const envelope& env, const names& n,
            bool is_ask, std::size_t bytes, trace::outcome result, std::int64_t latency_us,
            std::string_view detail, std::int64_t time_us = 0) {
  if (rec == nullptr)
    return;
  // time_us 0: the recorder reads its clock
  rec->record_event(trace::event{.time_us = time_us,
                                 .dir = dir,
                                 .from = n.from,
                                 .to = n.to,
                                 .method = n.method,
                                 .token = env.token,
                                 .trace = env.trace,
                                 .is_ask = is_ask,
                                 .bytes = static_cast<std::uint32_t>(bytes),
                                 .result = result,
                                 .latency_us = latency_us,
                                 .detail = detail,
                                 .from_name = n.from_name,
                                 .to_name = n.to_name,
                                 .method_name = n.method_name});
}

/// The target's name for error texts.
std::string target_of(const detail::pending_ask& p) {
  return p.target_name != 0 ? std::string(trace::name_text(p.target_name)) : p.target;
}

/// Records the answer of an ask.
void record_answer(const detail::pending_ask& p, const error* failure, std::size_t reply_bytes) {
  if (p.rec == nullptr)
    return;
  auto now = p.rec->now_us();
  p.rec->record_event(trace::event{
    .time_us = now,
    .dir = trace::direction::response,
    .from = p.sender,
    .to = p.target,
    .method = p.method,
    .token = p.token,
    .trace = p.trace,
    .is_ask = true,
    .bytes = static_cast<std::uint32_t>(reply_bytes),
    .result = failure == nullptr ? trace::outcome::ok : outcome_of(*failure),
    .latency_us = now - p.sent_us,
    .detail = failure == nullptr ? std::string_view{} : std::string_view{failure->message},
    .from_name = p.sender_name,
    .to_name = p.target_name,
    .method_name = p.method_name});
}

/// The continuation of ask_raw: the reply copied out.
struct raw_pending final : detail::pending_ask {
  explicit raw_pending(std::function<void(expected<std::vector<char>>)> f) : k(std::move(f)) {}
  void complete(expected<std::span<const char>> reply) override {
    if (!reply)
      k(reply.error());
    else
      k(std::vector<char>(reply->begin(), reply->end()));
  }
  std::function<void(expected<std::vector<char>>)> k;
};

/// The continuation of ask_blocking_encoded: the caller's function, called in place.
struct blocking_pending final : detail::pending_ask {
  explicit blocking_pending(const std::function<void(expected<std::span<const char>>)>& f)
    : k(f) {}
  void complete(expected<std::span<const char>> reply) override { k(std::move(reply)); }
  const std::function<void(expected<std::span<const char>>)>& k;
};

} // namespace

void detail::time_out(pending_ask& p) {
  auto failure = from_caf_error(caf::make_error(caf::sec::request_timeout), p.method,
                                target_of(p), p.wait);
  record_answer(p, &failure, 0);
  p.complete(std::move(failure));
}

gateway::gateway(caf::actor target, std::string target_id, fencing_token token,
                 std::string fencing_scope)
  : target_(std::move(target)),
    target_id_(std::move(target_id)),
    target_name_(target_id_.empty() ? 0 : trace::intern(target_id_)),
    token_(token),
    fencing_scope_(std::move(fencing_scope)) {}

bool gateway::valid() const noexcept {
  return static_cast<bool>(target_);
}

gateway gateway::with_token(fencing_token token) const {
  auto copy = *this;
  copy.token_ = token;
  return copy;
}

gateway gateway::with_scope(std::string scope) const {
  auto copy = *this;
  copy.fencing_scope_ = std::move(scope);
  return copy;
}

void gateway::ask_encoded(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                          trace::name_id method_trace, request_writer write, const void* request,
                          std::optional<std::chrono::nanoseconds> timeout,
                          detail::pending_ref pending) const {
  auto* rec = self.recorder();
  auto out =
    make_outgoing(*this, rec, self.endpoint_id(), self.current_trace(), method_id, write, request);
  auto wait = timeout.value_or(self.rpc_settings().ask_timeout);
  auto sent_us = rec != nullptr ? rec->now_us() : 0;
  const names n{self.endpoint_id(), self.trace_name(), target_id_, target_name_, method_name,
                method_trace};
  if (!valid()) {
    record(rec, trace::direction::send, out.header, n, true, out.bytes.size(),
           trace::outcome::unreachable, -1, "no target");
    pending->complete(make_error(
      errc::unreachable,
      std::string("ask ") + method_name + ": gateway to " + target_id_ + " has no target"));
    return;
  }
  record(rec, trace::direction::send, out.header, n, true, out.bytes.size(), trace::outcome::ok,
         -1, {}, sent_us);
  auto& p = *pending;
  p.rec = rec;
  p.sender_name = self.trace_name();
  if (p.sender_name == 0)
    p.sender = std::move(out.header.sender);
  p.target_name = target_name_;
  if (p.target_name == 0)
    p.target = target_id_;
  p.method = method_name;
  p.method_name = method_trace;
  p.token = out.header.token;
  p.trace = out.header.trace;
  p.sent_us = sent_us;
  p.wait = wait;
  // No CAF time-out: the endpoint times its asks (rpc_endpoint::expire_ask_after).
  auto handle = self.request(target_, caf::infinite, ask_atom::value, std::move(out.bytes));
  auto response_id = handle.id();
  handle.then(
    [pending](std::vector<char>& bytes) {
      pending->answered = true;
      record_answer(*pending, nullptr, bytes.size());
      pending->complete(std::span<const char>(bytes));
      detail::thread_byte_buffers().give(std::move(bytes)); // the next call's bytes
    },
    [pending](caf::error& err) {
      pending->answered = true;
      auto failure = from_caf_error(err, pending->method, target_of(*pending), pending->wait);
      record_answer(*pending, &failure, 0);
      pending->complete(std::move(failure));
    });
  self.expire_ask_after(response_id, wait, std::move(pending));
}

void gateway::tell_encoded(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                           trace::name_id method_trace, request_writer write,
                           const void* request) const {
  auto* rec = self.recorder();
  auto out =
    make_outgoing(*this, rec, self.endpoint_id(), self.current_trace(), method_id, write, request);
  const names n{self.endpoint_id(), self.trace_name(), target_id_, target_name_, method_name,
                method_trace};
  if (!valid()) {
    record(rec, trace::direction::send, out.header, n, false, out.bytes.size(),
           trace::outcome::unreachable, -1, "no target");
    return;
  }
  record(rec, trace::direction::send, out.header, n, false, out.bytes.size(), trace::outcome::ok,
         -1, {});
  self.send(target_, tell_atom::value, std::move(out.bytes));
}

void gateway::ask_blocking_encoded(
  caf::blocking_actor& self, const client_identity& who, std::uint32_t method_id,
  const char* method_name, request_writer write, const void* request,
  const std::function<void(expected<std::span<const char>>)>& k) const {
  auto out = make_outgoing(*this, who.recorder, who.id, {}, method_id, write, request);
  if (!valid()) {
    k(make_error(
      errc::unreachable,
      std::string("ask ") + method_name + ": gateway to " + target_id_ + " has no target"));
    return;
  }
  auto* rec = who.recorder;
  auto sent_us = rec != nullptr ? rec->now_us() : 0;
  record(rec, trace::direction::send, out.header,
         names{who.id, 0, target_id_, target_name_, method_name, 0}, true, out.bytes.size(),
         trace::outcome::ok, -1, {}, sent_us);
  blocking_pending p(k);
  p.rec = rec;
  p.sender = who.id;
  p.target_name = target_name_;
  if (p.target_name == 0)
    p.target = target_id_;
  p.method = method_name;
  p.token = out.header.token;
  p.trace = out.header.trace;
  p.sent_us = sent_us;
  p.wait = who.ask_timeout;
  self.request(target_, who.ask_timeout, ask_atom::value, std::move(out.bytes))
    .receive(
      [&](std::vector<char>& bytes) {
        record_answer(p, nullptr, bytes.size());
        p.complete(std::span<const char>(bytes));
      },
      [&](caf::error& err) {
        auto failure = from_caf_error(err, method_name, target_id_, who.ask_timeout);
        record_answer(p, &failure, 0);
        p.complete(std::move(failure));
      });
}

void gateway::ask_raw(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                      std::vector<char> payload, std::optional<std::chrono::nanoseconds> timeout,
                      std::function<void(expected<std::vector<char>>)> k) const {
  ask_encoded(self, method_id, method_name, 0, &write_raw, &payload, timeout,
              detail::make_pending<raw_pending>(std::move(k)));
}

void gateway::tell_raw(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                       std::vector<char> payload) const {
  tell_encoded(self, method_id, method_name, 0, &write_raw, &payload);
}

expected<std::vector<char>> gateway::ask_raw_blocking(caf::blocking_actor& self,
                                                      const client_identity& who,
                                                      std::uint32_t method_id,
                                                      const char* method_name,
                                                      std::vector<char> payload) const {
  expected<std::vector<char>> result = make_error(errc::internal, "no answer");
  ask_blocking_encoded(self, who, method_id, method_name, &write_raw, &payload,
                       [&](expected<std::span<const char>> reply) {
                         if (!reply)
                           result = reply.error();
                         else
                           result = std::vector<char>(reply->begin(), reply->end());
                       });
  return result;
}

} // namespace flint::rpc
