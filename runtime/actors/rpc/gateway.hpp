#pragma once
/// A small typed handle on a remote or local endpoint (Flink's RpcGateway): it encodes a
/// method's request into an envelope carrying the fencing token it holds, sends it, and decodes
/// the reply into a value or a typed error. One code path for endpoints in the same process and
/// across actor systems (CAF's middleman carries the envelope bytes).

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/envelope/fencing_token.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "runtime/actors/rpc/pending_ask.hpp"
#include "runtime/actors/trace/trace_names.hpp"

namespace flint::trace {
class trace_recorder;
}

namespace flint::rpc {

class rpc_endpoint;

/// Who is calling when the caller is not an endpoint (a CLI, a test driver, a benchmark).
struct client_identity {
  std::string id = "client";
  trace::trace_recorder* recorder = nullptr;
  std::chrono::nanoseconds ask_timeout = std::chrono::seconds(10);
};

class gateway {
public:
  gateway() = default;
  gateway(caf::actor target, std::string target_id, fencing_token token = {},
          std::string fencing_scope = {});

  bool valid() const noexcept;
  const caf::actor& target() const noexcept { return target_; }
  const std::string& target_id() const noexcept { return target_id_; }
  const fencing_token& token() const noexcept { return token_; }
  const std::string& fencing_scope() const noexcept { return fencing_scope_; }

  /// The same target seen under another token (after a leadership change).
  gateway with_token(fencing_token token) const;
  gateway with_scope(std::string scope) const;

  /// Asks from `self`'s main thread; `k` runs there with the decoded response or an error
  /// (errc::timeout after `timeout`, default `rpc.ask.timeout`). `k` is any callable taking an
  /// `expected<response>`: it is kept in the ask's one allocation (no std::function of its own).
  template <class M, class K>
  void ask(rpc_endpoint& self, const typename M::request& req, K&& k,
           std::optional<std::chrono::nanoseconds> timeout = std::nullopt) const {
    using response = typename M::response;
    struct typed final : detail::pending_ask {
      explicit typed(K&& f) : k(std::forward<K>(f)) {}
      void complete(expected<std::span<const char>> reply) override {
        if (!reply)
          k(expected<response>(reply.error()));
        else
          k(codec<response>::decode(*reply));
      }
      std::decay_t<K> k;
    };
    ask_encoded(self, M::id, M::name, method_trace_name<M>(), &write_request<typename M::request>,
                &req, timeout, detail::make_pending<typed>(std::forward<K>(k)));
  }

  /// As ask<M>, but `k` gets the response's bytes (valid while it runs) to read in place
  /// (runtime/actors/rpc/in_place.hpp's read_in_place) instead of a decoded struct.
  template <class M, class K>
  void ask_in_place(rpc_endpoint& self, const typename M::request& req, K&& k,
                    std::optional<std::chrono::nanoseconds> timeout = std::nullopt) const {
    struct in_place final : detail::pending_ask {
      explicit in_place(K&& f) : k(std::forward<K>(f)) {}
      void complete(expected<std::span<const char>> reply) override { k(std::move(reply)); }
      std::decay_t<K> k;
    };
    ask_encoded(self, M::id, M::name, method_trace_name<M>(), &write_request<typename M::request>,
                &req, timeout, detail::make_pending<in_place>(std::forward<K>(k)));
  }

  /// As ask_in_place<M>, with the request written where it goes instead of encoded from a
  /// struct: `write(std::vector<char>& out)` appends the request message's bytes (with
  /// flat_message.hpp's struct_writer, say), right after the envelope header, before this
  /// returns. The caller of a hot path writes its request as the handler reads it.
  template <class M, class W, class K>
  void ask_written(rpc_endpoint& self, W&& write, K&& k,
                   std::optional<std::chrono::nanoseconds> timeout = std::nullopt) const {
    struct in_place final : detail::pending_ask {
      explicit in_place(K&& f) : k(std::forward<K>(f)) {}
      void complete(expected<std::span<const char>> reply) override { k(std::move(reply)); }
      std::decay_t<K> k;
    };
    using writer = std::remove_reference_t<W>;
    ask_encoded(self, M::id, M::name, method_trace_name<M>(), &call_writer<writer>,
                static_cast<const void*>(&write), timeout,
                detail::make_pending<in_place>(std::forward<K>(k)));
  }

  /// Sends without waiting for an answer; fencing failures at the receiver are only traced.
  template <class M>
  void tell(rpc_endpoint& self, const typename M::request& req) const {
    tell_encoded(self, M::id, M::name, method_trace_name<M>(), &write_request<typename M::request>,
                 &req);
  }

  /// Asks from a blocking actor (CLI, benchmark, integration-test driver): waits for the answer.
  template <class M>
  expected<typename M::response> ask_blocking(caf::blocking_actor& self, const client_identity& who,
                                              const typename M::request& req) const {
    expected<typename M::response> result = make_error(errc::internal, "no answer");
    ask_blocking_encoded(self, who, M::id, M::name, &write_request<typename M::request>, &req,
                         [&](expected<std::span<const char>> reply) {
                           if (!reply)
                             result = reply.error();
                           else
                             result = codec<typename M::response>::decode(*reply);
                         });
    return result;
  }

  // -- untyped core (also used to send deliberately bad bytes in tests) -------------------------

  void ask_raw(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
               std::vector<char> payload, std::optional<std::chrono::nanoseconds> timeout,
               std::function<void(expected<std::vector<char>>)> k) const;
  void tell_raw(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                std::vector<char> payload) const;
  expected<std::vector<char>> ask_raw_blocking(caf::blocking_actor& self,
                                               const client_identity& who, std::uint32_t method_id,
                                               const char* method_name,
                                               std::vector<char> payload) const;

  /// Appends a request message to a call's bytes, right after its envelope header.
  using request_writer = void (*)(std::vector<char>& out, const void* request);

private:
  /// M::name interned once per method.
  template <class M>
  static trace::name_id method_trace_name() {
    static const trace::name_id id = trace::intern(M::name);
    return id;
  }

  template <class W>
  static void call_writer(std::vector<char>& out, const void* write) {
    (*static_cast<W*>(const_cast<void*>(write)))(out);
  }

  template <class Request>
  static void write_request(std::vector<char>& out, const void* request) {
    codec<Request>::encode_to(out, *static_cast<const Request*>(request));
  }

  /// `pending` continues with the answer; this fills in the rest of it.
  void ask_encoded(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                   trace::name_id method_trace, request_writer write, const void* request,
                   std::optional<std::chrono::nanoseconds> timeout,
                   detail::pending_ref pending) const;
  void tell_encoded(rpc_endpoint& self, std::uint32_t method_id, const char* method_name,
                    trace::name_id method_trace, request_writer write, const void* request) const;
  void ask_blocking_encoded(caf::blocking_actor& self, const client_identity& who,
                            std::uint32_t method_id, const char* method_name, request_writer write,
                            const void* request,
                            const std::function<void(expected<std::span<const char>>)>& k) const;

private:
  caf::actor target_;
  std::string target_id_;
  trace::name_id target_name_ = 0; ///< target_id_ interned for trace records
  fencing_token token_;
  std::string fencing_scope_;
};

} // namespace flint::rpc
