#pragma once
/// Which tasks restart when one fails (Flink's FailoverStrategy): its pipelined region and what
/// that region needs and feeds (RestartPipelinedRegionFailoverStrategy), or every task
/// (RestartAllFailoverStrategy); chosen by `jobmanager.execution.failover-strategy`.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"
#include "runtime/graph/execution_graph.hpp"

namespace flint::job_master::failover {

/// Which partitions still hold their data (a blocking result whose producer's TaskManager is gone
/// does not). The argument is an index into graph.partitions().
using partition_availability = std::function<bool(std::uint32_t partition)>;

class failover_strategy {
public:
  virtual ~failover_strategy() = default;
  /// The execution vertices (indices into graph.vertices(), ascending) to restart after
  /// `failed_vertex` failed. An empty `available` counts every partition as available.
  virtual std::vector<std::uint32_t> tasks_needing_restart(
    std::uint32_t failed_vertex, const partition_availability& available) const = 0;
  /// "RestartPipelinedRegionFailoverStrategy" / "RestartAllFailoverStrategy".
  virtual std::string name() const = 0;
};

/// Restarts the failed task's pipelined region, the regions producing the blocking inputs it
/// needs that are no longer available, and every region consuming what a restarted region
/// produces, until nothing more is added.
class restart_pipelined_region_failover_strategy final : public failover_strategy {
public:
  /// `graph` must outlive the strategy. Precomputes per region its blocking inputs and outputs,
  /// so that a failure costs time in regions and groups, not in producers x consumers.
  explicit restart_pipelined_region_failover_strategy(const graph::execution_graph& graph);
  std::vector<std::uint32_t> tasks_needing_restart(
    std::uint32_t failed_vertex, const partition_availability& available) const override;
  std::string name() const override;

private:
  const graph::execution_graph* graph_;
  /// Per region: the consumed partition groups of its vertices whose producers are in other
  /// regions (the blocking ones), each once.
  std::vector<std::vector<std::uint32_t>> consumed_groups_;
  /// Per region: the consumer vertex groups of the partitions its vertices produce into other
  /// regions, each once.
  std::vector<std::vector<std::uint32_t>> consumer_groups_;
  /// Per consumer vertex group: the regions of its vertices, each once.
  std::vector<std::vector<std::uint32_t>> regions_of_consumer_group_;
};

/// Restarts every task.
class restart_all_failover_strategy final : public failover_strategy {
public:
  /// `graph` must outlive the strategy.
  explicit restart_all_failover_strategy(const graph::execution_graph& graph);
  std::vector<std::uint32_t> tasks_needing_restart(
    std::uint32_t failed_vertex, const partition_availability& available) const override;
  std::string name() const override;

private:
  const graph::execution_graph* graph_;
};

enum class failover_strategy_kind { region, full };

/// Reads `jobmanager.execution.failover-strategy`: `region` (the default) or `full`, any case;
/// errc::invalid_argument naming the key otherwise.
expected<failover_strategy_kind> read_failover_strategy(const config::configuration& config);

/// The strategy of `kind` over `graph`, which must outlive it.
std::unique_ptr<failover_strategy> make_failover_strategy(failover_strategy_kind kind,
                                                          const graph::execution_graph& graph);

/// Reads `jobmanager.execution.failover-strategy`: `region` (the default) or `full`, any case.
/// `graph` must outlive the strategy. An unknown value is errc::invalid_argument naming the key.
expected<std::unique_ptr<failover_strategy>> make_failover_strategy(
  const config::configuration& config, const graph::execution_graph& graph);

} // namespace flint::job_master::failover
