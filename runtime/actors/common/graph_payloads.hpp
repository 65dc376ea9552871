#pragma once
/// The graph layer's messages nested in protocol messages as Data (a JobGraph in submit_job, a
/// TaskDeploymentDescriptor in submit_task): the `encode_data`/`decode_data` conversions the
/// generated codecs call for `$Flint.type` Data fields. The graph keeps its own schema and codec;
/// so does the state layer (a TaskStateSnapshot in acknowledge_checkpoint).

#include <span>
#include <vector>

#include "runtime/common/expected.hpp"
#include "runtime/graph/codec/job_graph_codec.hpp"
#include "runtime/state/state_codec.hpp"
#include "schemas/codec_support.hpp"

namespace flint::wire {

inline std::vector<char> encode_data(const graph::job_graph& g) {
  return graph::encode_job_graph(g);
}

inline expected<unit> decode_data(capnp::Data::Reader d, graph::job_graph& out) {
  auto g = graph::decode_job_graph({reinterpret_cast<const char*>(d.begin()), d.size()});
  if (!g)
    return g.error();
  out = std::move(*g);
  return unit{};
}

inline std::vector<char> encode_data(const graph::task_deployment_descriptor& tdd) {
  return graph::encode_task_deployment_descriptor(tdd);
}

inline expected<unit> decode_data(capnp::Data::Reader d, graph::task_deployment_descriptor& out) {
  auto tdd =
    graph::decode_task_deployment_descriptor({reinterpret_cast<const char*>(d.begin()), d.size()});
  if (!tdd)
    return tdd.error();
  out = std::move(*tdd);
  return unit{};
}

inline std::vector<char> encode_data(const state::task_state_snapshot& s) {
  return state::encode_task_state_snapshot(s);
}

inline expected<unit> decode_data(capnp::Data::Reader d, state::task_state_snapshot& out) {
  auto s = state::decode_task_state_snapshot({reinterpret_cast<const char*>(d.begin()), d.size()});
  if (!s)
    return s.error();
  out = std::move(*s);
  return unit{};
}

} // namespace flint::wire
