#pragma once
// Small helpers shared by the graph tests.

#include "api/api.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

namespace flint::test {

inline api::configuration parallelism(int p) {
  return api::configuration{{"parallelism.default", std::to_string(p)}};
}

/// "from -> to" of every StreamEdge, with its chaining verdict.
inline std::map<std::string, graph::chaining_verdict> verdicts(const graph::stream_graph& g) {
  std::map<std::string, graph::chaining_verdict> out;
  for (const auto& e : g.edges())
    out[g.node(e.source_id).operator_name + " -> " + g.node(e.target_id).operator_name] =
      g.check_chainable(e);
  return out;
}

inline std::vector<std::string> vertex_names(const graph::job_graph& job) {
  std::vector<std::string> names;
  for (const auto& v : job.vertices)
    names.push_back(v.name);
  return names;
}

template <class T>
T value_of(expected<T> x) {
  REQUIRE_MESSAGE(x.has_value(), x.error().to_string());
  return std::move(*x);
}

} // namespace flint::test
