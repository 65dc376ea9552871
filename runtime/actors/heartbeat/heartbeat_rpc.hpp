#pragma once
/// Glue between a heartbeat manager and RPC: a `heartbeat_target` that calls a peer through a
/// gateway, and the handlers that feed incoming heartbeat calls into a manager. Used by the
/// endpoints that own heartbeat managers; other endpoints need only heartbeat_gateway.hpp.
///
///     // in the endpoint's on_start (its main thread):
///     hb_.emplace(heartbeat_role::sender, endpoint_id(), config, listener, *this);
///     handle<receive_heartbeat_method>(fencing::unfenced, serve_receive_heartbeat(*hb_));
///     hb_->monitor_target(tm_id, make_heartbeat_target(tm_gateway, *this));

#include <chrono>
#include <optional>
#include <type_traits>

#include "runtime/actors/heartbeat/heartbeat_gateway.hpp"
#include "runtime/actors/heartbeat/heartbeat_manager.hpp"
#include "runtime/actors/rpc/gateway.hpp"

namespace flint::heartbeat {

namespace detail {

template <class M>
heartbeat_target::call_fn gateway_call(rpc::gateway gw, rpc::rpc_endpoint& self,
                                       std::optional<std::chrono::nanoseconds> timeout) {
  static_assert(std::is_same_v<typename M::request, heartbeat_request>,
                "a heartbeat method takes a heartbeat_request");
  static_assert(std::is_same_v<typename M::response, rpc::ack>,
                "a heartbeat method is confirmed with an ack");
  return [gw = std::move(gw), self = &self, timeout](const resource_id& origin, payload data,
                                                     heartbeat_target::done_fn done) {
    gw.ask<M>(
      *self, heartbeat_request{origin, std::move(data)},
      [done = std::move(done)](expected<rpc::ack> reply) {
        if (!reply)
          done(reply.error());
        else
          done(unit{});
      },
      timeout);
  };
}

} // namespace detail

/// A target reached through `gw`, called from `self`'s main thread (`self` must outlive the
/// target; it normally owns the manager holding it). Each call is an ask, so that an
/// unreachable peer shows as errc::unreachable; `timeout` defaults to `rpc.ask.timeout`.
/// Relations with their own method ids pass their descriptors as `RequestMethod` and
/// `ReceiveMethod`.
template <class RequestMethod = request_heartbeat_method,
          class ReceiveMethod = receive_heartbeat_method>
heartbeat_target make_heartbeat_target(
  rpc::gateway gw, rpc::rpc_endpoint& self,
  std::optional<std::chrono::nanoseconds> timeout = std::nullopt) {
  heartbeat_target target;
  target.request_heartbeat = detail::gateway_call<RequestMethod>(gw, self, timeout);
  target.receive_heartbeat = detail::gateway_call<ReceiveMethod>(std::move(gw), self, timeout);
  return target;
}

/// The handler of a request-heartbeat method: hands the request to `manager` (which answers
/// through the origin's target) and confirms at once. `manager` must outlive the handler.
inline auto serve_request_heartbeat(heartbeat_manager& manager) {
  return [&manager](heartbeat_request req) -> expected<rpc::ack> {
    manager.request_heartbeat(req.origin, std::move(req.data));
    return rpc::ack{};
  };
}

/// The handler of a receive-heartbeat method: hands the heartbeat to `manager` and confirms.
inline auto serve_receive_heartbeat(heartbeat_manager& manager) {
  return [&manager](heartbeat_request req) -> expected<rpc::ack> {
    manager.receive_heartbeat(req.origin, std::move(req.data));
    return rpc::ack{};
  };
}

} // namespace flint::heartbeat
