#pragma once
/// The JSON execution plan of a JobGraph (Flink's JsonPlanGenerator, §5.1.1 step 3).

#include "runtime/graph/job_graph.hpp"

#include <string>

namespace flint::graph {

/// `{"jid", "name", "nodes": [{"id", "parallelism", "operator", "operator_strategy",
/// "description", "inputs": [{"num", "id", "ship_strategy", "exchange"}], "optimizer_properties"}]}`
/// with nodes in JobGraph order and `inputs` left out for vertices without inputs, as Flink does.
/// `indent` < 0 gives one line.
std::string json_execution_plan(const job_graph& graph, int indent = 4);

} // namespace flint::graph
