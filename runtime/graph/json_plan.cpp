#include "runtime/graph/json_plan.hpp"

#include <nlohmann/json.hpp>

#include <cctype>

namespace flint::graph {

std::string json_execution_plan(const job_graph& graph, int indent) {
  using json = nlohmann::ordered_json;
  json plan;
  plan["jid"] = graph.job_id.to_string();
  plan["name"] = graph.name;
  json nodes = json::array();
  for (const auto& vertex : graph.vertices) {
    json node;
    node["id"] = vertex.id.to_string();
    node["parallelism"] = vertex.parallelism;
    node["operator"] = "";
    node["operator_strategy"] = "";
    node["description"] = vertex.name;
    if (!vertex.inputs.empty()) {
      json inputs = json::array();
      for (std::size_t num = 0; num < vertex.inputs.size(); ++num) {
        const job_edge& edge = graph.edges[vertex.inputs[num]];
        const intermediate_data_set& data_set = graph.data_sets[edge.source];
        std::string exchange(to_string(data_set.result_type));
        for (char& c : exchange)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        json input;
        input["num"] = num;
        input["id"] = graph.vertices[data_set.producer].id.to_string();
        input["ship_strategy"] = edge.ship_strategy_name;
        input["exchange"] = exchange;
        inputs.push_back(std::move(input));
      }
      node["inputs"] = std::move(inputs);
    }
    node["optimizer_properties"] = json::object();
    nodes.push_back(std::move(node));
  }
  plan["nodes"] = std::move(nodes);
  return plan.dump(indent);
}

} // namespace flint::graph
