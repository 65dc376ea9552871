#pragma once
/// The base of every Flint endpoint (Flink's RpcEndpoint / FencedRpcEndpoint) on a CAF 0.17
/// event-based actor. The actor's context is the endpoint's "main thread": CAF runs one message
/// at a time per actor, so endpoint state needs no locks, and closures handed to `run_async`
/// go through the same mailbox.
///
/// Incoming calls are `ask_atom`/`tell_atom` followed by the call's bytes (envelope.hpp). The
/// base reads the envelope, records it in the node's trace, checks the fencing token of fenced methods (a
/// missing or different token: not executed; an ask gets an error naming both tokens, a tell is
/// dropped and traced as rejected), and dispatches by method id to handlers registered with
/// `handle<M>` / `handle_async<M>`.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>

#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "runtime/actors/rpc/pending_ask.hpp"
#include "runtime/actors/rpc/rpc_atoms.hpp"
#include "runtime/actors/rpc/rpc_config.hpp"
#include "runtime/actors/trace/trace_names.hpp"

namespace flint::trace {
class trace_recorder;
}

namespace flint::rpc {

/// What every endpoint is given by whoever wires the node (no singletons).
struct endpoint_context {
  /// Unique within the cluster: "resource_manager", "task_executor/tm-1", "job_master/<job>".
  std::string endpoint_id;
  /// The node's trace recording point; may be null (nothing recorded).
  trace::trace_recorder* recorder = nullptr;
  rpc_config config;
};

enum class fencing { fenced, unfenced };

class rpc_endpoint;

/// Answers one incoming call, now or later, from the endpoint's main thread. Copies share one
/// answer: the first delivery wins. For tells it records nothing and sends nothing.
class responder {
public:
  responder() = default;

  void deliver(expected<std::vector<char>> result) const;
  bool is_ask() const noexcept { return state_ && state_->is_ask; }

private:
  friend class rpc_endpoint;

  struct state {
    rpc_endpoint* self = nullptr;
    bool is_ask = false;
    bool delivered = false;
    /// While the handler runs, an answer goes here and becomes the handler's CAF reply: no
    /// response promise, no extra enqueue for the common synchronous case.
    std::optional<expected<std::vector<char>>>* sync_slot = nullptr;
    /// Set when the handler returned without answering; later answers go through it.
    caf::response_promise promise;
    /// The method's interned name; its text in `method` when it has none (an unknown id).
    trace::name_id method_name = 0;
    std::string method;
    std::string caller;
    trace_context trace;
    std::int64_t received_us = 0;
  };

  explicit responder(std::shared_ptr<state> s) : state_(std::move(s)) {}

  std::shared_ptr<state> state_;
};

/// A typed view on a responder for a method's response type.
template <class Response>
class reply_to {
public:
  explicit reply_to(responder r) : r_(std::move(r)) {}
  void operator()(expected<Response> result) {
    if (!result)
      r_.deliver(result.error());
    else
      r_.deliver(codec<Response>::encode(*result));
  }
  bool is_ask() const noexcept { return r_.is_ask(); }

private:
  responder r_;
};

class rpc_endpoint : public caf::event_based_actor {
public:
  rpc_endpoint(caf::actor_config& cfg, endpoint_context ctx);
  ~rpc_endpoint() override;

  const std::string& endpoint_id() const noexcept { return ctx_.endpoint_id; }
  /// endpoint_id() interned for trace records.
  trace::name_id trace_name() const noexcept { return trace_name_; }
  const rpc_config& rpc_settings() const noexcept { return ctx_.config; }
  trace::trace_recorder* recorder() const noexcept { return ctx_.recorder; }

  // -- main thread ------------------------------------------------------------------------------

  /// Runs `f` in this endpoint's main thread, after the messages already queued.
  void run_async(std::function<void()> f);

  /// Runs `f` in this endpoint's main thread after `delay` (CAF's clock: manual in tests).
  void schedule_run_async(std::function<void()> f, std::chrono::nanoseconds delay);

  /// Runs `f` in `other`'s main thread and continues with its result in this one; fails with
  /// errc::timeout after `timeout`. Local only: closures do not cross processes.
  template <class T>
  void call_async(const caf::actor& other, std::function<T()> f, std::chrono::nanoseconds timeout,
                  std::function<void(expected<T>)> k) {
    auto slot = std::make_shared<std::optional<T>>();
    call_async_impl(
      other, [slot, f = std::move(f)] { slot->emplace(f()); }, timeout,
      [slot, k = std::move(k)](std::optional<error> err) {
        if (err)
          k(std::move(*err));
        else
          k(std::move(**slot));
      });
  }

  /// True while this endpoint's actor is the one running on the calling thread.
  bool runs_in_main_thread() const noexcept;

  /// Throws std::logic_error when not called from this endpoint's main thread (a bug).
  void validate_runs_in_main_thread() const;

  // -- fencing ----------------------------------------------------------------------------------

  /// The token fenced calls must carry; nil until leadership is granted.
  const fencing_token& token() const noexcept { return token_; }
  void set_token(const fencing_token& t);

  /// The trace context of the call being handled; outgoing calls become its children.
  const trace_context& current_trace() const noexcept { return current_trace_; }

  /// The actor that sent the call being handled; valid only inside a handler (capture it there).
  /// Registration handlers keep it as the peer's handle: it works for local and remote peers.
  caf::actor caller();

  /// Name of a registered method, or "method#<id>".
  std::string method_name(std::uint32_t id) const;

  /// Fails the ask whose answer is `response_id` (sent with no CAF time-out) through
  /// detail::time_out when no answer came within `wait` (gateway's core). Asks are timed here,
  /// not by CAF: a CAF request time-out hands every ask to CAF's clock thread (a lock and a
  /// thread wake-up per call, on the caller's path); here one timer per endpoint stands for all
  /// of its open asks, re-armed when it fires.
  void expire_ask_after(caf::message_id response_id, std::chrono::nanoseconds wait,
                        detail::pending_ref pending);

  caf::behavior make_behavior() final;
  caf::resumable::resume_result resume(caf::execution_unit* ctx, size_t max_throughput) override;

protected:
  /// The responder is const: a handler answers through it or keeps a copy, never moves it out
  /// (dispatch takes the call's state back from it after the handler returns).
  using raw_handler = std::function<void(const received_envelope&, const responder&)>;

  void add_method(std::uint32_t id, std::string name, fencing f, raw_handler h,
                  bool open_to_clients = false);

  /// Registers a method answered at once: `fn(request) -> expected<response>`.
  template <class M, class F>
  void handle(fencing f, F fn) {
    add_method(
      M::id, M::name, f,
      [fn = std::move(fn)](const received_envelope& call, const responder& r) mutable {
        auto req = codec<typename M::request>::decode(call.payload);
        if (!req) {
          r.deliver(req.error());
          return;
        }
        expected<typename M::response> resp = fn(std::move(*req));
        if (!resp)
          r.deliver(resp.error());
        else
          r.deliver(codec<typename M::response>::encode(*resp));
      },
      open_to_clients_v<M>);
  }

  /// Registers a method that may answer later: `fn(request, reply_to<response>)`.
  template <class M, class F>
  void handle_async(fencing f, F fn) {
    add_method(
      M::id, M::name, f,
      [fn = std::move(fn)](const received_envelope& call, const responder& r) mutable {
        auto req = codec<typename M::request>::decode(call.payload);
        if (!req) {
          r.deliver(req.error());
          return;
        }
        fn(std::move(*req), reply_to<typename M::response>(r));
      },
      open_to_clients_v<M>);
  }

  /// Registers a method that reads its request where it lies, with no decoded struct:
  /// `fn(std::span<const char> request) -> expected<std::vector<char>>`, the response's bytes.
  /// With runtime/actors/rpc/in_place.hpp the handler reads the request through its Cap'n Proto
  /// reader and builds the response with its builder (`read_in_place`, `build_in_place`): no
  /// copy of texts and data into a struct and out again. The way to write a method whose cost
  /// matters (echo_endpoint.cpp is the example); the answer is the same bytes as with handle<M>.
  template <class M, class F>
  void handle_in_place(fencing f, F fn) {
    add_method(
      M::id, M::name, f,
      [fn = std::move(fn)](const received_envelope& call, const responder& r) mutable {
        r.deliver(fn(call.payload));
      },
      open_to_clients_v<M>);
  }

  /// The token a fenced call must carry. The default is the endpoint's own token; endpoints
  /// fenced per relationship (the TaskExecutor) choose by method and `fencing_scope`.
  virtual fencing_token expected_token(const envelope& e) const;

  /// Called once in the main thread when the actor starts: register methods here.
  virtual void on_start() {}

  /// More CAF handlers (monitors, local control messages); empty by default.
  virtual caf::message_handler extra_handlers() { return {}; }

  /// Flink's RpcEndpoint#onStop. Subclasses drop every handle of a peer they hold here
  /// (gateways, heartbeat targets, directory entries they put) and then call this one, which
  /// fails the calls still waiting for an answer and drops the method handlers. A terminated
  /// actor is destroyed only when no handle to it is left, so two stopped endpoints holding
  /// each other's handles would never be freed.
  void on_exit() override;

private:
  friend class responder;

  struct method_entry {
    std::string name;
    trace::name_id trace_name = 0;
    fencing fenced;
    raw_handler fn;
    bool open_to_clients = false;
  };

  /// Whether the call being handled comes from a peer holding a client certificate.
  bool sender_is_client();

  /// Handles one incoming call; for asks answered synchronously returns the answer.
  std::optional<expected<std::vector<char>>> dispatch(std::vector<char>& bytes, bool is_ask);
  /// Times out the asks whose deadline passed; re-arms the timer for the next.
  void on_ask_timer();
  /// Whether the ask answered by `response_id` still waits for its answer.
  bool ask_open(caf::message_id response_id) const;
  /// Remembers a call answered later (see parked_).
  void park(const std::shared_ptr<responder::state>& st);
  void call_async_impl(const caf::actor& other, std::function<void()> f,
                       std::chrono::nanoseconds timeout,
                       std::function<void(std::optional<error>)> k);

  endpoint_context ctx_;
  trace::name_id trace_name_ = 0;
  /// Calls answered later: their response promises hold this actor (and the caller) strongly
  /// until delivered, so on_exit fails those still open.
  std::vector<std::weak_ptr<responder::state>> parked_;
  std::size_t parked_high_water_ = 16;
  /// The state of a call answered before its handler returned and kept by nobody: the next
  /// call reuses it (one allocation less per call).
  std::shared_ptr<responder::state> spare_state_;
  struct ask_deadline {
    caf::actor_clock::time_point at;
    caf::message_id response_id;
    detail::pending_ref pending;
  };
  /// Open asks in the order they were sent (answered ones leave from the front as new asks
  /// come, the rest when the timer fires).
  std::deque<ask_deadline> ask_deadlines_;
  /// When the earliest armed ask timer fires; none armed when empty.
  std::optional<caf::actor_clock::time_point> ask_timer_at_;
  fencing_token token_;
  trace_context current_trace_;
  std::unordered_map<std::uint32_t, method_entry> methods_;
};

} // namespace flint::rpc
