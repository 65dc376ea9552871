#include "runtime/actors/rpc/echo_endpoint.hpp"

#include "runtime/actors/rpc/echo_gateway.hpp"

namespace flint::rpc {

echo_endpoint::echo_endpoint(caf::actor_config& cfg, endpoint_context ctx, fencing_token token)
  : rpc_endpoint(cfg, std::move(ctx)),
    initial_token_(token) {}

void echo_endpoint::on_start() {
  set_token(initial_token_);
  handle<echo_method>(fencing::fenced, [this](echo_request req) -> expected<echo_response> {
    ++served_;
    return echo_response{std::move(req.text), std::move(req.data), endpoint_id()};
  });
}

} // namespace flint::rpc
