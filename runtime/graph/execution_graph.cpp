#include "runtime/graph/execution_graph.hpp"

#include "runtime/graph/stream_partitioner.hpp"

#include <limits>
#include <numeric>
#include <random>

namespace flint::graph {

namespace {

/// Union-find over subtask indices, for the pipelined regions.
class disjoint_sets {
public:
  explicit disjoint_sets(std::size_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0u);
  }

  std::uint32_t find(std::uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a != b)
      parent_[a < b ? b : a] = a < b ? a : b;
  }

private:
  std::vector<std::uint32_t> parent_;
};

execution_graph_id random_execution_graph_id() {
  std::random_device device;
  auto next = [&device] {
    return (static_cast<std::uint64_t>(device()) << 32) ^ static_cast<std::uint64_t>(device());
  };
  auto upper = next();
  return {upper, next()};
}

} // namespace

expected<execution_graph> execution_graph::build(graph::job_graph job) {
  return build(std::move(job), random_execution_graph_id());
}

expected<execution_graph> execution_graph::build(graph::job_graph job, execution_graph_id id) {
  if (auto valid = job.validate(); !valid)
    return valid.error();
  for (const auto& data_set : job.data_sets)
    if (data_set.consumers.size() != 1)
      return make_error(errc::invalid_argument,
                        "IntermediateDataSet " + data_set.id.to_string() + " has "
                          + std::to_string(data_set.consumers.size())
                          + " consumers; Flint supports exactly one");
  std::size_t subtasks = 0;
  for (const auto& vertex : job.vertices)
    subtasks += static_cast<std::size_t>(vertex.parallelism);
  if (subtasks >= std::numeric_limits<std::uint32_t>::max())
    return make_error(errc::invalid_argument, "too many subtasks: " + std::to_string(subtasks));
  auto order = job.vertices_sorted_topologically();
  if (!order)
    return order.error();

  execution_graph graph(std::move(job), id);
  if (auto created = graph.create_vertices(*order); !created)
    return created.error();
  for (std::uint32_t ejv = 0; ejv < graph.job_vertices_.size(); ++ejv)
    for (std::uint32_t result : graph.job_vertices_[ejv].inputs) {
      if (graph.results_[result].pattern == distribution_pattern::all_to_all)
        graph.connect_all_to_all(ejv, result);
      else
        graph.connect_pointwise(ejv, result);
    }
  graph.compute_pipelined_regions();
  return graph;
}

expected<unit> execution_graph::create_vertices(const std::vector<std::size_t>& order) {
  std::vector<std::uint32_t> ejv_of_job_vertex(job_.vertices.size());
  std::vector<std::uint32_t> result_of_data_set(job_.data_sets.size());
  job_vertices_.reserve(order.size());
  std::size_t total = 0;
  for (const auto& vertex : job_.vertices)
    total += static_cast<std::size_t>(vertex.parallelism);
  vertices_.reserve(total);

  for (std::size_t jv : order) {
    const job_vertex& vertex = job_.vertices[jv];
    execution_job_vertex ejv;
    ejv.job_vertex = static_cast<std::uint32_t>(jv);
    ejv.parallelism = vertex.parallelism;
    int configured =
      vertex.max_parallelism > 0 ? vertex.max_parallelism : job_.execution_config.max_parallelism;
    if (configured > 0 && vertex.parallelism > configured)
      return make_error(errc::invalid_argument,
                        "Vertex " + vertex.name + "'s parallelism ("
                          + std::to_string(vertex.parallelism)
                          + ") is higher than the max parallelism (" + std::to_string(configured)
                          + "). Please lower the parallelism or increase the max parallelism.");
    ejv.max_parallelism =
      configured > 0 ? configured : compute_default_max_parallelism(vertex.parallelism);
    ejv.first_vertex = static_cast<std::uint32_t>(vertices_.size());
    auto index = static_cast<std::uint32_t>(job_vertices_.size());
    ejv_of_job_vertex[jv] = index;

    for (int subtask = 0; subtask < vertex.parallelism; ++subtask) {
      execution_vertex ev;
      ev.job_vertex = index;
      ev.subtask_index = subtask;
      ev.consumed_partition_groups.reserve(vertex.inputs.size());
      vertices_.push_back(std::move(ev));
    }
    for (std::size_t ds : vertex.produced_data_sets) {
      intermediate_result result;
      result.id = job_.data_sets[ds].id;
      result.producer = index;
      result.result_type = job_.data_sets[ds].result_type;
      const job_edge& consumer_edge = job_.edges[job_.data_sets[ds].consumers.front()];
      result.pattern = consumer_edge.pattern;
      result.first_partition = static_cast<std::uint32_t>(partitions_.size());
      result.num_partitions = static_cast<std::uint32_t>(vertex.parallelism);
      auto result_index = static_cast<std::uint32_t>(results_.size());
      result_of_data_set[ds] = result_index;
      for (int subtask = 0; subtask < vertex.parallelism; ++subtask)
        partitions_.push_back(
          intermediate_result_partition{result_index, static_cast<std::uint32_t>(subtask),
                                        ejv.first_vertex + static_cast<std::uint32_t>(subtask), 0});
      results_.push_back(result);
      ejv.produced_results.push_back(result_index);
    }
    job_vertices_.push_back(std::move(ejv));
  }
  // Producers come first in topological order, so every input's result exists by now.
  for (auto& ejv : job_vertices_)
    for (std::size_t e : job_.vertices[ejv.job_vertex].inputs) {
      std::uint32_t result = result_of_data_set[job_.edges[e].source];
      ejv.inputs.push_back(result);
      results_[result].consumer = static_cast<std::uint32_t>(&ejv - job_vertices_.data());
    }
  return unit{};
}

void execution_graph::connect_all_to_all(std::uint32_t consumer, std::uint32_t result_index) {
  const intermediate_result& result = results_[result_index];
  const execution_job_vertex& ejv = job_vertices_[consumer];
  auto group = static_cast<std::uint32_t>(consumed_groups_.size());
  consumed_groups_.push_back(
    consumed_partition_group{result_index, result.first_partition, result.num_partitions});
  auto consumers = static_cast<std::uint32_t>(consumer_groups_.size());
  consumer_groups_.push_back(
    consumer_vertex_group{ejv.first_vertex, static_cast<std::uint32_t>(ejv.parallelism)});
  for (std::int32_t i = 0; i < ejv.parallelism; ++i)
    vertices_[ejv.first_vertex + static_cast<std::uint32_t>(i)].consumed_partition_groups.push_back(
      group);
  for (std::uint32_t p = 0; p < result.num_partitions; ++p)
    partitions_[result.first_partition + p].consumer_vertex_group = consumers;
}

void execution_graph::connect_pointwise(std::uint32_t consumer, std::uint32_t result_index) {
  const intermediate_result& result = results_[result_index];
  const execution_job_vertex& ejv = job_vertices_[consumer];
  const std::uint64_t sources = result.num_partitions;
  const std::uint64_t targets = static_cast<std::uint64_t>(ejv.parallelism);
  auto add_consumed = [&](std::uint64_t first, std::uint64_t size) {
    consumed_groups_.push_back(consumed_partition_group{
      result_index, result.first_partition + static_cast<std::uint32_t>(first),
      static_cast<std::uint32_t>(size)});
    return static_cast<std::uint32_t>(consumed_groups_.size() - 1);
  };
  auto add_consumers = [&](std::uint64_t first, std::uint64_t size) {
    consumer_groups_.push_back(consumer_vertex_group{
      ejv.first_vertex + static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(size)});
    return static_cast<std::uint32_t>(consumer_groups_.size() - 1);
  };
  if (sources >= targets) {
    // Each consumer reads a contiguous run of partitions (one when the counts match).
    for (std::uint64_t index = 0; index < targets; ++index) {
      std::uint64_t start = index * sources / targets;
      std::uint64_t end = (index + 1) * sources / targets;
      vertices_[ejv.first_vertex + index].consumed_partition_groups.push_back(
        add_consumed(start, end - start));
      std::uint32_t consumers = add_consumers(index, 1);
      for (std::uint64_t p = start; p < end; ++p)
        partitions_[result.first_partition + p].consumer_vertex_group = consumers;
    }
  } else {
    // Each partition feeds a contiguous run of consumers, which share its one-partition group.
    for (std::uint64_t p = 0; p < sources; ++p) {
      std::uint64_t start = (p * targets + sources - 1) / sources;
      std::uint64_t end = ((p + 1) * targets + sources - 1) / sources;
      std::uint32_t group = add_consumed(p, 1);
      partitions_[result.first_partition + p].consumer_vertex_group =
        add_consumers(start, end - start);
      for (std::uint64_t i = start; i < end; ++i)
        vertices_[ejv.first_vertex + i].consumed_partition_groups.push_back(group);
    }
  }
}

void execution_graph::compute_pipelined_regions() {
  disjoint_sets sets(vertices_.size());
  // Per group: tie its producers together once, then each consumer to that tie. Linear in
  // subtasks plus groups, even for a 10k x 10k ALL_TO_ALL edge.
  constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> group_anchor(consumed_groups_.size(), none);
  for (std::uint32_t v = 0; v < vertices_.size(); ++v) {
    for (std::uint32_t g : vertices_[v].consumed_partition_groups) {
      const consumed_partition_group& group = consumed_groups_[g];
      if (!is_pipelined(results_[group.result].result_type) || group.size == 0)
        continue;
      if (group_anchor[g] == none) {
        std::uint32_t anchor = partitions_[group.first_partition].producer;
        for (std::uint32_t p = 1; p < group.size; ++p)
          sets.unite(anchor, partitions_[group.first_partition + p].producer);
        group_anchor[g] = anchor;
      }
      sets.unite(v, group_anchor[g]);
    }
  }
  constexpr std::uint32_t unassigned = none;
  std::vector<std::uint32_t> region_of_root(vertices_.size(), unassigned);
  for (std::uint32_t v = 0; v < vertices_.size(); ++v) {
    std::uint32_t root = sets.find(v);
    if (region_of_root[root] == unassigned) {
      region_of_root[root] = static_cast<std::uint32_t>(regions_.size());
      regions_.emplace_back();
    }
    vertices_[v].region = region_of_root[root];
    regions_[region_of_root[root]].vertices.push_back(v);
  }
}

std::optional<std::uint32_t> execution_graph::find_job_vertex(const job_vertex_id& id) const {
  for (std::uint32_t i = 0; i < job_vertices_.size(); ++i)
    if (job_vertex_of(i).id == id)
      return i;
  return std::nullopt;
}

std::string execution_graph::task_name_with_subtask(std::uint32_t vertex) const {
  const execution_vertex& ev = vertices_[vertex];
  const execution_job_vertex& ejv = job_vertices_[ev.job_vertex];
  return job_vertex_of(ev.job_vertex).name + " (" + std::to_string(ev.subtask_index + 1) + "/"
    + std::to_string(ejv.parallelism) + ")";
}

execution_vertex_id execution_graph::vertex_id(std::uint32_t vertex) const {
  return {job_vertex_of(vertices_[vertex].job_vertex).id, vertices_[vertex].subtask_index};
}

intermediate_result_partition_id execution_graph::partition_id(std::uint32_t partition) const {
  const auto& p = partitions_[partition];
  return {results_[p.result].id, static_cast<std::int32_t>(p.partition_number)};
}

execution_attempt_id execution_graph::attempt_id(std::uint32_t vertex) const {
  auto vertex_of = vertex_id(vertex);
  return {id_, vertex_of.job_vertex, vertex_of.subtask_index,
          vertices_[vertex].current_execution.attempt_number()};
}

expected<unit> execution_graph::transition_execution(std::uint32_t vertex, execution_state to) {
  if (vertex >= vertices_.size())
    return make_error(errc::not_found, "no execution vertex " + std::to_string(vertex));
  auto moved = vertices_[vertex].current_execution.transition_state(to);
  if (!moved)
    return make_error(moved.error().code,
                      task_name_with_subtask(vertex) + ": " + moved.error().message);
  return moved;
}

expected<unit> execution_graph::reset_for_new_execution(std::uint32_t vertex) {
  if (vertex >= vertices_.size())
    return make_error(errc::not_found, "no execution vertex " + std::to_string(vertex));
  auto& current = vertices_[vertex].current_execution;
  if (!is_terminal(current.state()))
    return make_error(errc::illegal_state,
                      task_name_with_subtask(vertex) + ": cannot reset an execution in state "
                        + std::string(to_string(current.state())));
  current = execution(current.attempt_number() + 1);
  return unit{};
}

expected<unit> execution_graph::transition_state(job_status to) {
  if (auto legal = check_transition(state_, to); !legal)
    return legal;
  state_ = to;
  return unit{};
}

} // namespace flint::graph
