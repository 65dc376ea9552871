#include "runtime/actors/job_master/failover/failover_strategy.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <numeric>
#include <string_view>

namespace flint::job_master::failover {

namespace {

constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

} // namespace

// -- region --------------------------------------------------------------------------------------

restart_pipelined_region_failover_strategy::restart_pipelined_region_failover_strategy(
  const graph::execution_graph& graph)
  : graph_(&graph),
    consumed_groups_(graph.regions().size()),
    consumer_groups_(graph.regions().size()),
    regions_of_consumer_group_(graph.consumer_vertex_groups().size()) {
  const auto& vertices = graph.vertices();
  const auto& results = graph.results();
  const auto& partitions = graph.partitions();
  const auto& consumed = graph.consumed_partition_groups();

  // Stamps instead of sets: "last added for this group/region" makes every dedup O(1).
  std::vector<std::uint32_t> region_stamp(graph.regions().size(), none);
  for (std::uint32_t g = 0; g < regions_of_consumer_group_.size(); ++g) {
    const auto& group = graph.consumer_vertex_groups()[g];
    for (std::uint32_t v = group.first_vertex; v < group.first_vertex + group.size; ++v) {
      std::uint32_t r = vertices[v].region;
      if (region_stamp[r] != g) {
        region_stamp[r] = g;
        regions_of_consumer_group_[g].push_back(r);
      }
    }
  }

  // Pipelined exchanges never leave a region, so only blocking ones link regions.
  std::vector<std::uint32_t> consumed_stamp(consumed.size(), none);
  std::vector<std::uint32_t> consumer_stamp(graph.consumer_vertex_groups().size(), none);
  for (std::uint32_t r = 0; r < graph.regions().size(); ++r) {
    for (std::uint32_t v : graph.regions()[r].vertices) {
      const auto& vertex = vertices[v];
      for (std::uint32_t g : vertex.consumed_partition_groups) {
        if (graph::is_pipelined(results[consumed[g].result].result_type) || consumed_stamp[g] == r)
          continue;
        consumed_stamp[g] = r;
        consumed_groups_[r].push_back(g);
      }
      for (std::uint32_t result : graph.job_vertices()[vertex.job_vertex].produced_results) {
        if (graph::is_pipelined(results[result].result_type))
          continue;
        // A producer subtask writes partition number `subtask_index` of each of its results.
        const auto& partition = partitions[results[result].first_partition
                                           + static_cast<std::uint32_t>(vertex.subtask_index)];
        if (consumer_stamp[partition.consumer_vertex_group] == r)
          continue;
        consumer_stamp[partition.consumer_vertex_group] = r;
        consumer_groups_[r].push_back(partition.consumer_vertex_group);
      }
    }
  }
}

std::vector<std::uint32_t> restart_pipelined_region_failover_strategy::tasks_needing_restart(
  std::uint32_t failed_vertex, const partition_availability& available) const {
  const auto& g = *graph_;
  std::vector<bool> region_seen(g.regions().size(), false);
  std::vector<bool> consumed_seen(g.consumed_partition_groups().size(), false);
  std::vector<bool> consumer_seen(regions_of_consumer_group_.size(), false);
  std::vector<std::uint32_t> to_visit;
  auto involve = [&](std::uint32_t region) {
    if (!region_seen[region]) {
      region_seen[region] = true;
      to_visit.push_back(region);
    }
  };

  involve(g.vertices().at(failed_vertex).region);
  // `to_visit` doubles as the list of involved regions: its front part is the visited one.
  for (std::size_t next = 0; next < to_visit.size(); ++next) {
    std::uint32_t region = to_visit[next];
    for (std::uint32_t group_index : consumed_groups_[region]) {
      if (consumed_seen[group_index])
        continue;
      consumed_seen[group_index] = true;
      const auto& group = g.consumed_partition_groups()[group_index];
      for (std::uint32_t p = group.first_partition; p < group.first_partition + group.size; ++p)
        if (available && !available(p))
          involve(g.vertices()[g.partitions()[p].producer].region);
    }
    for (std::uint32_t consumer_group : consumer_groups_[region]) {
      if (consumer_seen[consumer_group])
        continue;
      consumer_seen[consumer_group] = true;
      for (std::uint32_t consumer_region : regions_of_consumer_group_[consumer_group])
        involve(consumer_region);
    }
  }

  std::vector<std::uint32_t> out;
  for (std::uint32_t region : to_visit)
    out.insert(out.end(), g.regions()[region].vertices.begin(), g.regions()[region].vertices.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::string restart_pipelined_region_failover_strategy::name() const {
  return "RestartPipelinedRegionFailoverStrategy";
}

// -- all -----------------------------------------------------------------------------------------

restart_all_failover_strategy::restart_all_failover_strategy(const graph::execution_graph& graph)
  : graph_(&graph) {}

std::vector<std::uint32_t> restart_all_failover_strategy::tasks_needing_restart(
  std::uint32_t, const partition_availability&) const {
  std::vector<std::uint32_t> out(graph_->vertices().size());
  std::iota(out.begin(), out.end(), 0u);
  return out;
}

std::string restart_all_failover_strategy::name() const {
  return "RestartAllFailoverStrategy";
}

// -- loader --------------------------------------------------------------------------------------

expected<failover_strategy_kind> read_failover_strategy(const config::configuration& config) {
  constexpr std::string_view key = "jobmanager.execution.failover-strategy";
  auto raw = config.get_raw(key);
  auto name = raw ? config::lower(config::trim(*raw)) : std::string("region");
  if (name == "region")
    return failover_strategy_kind::region;
  if (name == "full")
    return failover_strategy_kind::full;
  std::string message = "Unknown failover strategy '" + *raw + "' in " + std::string(key);
  if (auto from = config.origin(key); !from.empty())
    message += " (set in " + from + ")";
  message += "; use region or full";
  return make_error(errc::invalid_argument, std::move(message));
}

std::unique_ptr<failover_strategy> make_failover_strategy(failover_strategy_kind kind,
                                                          const graph::execution_graph& graph) {
  if (kind == failover_strategy_kind::full)
    return std::make_unique<restart_all_failover_strategy>(graph);
  return std::make_unique<restart_pipelined_region_failover_strategy>(graph);
}

expected<std::unique_ptr<failover_strategy>> make_failover_strategy(
  const config::configuration& config, const graph::execution_graph& graph) {
  auto kind = read_failover_strategy(config);
  if (!kind)
    return kind.error();
  return make_failover_strategy(*kind, graph);
}

} // namespace flint::job_master::failover
