#include "runtime/streaming/operator_chain.hpp"

#include "runtime/network/stream_events.hpp"
#include "runtime/streaming/key_groups.hpp"
#include "runtime/streaming/local_state_root.hpp"
#include "runtime/state/state_backend_options.hpp"
#include "runtime/streaming/stream_operator_factory.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

namespace flint::streaming {
namespace {

/// An operator's watermarks to the operators chained to it and into its partitions, behind the
/// records it emitted before them.
class chain_watermark_forwarder final : public watermark_forwarder {
public:
  chain_watermark_forwarder(std::vector<stream_operator*> chained, std::vector<record_writer*> writers)
    : chained_(std::move(chained)),
      writers_(std::move(writers)) {}

  void emit_watermark(std::int64_t watermark) override {
    for (auto* op : chained_)
      op->process_watermark(watermark);
    if (writers_.empty())
      return;
    auto event = network::to_watermark_event(watermark);
    for (auto* w : writers_)
      w->broadcast_event(event);
  }
  void emit_watermark_status(bool idle) override {
    for (auto* op : chained_)
      op->process_watermark_status(idle);
    if (writers_.empty())
      return;
    auto event = network::to_watermark_status_event(idle);
    for (auto* w : writers_)
      w->broadcast_event(event);
  }

private:
  std::vector<stream_operator*> chained_;
  std::vector<record_writer*> writers_;
};

} // namespace

expected<operator_chain> build_operator_chain(
  const job_program& program, const graph::task_deployment_descriptor& tdd,
  const graph::job_vertex& vertex, const std::vector<std::unique_ptr<partition_writer>>& writers,
  const chain_hooks& hooks) {
  const auto& job = *program.job;
  const auto& stream = *program.stream;
  int key_groups =
    tdd.max_parallelism > 0 ? tdd.max_parallelism : default_max_parallelism(tdd.parallelism);
  for (auto e : vertex.inputs)
    if (job.edges.at(e).partitioner == graph::partitioner_kind::key_group
        && job.edges[e].key_group_max_parallelism > 0)
      key_groups = job.edges[e].key_group_max_parallelism;

  // The job's `state.backend.rocksdb.*` (its own over the cluster's, from the JobMaster).
  config::configuration backend_config;
  for (const auto& [key, value] : tdd.checkpointing.state_backend_configuration)
    backend_config.set(key, value, "job " + tdd.job_id.to_string());
  auto backend_options = state::keyed_state_backend_options_from(backend_config);
  if (!backend_options)
    return backend_options.error();

  const auto& chain = vertex.operators;
  operator_chain made;
  std::map<int, stream_operator*> built;
  made.operators.resize(chain.size());
  for (std::size_t i = chain.size(); i-- > 0;) {
    const auto& co = chain[i];
    if (!stream.contains(co.stream_node_id))
      return make_error(errc::invalid_argument,
                        "the program has no operator " + co.name + " (stream node "
                          + std::to_string(co.stream_node_id) + ")");
    const auto& node = stream.node(co.stream_node_id);
    if (!node.factory)
      return make_error(errc::invalid_argument, "operator " + co.name + " has no factory");

    operator_context ctx;
    ctx.operator_name = co.name;
    ctx.task_name = tdd.task_name;
    ctx.subtask_index = tdd.subtask_index;
    ctx.parallelism = tdd.parallelism;
    ctx.key_group_max_parallelism = key_groups;
    ctx.key_groups = key_group_range_for_operator(key_groups, tdd.parallelism, tdd.subtask_index);
    ctx.write_stdout = hooks.write_stdout;
    ctx.wake = hooks.wake;
    ctx.yield = hooks.yield;
    ctx.interrupt = hooks.interrupt;
    ctx.budget = hooks.budget;
    ctx.time = hooks.time;
    ctx.processing_time = hooks.processing_time;
    ctx.auto_watermark_interval = hooks.auto_watermark_interval;
    ctx.checkpointing = tdd.checkpointing.mode;
    ctx.state_backend.type = tdd.checkpointing.state_backend;
    ctx.state_backend.incremental = tdd.checkpointing.incremental;
    ctx.state_backend.rocksdb = backend_options->rocksdb;
    // RocksDB's working files: one directory per operator subtask and attempt in the process's
    // private local state root (Flink's taskmanager local state directory), made only for a job
    // that keeps its state there.
    if (hooks.local_state != nullptr && ctx.state_backend.type == "rocksdb") {
      auto root = hooks.local_state->path();
      if (!root)
        return root.error();
      ctx.state_backend.local_dir =
        (*root / tdd.job_id.to_string()
         / (co.id.to_string() + "-" + std::to_string(tdd.subtask_index) + "-"
            + std::to_string(tdd.attempt_number)))
          .string();
    }
    for (int target : co.chained_outputs) {
      auto it = built.find(target);
      if (it == built.end())
        return make_error(errc::invalid_argument,
                          "operator " + co.name + " is chained to stream node "
                            + std::to_string(target) + ", which is not later in its chain");
      ctx.chained_targets.push_back(it->second);
      std::string tag;
      for (const auto& se : stream.edges())
        if (se.source_id == co.stream_node_id && se.target_id == target)
          tag = se.output_tag;
      ctx.chained_target_tags.push_back(std::move(tag));
    }
    for (auto e : co.non_chained_outputs) {
      const auto& edge = job.edges.at(e);
      const auto& data_set = job.data_sets.at(edge.source);
      partition_writer* writer = nullptr;
      for (auto& w : writers)
        if (w->partition().id().result == data_set.id)
          writer = w.get();
      if (!writer)
        return make_error(
          errc::invalid_argument,
          "task " + tdd.task_name + " produces no partition of result " + data_set.id.to_string());
      network_output out;
      out.writer = writer;
      out.partitioner = edge.partitioner;
      out.key_group_max_parallelism = edge.key_group_max_parallelism;
      out.time = hooks.time;
      for (const auto& se : stream.edges())
        if (se.source_id == edge.source_node_id && se.target_id == edge.target_node_id) {
          out.key = se.partitioner.key.get();
          out.output_tag = se.output_tag;
        }
      ctx.network_outputs.push_back(out);
    }
    const auto* runnable = dynamic_cast<const stream_operator_factory*>(node.factory.get());
    auto op = runnable != nullptr ? runnable->create_operator(ctx) : nullptr;
    if (!op)
      return make_error(errc::invalid_argument,
                        "operator " + co.name + " (" + std::string(node.factory->kind())
                          + ") cannot run in a stream task");
    std::vector<record_writer*> event_writers;
    for (const auto& out : ctx.network_outputs)
      if (std::find(event_writers.begin(), event_writers.end(), out.writer) == event_writers.end())
        event_writers.push_back(out.writer);
    made.forwarders.push_back(
      std::make_unique<chain_watermark_forwarder>(ctx.chained_targets, std::move(event_writers)));
    op->set_watermark_forwarder(made.forwarders.back().get());
    built[co.stream_node_id] = op.get();
    made.operators[i] = std::move(op);
  }
  if (vertex.invokable == graph::task_kind::source_stream_task) {
    made.source = dynamic_cast<source_operator*>(made.operators.front().get());
    if (!made.source)
      return make_error(errc::invalid_argument,
                        "the head of source task " + tdd.task_name + " is not a source");
  } else {
    made.input = dynamic_cast<serialized_input*>(made.operators.front().get());
    made.two_input = dynamic_cast<serialized_two_input*>(made.operators.front().get());
    if (!made.input && !made.two_input)
      return make_error(errc::invalid_argument,
                        "the head of task " + tdd.task_name + " takes no input");
  }
  return made;
}

} // namespace flint::streaming
