#include "runtime/actors/rpc/gateway.hpp"

#include <caf/all.hpp>

#include "runtime/actors/rpc/envelope.hpp"
#include "runtime/actors/rpc/rpc_atoms.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::rpc {

namespace {

std::string describe(std::chrono::nanoseconds d) {
  using namespace std::chrono;
  if (d % seconds(1) == nanoseconds(0))
    return std::to_string(duration_cast<seconds>(d).count()) + " s";
  return std::to_string(duration_cast<milliseconds>(d).count()) + " ms";
}

error from_caf(const caf::error& err, const char* method, const std::string& target,
               std::chrono::nanoseconds timeout) {
  if (err == caf::sec::request_timeout)
    return make_error(errc::timeout, std::string("ask ") + method + " to " + target
                                       + " timed out after " + describe(timeout)
                                       + " (rpc.ask.timeout)");
  return make_error(errc::unreachable, std::string("ask ") + method + " to " + target
                                         + " failed: " + caf::to_string(err));
}

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

/// The envelope and its trace record for one outgoing call.
struct outgoing {
  envelope env;
  std::vector<char> bytes;
};

outgoing make_outgoing(const gateway& gw, trace::trace_recorder* rec, const std::string& sender,
                       const trace_context& parent, std::uint32_t method_id,
                       std::vector<char> payload) {
  outgoing out;
  out.env.method_id = method_id;
  out.env.token = gw.token();
  out.env.fencing_scope = gw.fencing_scope();
  out.env.sender = sender;
  if (rec != nullptr) {
    out.env.trace.trace_id = parent.trace_id != 0 ? parent.trace_id : rec->next_id();
    out.env.trace.span_id = rec->next_id();
    out.env.trace.parent_span_id = parent.span_id;
  }
  out.env.payload = std::move(payload);
  out.bytes = encode_envelope(out.env);
  return out;
}

void record(trace::trace_recorder* rec, trace::direction dir, const envelope& env,
            const std::string& to, const char* method, bool is_ask, std::size_t bytes,
            trace::outcome result, std::int64_t latency_us, std::string detail) {
  if (rec == nullptr)
    return;
  trace::record r;
  r.dir = dir;
  r.from = env.sender;
  r.to = to;
  r.method = method;
  r.token = env.token;
  r.trace = env.trace;
  r.is_ask = is_ask;
  r.bytes = static_cast<std::uint32_t>(bytes);
  r.result = result;
  r.latency_us = latency_us;
  r.detail = std::move(detail);
  rec->record_event(std::move(r));
}

/// Records the answer of an ask and turns reply bytes into the method's payload bytes.
expected<std::vector<char>> finish(trace::trace_recorder* rec, const envelope& env,
                                   const std::string& target, const char* method,
                                   std::int64_t sent_us, expected<std::vector<char>> reply,
                                   std::size_t reply_bytes) {
  if (rec != nullptr) {
    auto latency = rec->now_us() - sent_us;
    if (reply)
      record(rec, trace::direction::response, env, target, method, true, reply_bytes,
             trace::outcome::ok, latency, {});
    else
      record(rec, trace::direction::response, env, target, method, true, reply_bytes,
             outcome_of(reply.error()), latency, reply.error().message);
  }
  return reply;
}

} // namespace

gateway::gateway(caf::actor target, std::string target_id, fencing_token token,
                 std::string fencing_scope)
  : target_(std::move(target)),
    target_id_(std::move(target_id)),
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

void gateway::ask_raw(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                      std::vector<char> payload,
                      std::optional<std::chrono::nanoseconds> timeout,
                      std::function<void(expected<std::vector<char>>)> k) const {
  auto* rec = self.recorder();
  auto out = make_outgoing(*this, rec, self.endpoint_id(), self.current_trace(), method_id,
                           std::move(payload));
  auto wait = timeout.value_or(self.rpc_settings().ask_timeout);
  auto sent_us = rec != nullptr ? rec->now_us() : 0;
  if (!valid()) {
    record(rec, trace::direction::send, out.env, target_id_, method_name, true,
           out.bytes.size(), trace::outcome::unreachable, -1, "no target");
    k(make_error(errc::unreachable, std::string("ask ") + method_name + ": gateway to "
                                      + target_id_ + " has no target"));
    return;
  }
  record(rec, trace::direction::send, out.env, target_id_, method_name, true, out.bytes.size(),
         trace::outcome::ok, -1, {});
  auto env = std::make_shared<envelope>(std::move(out.env));
  env->payload.clear(); // only the header is needed to record the answer
  self.request(target_, wait, ask_atom::value, std::move(out.bytes))
    .then(
      [rec, env, target = target_id_, method_name, sent_us, k](std::vector<char>& bytes) {
        k(finish(rec, *env, target, method_name, sent_us, decode_reply(bytes), bytes.size()));
      },
      [rec, env, target = target_id_, method_name, sent_us, wait, k](caf::error& err) {
        k(finish(rec, *env, target, method_name, sent_us,
                 from_caf(err, method_name, target, wait), 0));
      });
}

void gateway::tell_raw(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                       std::vector<char> payload) const {
  auto* rec = self.recorder();
  auto out = make_outgoing(*this, rec, self.endpoint_id(), self.current_trace(), method_id,
                           std::move(payload));
  if (!valid()) {
    record(rec, trace::direction::send, out.env, target_id_, method_name, false,
           out.bytes.size(), trace::outcome::unreachable, -1, "no target");
    return;
  }
  record(rec, trace::direction::send, out.env, target_id_, method_name, false, out.bytes.size(),
         trace::outcome::ok, -1, {});
  self.send(target_, tell_atom::value, std::move(out.bytes));
}

expected<std::vector<char>> gateway::ask_raw_blocking(caf::blocking_actor& self,
                                                      const client_identity& who,
                                                      std::uint32_t method_id,
                                                      const char* method_name,
                                                      std::vector<char> payload) const {
  auto out = make_outgoing(*this, who.recorder, who.id, {}, method_id, std::move(payload));
  if (!valid())
    return make_error(errc::unreachable, std::string("ask ") + method_name + ": gateway to "
                                           + target_id_ + " has no target");
  auto* rec = who.recorder;
  auto sent_us = rec != nullptr ? rec->now_us() : 0;
  record(rec, trace::direction::send, out.env, target_id_, method_name, true, out.bytes.size(),
         trace::outcome::ok, -1, {});
  std::optional<expected<std::vector<char>>> result;
  std::size_t reply_bytes = 0;
  self.request(target_, who.ask_timeout, ask_atom::value, std::move(out.bytes))
    .receive(
      [&](std::vector<char>& bytes) {
        reply_bytes = bytes.size();
        result.emplace(decode_reply(bytes));
      },
      [&](caf::error& err) { result.emplace(from_caf(err, method_name, target_id_, who.ask_timeout)); });
  return finish(rec, out.env, target_id_, method_name, sent_us, std::move(*result), reply_bytes);
}

} // namespace flint::rpc
