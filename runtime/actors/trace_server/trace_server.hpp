#pragma once
/// The "trace" endpoint of a node (contract E): serves `fetch_trace` (trace_server_gateway.hpp)
/// from the node's recorder so `flint trace -m host:port` can tail any node live.

#include <caf/fwd.hpp>

#include "runtime/actors/rpc/rpc_endpoint.hpp"

namespace flint::trace {

class trace_recorder;

/// Spawns the trace server reading `recorder` (which must outlive it). The server's own calls are
/// not recorded, whatever `ctx.recorder` says: otherwise each poll of a tail would add two
/// records and a tail would mostly show itself. `ctx.endpoint_id` is normally "trace".
caf::actor spawn_trace_server(caf::actor_system& sys, rpc::endpoint_context ctx,
                              trace_recorder& recorder);

/// The endpoint behind `spawn_trace_server` (exposed for tests that spawn it themselves).
class trace_server : public rpc::rpc_endpoint {
public:
  trace_server(caf::actor_config& cfg, rpc::endpoint_context ctx, trace_recorder& recorder);

protected:
  void on_start() override;

private:
  trace_recorder& source_;
};

} // namespace flint::trace
