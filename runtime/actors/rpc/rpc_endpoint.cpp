#include "runtime/actors/rpc/rpc_endpoint.hpp"

#include <algorithm>
#include <stdexcept>
#include <typeinfo>

#include <time.h>

#include <spdlog/logger.h>

#include <caf/actor_system.hpp>
#include <caf/all.hpp>
#include <caf/detail/thread_safe_actor_clock.hpp>

#include "runtime/actors/rpc/ask_clock.hpp"
#include "runtime/actors/rpc/byte_buffers.hpp"
#include "runtime/actors/rpc/peer_roles.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/actors/rpc/rpc_error.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::rpc {

namespace {

/// The endpoint whose actor runs on this thread right now (set around every resume).
thread_local const rpc_endpoint* current_endpoint = nullptr;

trace::outcome outcome_of(errc code) {
  switch (code) {
    case errc::fencing_token_mismatch: return trace::outcome::rejected;
    case errc::malformed_message: return trace::outcome::malformed;
    case errc::unknown_method: return trace::outcome::unknown_method;
    case errc::timeout: return trace::outcome::timeout;
    case errc::unreachable: return trace::outcome::unreachable;
    default: return trace::outcome::failed;
  }
}

} // namespace

// -- responder ------------------------------------------------------------------------------------

void responder::deliver(expected<std::vector<char>> result) const {
  if (!state_ || !state_->is_ask || state_->delivered || state_->self == nullptr)
    return;
  auto& st = *state_;
  st.delivered = true;
  if (auto* rec = st.self->recorder()) {
    auto now = rec->now_us();
    rec->record_event(trace::event{
      .time_us = now,
      .dir = trace::direction::reply,
      .from = st.self->endpoint_id(), // read only when the table of names is full
      .to = st.caller,
      .method = st.method,
      .token = st.self->token(),
      .trace = st.trace,
      .is_ask = true,
      .bytes =
        static_cast<std::uint32_t>(result ? result->size() : result.error().message.size()),
      .result = result ? trace::outcome::ok : outcome_of(result.error().code),
      .latency_us = now - st.received_us,
      .detail = result ? std::string_view{} : std::string_view{result.error().message},
      .from_name = st.self->trace_name(),
      .method_name = st.method_name});
  }
  if (st.sync_slot != nullptr) {
    st.sync_slot->emplace(std::move(result));
  } else {
    if (result)
      st.promise.deliver(std::move(*result));
    else
      st.promise.deliver(to_caf_error(result.error()));
    // A delivered promise still holds the endpoint strongly: copies of this responder kept in
    // closures must not keep a stopped endpoint alive.
    st.promise = caf::response_promise{};
  }
}

// -- rpc_endpoint ---------------------------------------------------------------------------------

rpc_endpoint::rpc_endpoint(caf::actor_config& cfg, endpoint_context ctx)
  : caf::event_based_actor(cfg),
    ctx_(std::move(ctx)),
    trace_name_(trace::intern(ctx_.endpoint_id)) {}

rpc_endpoint::~rpc_endpoint() = default;

caf::resumable::resume_result rpc_endpoint::resume(caf::execution_unit* ctx,
                                                   size_t max_throughput) {
  auto* previous = current_endpoint;
  current_endpoint = this;
  auto result = caf::event_based_actor::resume(ctx, max_throughput);
  current_endpoint = previous;
  return result;
}

bool rpc_endpoint::runs_in_main_thread() const noexcept {
  return current_endpoint == this;
}

void rpc_endpoint::validate_runs_in_main_thread() const {
  if (!runs_in_main_thread())
    throw std::logic_error("endpoint " + endpoint_id() + ": called outside its main thread");
}

void rpc_endpoint::run_async(std::function<void()> f) {
  caf::anon_send(caf::actor_cast<caf::actor>(this), run_atom::value, std::move(f));
}

void rpc_endpoint::schedule_run_async(std::function<void()> f, std::chrono::nanoseconds delay) {
  caf::delayed_anon_send(caf::actor_cast<caf::actor>(this), delay, run_atom::value, std::move(f));
}

void rpc_endpoint::call_async_impl(const caf::actor& other, std::function<void()> f,
                                   std::chrono::nanoseconds timeout,
                                   std::function<void(std::optional<error>)> k) {
  request(other, timeout, call_atom::value, std::move(f))
    .then([k]() { k(std::nullopt); },
          [k](caf::error& err) {
            if (err == caf::sec::request_timeout)
              k(make_error(errc::timeout, "call_async timed out"));
            else
              k(make_error(errc::unreachable, "call_async failed: " + caf::to_string(err)));
          });
}

void rpc_endpoint::set_token(const fencing_token& t) {
  validate_runs_in_main_thread();
  token_ = t;
}

fencing_token rpc_endpoint::expected_token(const envelope&) const {
  return token_;
}

caf::actor rpc_endpoint::caller() {
  return current_mailbox_element() != nullptr ? caf::actor_cast<caf::actor>(current_sender())
                                              : caf::actor{};
}

std::string rpc_endpoint::method_name(std::uint32_t id) const {
  if (auto i = methods_.find(id); i != methods_.end())
    return i->second.name;
  return "method#" + std::to_string(id);
}

void rpc_endpoint::add_method(std::uint32_t id, std::string name, fencing f, raw_handler h,
                              bool open_to_clients) {
  auto interned = trace::intern(name);
  methods_[id] = method_entry{std::move(name), interned, f, std::move(h), open_to_clients};
}

bool rpc_endpoint::sender_is_client() {
  if (!any_client_nodes())
    return false;
  auto* element = current_mailbox_element();
  if (element == nullptr || !element->sender)
    return false;
  const auto& node = element->sender->node();
  if (node == home_system().node())
    return false;
  return is_client_node(caf::to_string(node));
}

std::optional<expected<std::vector<char>>> rpc_endpoint::dispatch(std::vector<char>& bytes,
                                                                  bool is_ask) {
  auto* rec = recorder();
  auto received_us = rec != nullptr ? rec->now_us() : 0;
  // `method` names the call's method as registered here (or "method#<id>" when there is none).
  auto record_receive = [&](const envelope* env, std::string_view method, trace::outcome result,
                            std::string_view detail, trace::name_id method_name = 0) {
    if (rec == nullptr)
      return;
    trace::event e;
    e.time_us = received_us;
    e.dir = trace::direction::receive;
    e.to = endpoint_id(); // read only when the table of names is full
    e.to_name = trace_name_;
    e.method_name = method_name;
    e.is_ask = is_ask;
    e.bytes = static_cast<std::uint32_t>(bytes.size());
    e.result = result;
    e.detail = detail;
    if (env != nullptr) {
      e.from = env->sender;
      e.method = method;
      e.token = env->token;
      e.trace = env->trace;
    } else {
      e.from = "?";
      e.method = "?";
    }
    rec->record_event(e);
  };
  std::optional<expected<std::vector<char>>> answer;
  // The responder state of the last call is reused when nothing kept it: most calls are
  // answered before their handler returns.
  std::shared_ptr<responder::state> st;
  if (spare_state_ && spare_state_.use_count() == 1) {
    st = std::move(spare_state_);
    st->delivered = false;
    st->method_name = 0;
    st->method.clear();
    st->caller.clear();
    st->trace = {};
  } else {
    spare_state_.reset();
    st = std::make_shared<responder::state>();
  }
  // The responder holds the state (moved in: no count to change); `state` names it here.
  auto& state = *st;
  state.self = this;
  state.is_ask = is_ask;
  state.sync_slot = &answer;
  state.received_us = received_us;
  responder r(std::move(st));
  if (bytes.size() > ctx_.config.max_frame_size) {
    auto err = make_error(errc::rejected,
                          "a call of " + std::to_string(bytes.size())
                            + " bytes is larger than rpc.max-frame-size ("
                            + std::to_string(ctx_.config.max_frame_size) + " bytes) at "
                            + endpoint_id() + "; it was not read");
    record_receive(nullptr, {}, trace::outcome::malformed, err.message);
    state.method = "?";
    state.caller = "?";
    r.deliver(err);
    return answer;
  }
  auto decoded = read_envelope(bytes);
  if (!decoded) {
    record_receive(nullptr, {}, trace::outcome::malformed, decoded.error().message);
    state.method = "?";
    state.caller = "?";
    r.deliver(decoded.error());
    return answer;
  }
  auto& call = *decoded;
  auto& env = call.header;
  state.caller.assign(env.sender);
  state.trace = env.trace;
  auto i = methods_.find(env.method_id);
  if (i == methods_.end()) {
    auto err = make_error(
      errc::unknown_method,
      "endpoint " + endpoint_id() + " has no method with id " + std::to_string(env.method_id));
    state.method = method_name(env.method_id);
    record_receive(&env, state.method, trace::outcome::unknown_method, err.message);
    r.deliver(std::move(err));
    return answer;
  }
  auto& entry = i->second;
  state.method_name = entry.trace_name;
  if (entry.trace_name == 0)
    state.method.assign(entry.name);
  if (!entry.open_to_clients && sender_is_client()) {
    auto text = "Permission denied: " + entry.name + " at " + endpoint_id()
      + " is the cluster's own and the caller " + env.sender
      + " holds a client certificate (security.ssl.internal.keystore made with gen-certs.sh "
        "--client); only nodes' certificates may call it.";
    static const auto log = make_endpoint_logger("rpc");
    log->warn("{}", text);
    record_receive(&env, entry.name, trace::outcome::rejected, text, entry.trace_name);
    r.deliver(make_error(errc::rejected, std::move(text)));
    return answer;
  }
  if (entry.fenced == fencing::fenced) {
    auto expected = expected_token(env);
    if (expected.is_nil() || env.token != expected) {
      // Flink's FencedAkkaRpcActor wording, with both tokens named.
      auto text = expected.is_nil()
        ? "Fencing token not set: Ignoring message " + entry.name + " carrying fencing token "
          + env.token.to_string() + " because the expected fencing token is " + expected.to_string()
          + " (not the leader) at " + endpoint_id() + "."
        : "Fencing token mismatch: Ignoring message " + entry.name + " because the fencing token "
          + env.token.to_string() + " did not match the expected fencing token "
          + expected.to_string() + " at " + endpoint_id() + ".";
      record_receive(&env, entry.name, trace::outcome::rejected, text, entry.trace_name);
      r.deliver(make_error(errc::fencing_token_mismatch, std::move(text)));
      return answer;
    }
  }
  record_receive(&env, entry.name, trace::outcome::ok, {}, entry.trace_name);
  auto previous_trace = current_trace_;
  current_trace_ = env.trace;
  try {
    entry.fn(call, r);
  } catch (const std::exception& e) {
    // A handler that throws has a bug; answer so the caller is not left waiting, keep serving.
    r.deliver(
      make_error(errc::internal, entry.name + " failed at " + endpoint_id() + ": " + e.what()));
  }
  current_trace_ = previous_trace;
  state.sync_slot = nullptr;
  st = std::move(r.state_); // back from the responder, which the handler may have copied
  if (is_ask && !state.delivered) {
    state.promise = make_response_promise(); // answered later through a kept responder
    park(st);
  } else if (st.use_count() == 1) {
    spare_state_ = std::move(st);
  }
  return answer;
}

bool rpc_endpoint::ask_open(caf::message_id response_id) const {
  // CAF keeps an ask's answer handlers until its answer (or error) arrives.
  return multiplexed_responses_.count(response_id) != 0;
}

detail::ask_clock_reading detail::read_ask_clock(const caf::actor_clock& clock,
                                                 std::chrono::nanoseconds wait) {
  if (wait < coarse_from || typeid(clock) != typeid(caf::detail::thread_safe_actor_clock))
    return {clock.now(), std::chrono::nanoseconds(0)};
  static const std::chrono::nanoseconds tick = [] {
    timespec r{};
    clock_getres(CLOCK_MONOTONIC_COARSE, &r);
    return std::chrono::seconds(r.tv_sec) + std::chrono::nanoseconds(r.tv_nsec);
  }();
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  // libstdc++'s steady_clock is CLOCK_MONOTONIC, whose coarse reading lags it by under a tick
  // while the CPU runs (four allowed: a tick just missed coming out of idle, a late tick).
  auto coarse = caf::actor_clock::time_point(std::chrono::duration_cast<caf::actor_clock::time_point::duration>(
    std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
  return {coarse + 4 * tick, 4 * tick};
}

void rpc_endpoint::expire_ask_after(caf::message_id response_id, std::chrono::nanoseconds wait,
                                    detail::pending_ref pending) {
  // Answered asks leave from the front; most asks are answered in the order they were sent.
  while (!ask_deadlines_.empty() && ask_deadlines_.front().pending->answered)
    ask_deadlines_.pop_front();
  auto started = detail::read_ask_clock(clock(), wait);
  auto at = started.now + wait;
  ask_deadlines_.push_back(ask_deadline{at, response_id, std::move(pending)});
  if (!ask_timer_at_ || at < *ask_timer_at_) {
    ask_timer_at_ = at;
    schedule_run_async([this] { on_ask_timer(); }, wait + started.lag);
  }
}

void rpc_endpoint::on_ask_timer() {
  auto now = clock().now();
  if (ask_timer_at_ && *ask_timer_at_ > now)
    return; // an earlier timer, superseded by one armed for sooner; that one runs
  ask_timer_at_.reset();
  std::vector<detail::pending_ref> expired;
  auto open = std::move(ask_deadlines_);
  ask_deadlines_.clear();
  std::optional<caf::actor_clock::time_point> next;
  for (auto& d : open) {
    if (!ask_open(d.response_id))
      continue;
    if (d.at <= now) {
      // Its answer, should it still come, finds no handler and is dropped, as after a CAF
      // request time-out.
      multiplexed_responses_.erase(d.response_id);
      expired.push_back(std::move(d.pending));
    } else {
      next = next ? std::min(*next, d.at) : d.at;
      ask_deadlines_.push_back(std::move(d));
    }
  }
  if (next) {
    ask_timer_at_ = next;
    schedule_run_async([this] { on_ask_timer(); }, *next - now);
  }
  // Continuations may ask again: they run once the list is whole.
  for (auto& p : expired)
    detail::time_out(*p);
}

void rpc_endpoint::park(const std::shared_ptr<responder::state>& st) {
  // Forget answered calls now and then, so the list stays as short as the open calls.
  if (parked_.size() >= 2 * parked_high_water_) {
    std::erase_if(parked_, [](const std::weak_ptr<responder::state>& w) {
      auto s = w.lock();
      return !s || s->delivered;
    });
    parked_high_water_ = std::max<std::size_t>(16, parked_.size());
  }
  parked_.push_back(st);
}

void rpc_endpoint::on_exit() {
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& weak : parked) {
    auto st = weak.lock();
    if (!st || st->delivered)
      continue;
    // Flink fails the open calls of a stopped endpoint rather than leaving them to time out.
    responder(st).deliver(
      make_error(errc::unreachable, "endpoint " + endpoint_id() + " is stopped"));
    st->self = nullptr; // responders kept elsewhere must not reach this actor any more
  }
  methods_.clear();
  spare_state_.reset();
  ask_deadlines_.clear();
  caf::event_based_actor::on_exit();
}

caf::behavior rpc_endpoint::make_behavior() {
  on_start();
  caf::message_handler base{
    [this](ask_atom, std::vector<char>& bytes) -> caf::result<std::vector<char>> {
      auto answer = dispatch(bytes, true);
      // Read: the request's buffer carries a later call's bytes (a handler keeps no view of it).
      detail::thread_byte_buffers().give(std::move(bytes));
      if (answer) {
        if (*answer)
          return std::move(**answer);
        return to_caf_error(answer->error());
      }
      return caf::delegated<std::vector<char>>{};
    },
    [this](tell_atom, std::vector<char>& bytes) {
      dispatch(bytes, false);
      detail::thread_byte_buffers().give(std::move(bytes));
    },
    [](run_atom, std::function<void()>& f) { f(); },
    [](call_atom, std::function<void()>& f) { f(); },
  };
  return base.or_else(extra_handlers());
}

} // namespace flint::rpc
