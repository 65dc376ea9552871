#include "runtime/actors/trace_server/trace_server.hpp"

#include <algorithm>

#include <caf/actor_system.hpp>

#include "runtime/actors/trace_server/trace_server_gateway.hpp"

namespace flint::trace {

namespace {

rpc::endpoint_context unrecorded(rpc::endpoint_context ctx) {
  ctx.recorder = nullptr;
  return ctx;
}

} // namespace

trace_server::trace_server(caf::actor_config& cfg, rpc::endpoint_context ctx,
                           trace_recorder& recorder)
  : rpc::rpc_endpoint(cfg, unrecorded(std::move(ctx))),
    source_(recorder) {}

void trace_server::on_start() {
  handle<fetch_trace>(
    rpc::fencing::unfenced, [this](fetch_trace_request req) -> expected<fetch_trace_response> {
      auto limit =
        req.max_records == 0 ? default_fetch_records : std::min(req.max_records, max_fetch_records);
      // Read `recorded` first: it never trails the batch's next_sequence.
      auto recorded = source_.recorded();
      auto batch = source_.read_from(req.from_sequence, limit);
      fetch_trace_response resp;
      resp.records = std::move(batch.records);
      resp.missed = batch.missed;
      resp.next_sequence = batch.next_sequence;
      resp.recorded = std::max(recorded, batch.next_sequence);
      return resp;
    });
}

caf::actor spawn_trace_server(caf::actor_system& sys, rpc::endpoint_context ctx,
                              trace_recorder& recorder) {
  return sys.spawn<trace_server>(std::move(ctx), recorder);
}

} // namespace flint::trace
