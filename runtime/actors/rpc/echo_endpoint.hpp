#pragma once
/// A diagnostic endpoint that answers `echo`, fenced with the token it is given. The demo, the
/// RPC benchmark and the cross-process RPC test run it; it is the smallest real endpoint.

#include "runtime/actors/rpc/rpc_endpoint.hpp"

namespace flint::rpc {

class echo_endpoint : public rpc_endpoint {
public:
  echo_endpoint(caf::actor_config& cfg, endpoint_context ctx, fencing_token token);

  /// Calls executed (fenced-out calls are not counted).
  std::uint64_t served() const noexcept { return served_; }

protected:
  void on_start() override;

private:
  fencing_token initial_token_;
  std::uint64_t served_ = 0;
};

} // namespace flint::rpc
