#pragma once
/// Turns a program's transformations into a StreamGraph (Flink's StreamGraphGenerator, §2.2).

#include "runtime/common/expected.hpp"
#include "runtime/graph/stream_graph.hpp"
#include "runtime/graph/transformation.hpp"

#include <map>
#include <memory>
#include <vector>

namespace flint::graph {

/// One-shot generator: construct, call `generate()` once.
class stream_graph_generator {
public:
  /// `transformations` in the order the program added them (partition transformations are
  /// reached through their consumers, as in Flink).
  stream_graph_generator(std::vector<std::shared_ptr<transformation>> transformations,
                         stream_graph_config config);

  /// Builds the graph, or names the first transformation that could not be placed.
  expected<stream_graph> generate();

private:
  /// The StreamGraph ids that stand for `t`'s output (several for a union, virtual ids for a
  /// partition).
  expected<std::vector<int>> transform(const std::shared_ptr<transformation>& t);
  expected<std::vector<int>> transform_operator(const transformation& t,
                                                const std::vector<int>& input_ids);
  std::string determine_slot_sharing_group(const transformation& t,
                                           const std::vector<int>& input_ids) const;
  int resolve(int id) const;

  std::vector<std::shared_ptr<transformation>> transformations_;
  stream_graph graph_;
  std::map<const transformation*, std::vector<int>> already_transformed_;
  int next_virtual_id_ = 0;
};

/// Convenience: `stream_graph_generator(transformations, config).generate()`.
expected<stream_graph> generate_stream_graph(
  std::vector<std::shared_ptr<transformation>> transformations, stream_graph_config config);

} // namespace flint::graph
