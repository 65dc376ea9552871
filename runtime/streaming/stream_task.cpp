#include "runtime/streaming/stream_task.hpp"

#include "runtime/network/local_input_channel.hpp"
#include "runtime/streaming/key_groups.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <string>
#include <utility>

namespace flint::streaming {

stream_task::stream_task(job_program program, graph::task_deployment_descriptor tdd,
                         std::shared_ptr<shuffle_environment> shuffle, std::function<void(std::string_view)> write_stdout)
  : program_(std::move(program)), tdd_(std::move(tdd)), shuffle_(std::move(shuffle)),
    write_stdout_(std::move(write_stdout)) {
  shuffle_->task_started();
}

stream_task::~stream_task() {
  clean_up();
  shuffle_->task_ended();
}

void stream_task::attach(std::shared_ptr<task_executor::task_context> context) {
  context_ = std::move(context);
}

network::availability_listener stream_task::waker() const {
  return [context = context_] {
    if (context)
      context->wake();
  };
}

expected<unit> stream_task::before_invoke() {
  if (!program_.stream || !program_.job)
    return make_error(errc::invalid_argument, "no program for task " + tdd_.task_name);
  const auto& job = *program_.job;
  if (tdd_.job_id != job.job_id)
    return make_error(errc::invalid_argument, "task " + tdd_.task_name + " belongs to job " + tdd_.job_id.to_string() +
                                                " but the program compiled in is job " + job.job_id.to_string());
  auto index = job.find_vertex(tdd_.job_vertex_id);
  if (!index)
    return make_error(errc::not_found, "job " + job.job_id.to_string() + " has no vertex " +
                                         tdd_.job_vertex_id.to_string());
  vertex_ = &job.vertices[*index];
  if (vertex_->operators.empty())
    return make_error(errc::invalid_argument, "vertex " + vertex_->name + " has no operators");

  // Flink's buffer timeout of a task: the smallest of its chain's, -1 only when all are -1.
  buffer_timeout_ms_ = -1;
  for (const auto& op : vertex_->operators)
    if (op.buffer_timeout >= 0)
      buffer_timeout_ms_ = buffer_timeout_ms_ < 0 ? op.buffer_timeout : std::min(buffer_timeout_ms_, op.buffer_timeout);

  for (const auto& produced : tdd_.produced_partitions) {
    auto partition = shuffle_->create_partition(
      tdd_.job_id, network::result_partition_id{produced.result_id, produced.partition_number},
      static_cast<std::size_t>(produced.number_of_subpartitions));
    if (!partition)
      return partition.error();
    writers_.push_back(std::make_unique<partition_writer>(std::move(*partition), &yield_, buffer_timeout_ms_ == 0));
  }

  if (auto built = build_chain(); !built)
    return built;

  partitions_ = shuffle_->partitions_of(tdd_.job_id);
  for (std::size_t g = 0; g < tdd_.input_gates.size(); ++g) {
    const auto& descriptor = tdd_.input_gates[g];
    gate_state state;
    state.gate = std::make_unique<network::input_gate>(g, nullptr);
    state.channels.resize(descriptor.partition_numbers.size());
    for (std::size_t c = 0; c < descriptor.partition_numbers.size(); ++c) {
      network::result_partition_id id{descriptor.consumed_result_id, descriptor.partition_numbers[c]};
      state.channels[c].partition = id;
      state.gate->add_channel(std::make_unique<network::local_input_channel>(
        c, id, static_cast<std::size_t>(descriptor.consumed_subpartition_index), *partitions_));
    }
    if (auto ok = state.gate->setup(); !ok)
      return ok;
    state.gate->set_availability_listener(waker());
    gates_.push_back(std::move(state));
  }
  if (!source_ && gates_.empty())
    return make_error(errc::invalid_argument, "task " + tdd_.task_name + " has neither a source nor inputs");
  if (auto ok = request_partitions(); !ok)
    return ok;

  for (auto it = operators_.rbegin(); it != operators_.rend(); ++it)
    (*it)->open();
  return unit{};
}

expected<unit> stream_task::build_chain() {
  const auto& job = *program_.job;
  const auto& stream = *program_.stream;
  int key_groups = tdd_.max_parallelism > 0 ? tdd_.max_parallelism : default_max_parallelism(tdd_.parallelism);
  for (auto e : vertex_->inputs)
    if (job.edges.at(e).partitioner == graph::partitioner_kind::key_group && job.edges[e].key_group_max_parallelism > 0)
      key_groups = job.edges[e].key_group_max_parallelism;

  const auto& chain = vertex_->operators;
  std::map<int, stream_operator*> built;
  operators_.resize(chain.size());
  for (std::size_t i = chain.size(); i-- > 0;) {
    const auto& co = chain[i];
    if (!stream.contains(co.stream_node_id))
      return make_error(errc::invalid_argument, "the program has no operator " + co.name + " (stream node " +
                                                  std::to_string(co.stream_node_id) + ")");
    const auto& node = stream.node(co.stream_node_id);
    if (!node.factory)
      return make_error(errc::invalid_argument, "operator " + co.name + " has no factory");

    operator_context ctx;
    ctx.operator_name = co.name;
    ctx.task_name = tdd_.task_name;
    ctx.subtask_index = tdd_.subtask_index;
    ctx.parallelism = tdd_.parallelism;
    ctx.key_group_max_parallelism = key_groups;
    ctx.key_groups = key_group_range_for_operator(key_groups, tdd_.parallelism, tdd_.subtask_index);
    ctx.write_stdout = write_stdout_;
    ctx.wake = waker();
    ctx.yield = &yield_;
    for (int target : co.chained_outputs) {
      auto it = built.find(target);
      if (it == built.end())
        return make_error(errc::invalid_argument, "operator " + co.name + " is chained to stream node " +
                                                    std::to_string(target) + ", which is not later in its chain");
      ctx.chained_targets.push_back(it->second);
    }
    for (auto e : co.non_chained_outputs) {
      const auto& edge = job.edges.at(e);
      const auto& data_set = job.data_sets.at(edge.source);
      partition_writer* writer = nullptr;
      for (auto& w : writers_)
        if (w->partition().id().result == data_set.id)
          writer = w.get();
      if (!writer)
        return make_error(errc::invalid_argument, "task " + tdd_.task_name + " produces no partition of result " +
                                                    data_set.id.to_string());
      network_output out;
      out.writer = writer;
      out.partitioner = edge.partitioner;
      out.key_group_max_parallelism = edge.key_group_max_parallelism;
      for (const auto& se : stream.edges())
        if (se.source_id == edge.source_node_id && se.target_id == edge.target_node_id)
          out.key = se.partitioner.key.get();
      ctx.network_outputs.push_back(out);
    }
    auto op = node.factory->create_operator(ctx);
    if (!op)
      return make_error(errc::invalid_argument, "operator " + co.name + " (" + std::string(node.factory->kind()) +
                                                  ") cannot run in a stream task");
    built[co.stream_node_id] = op.get();
    operators_[i] = std::move(op);
  }
  if (vertex_->invokable == graph::task_kind::source_stream_task) {
    source_ = dynamic_cast<source_operator*>(operators_.front().get());
    if (!source_)
      return make_error(errc::invalid_argument, "the head of source task " + tdd_.task_name + " is not a source");
  } else {
    input_ = dynamic_cast<serialized_input*>(operators_.front().get());
    if (!input_)
      return make_error(errc::invalid_argument, "the head of task " + tdd_.task_name + " takes no input");
  }
  return unit{};
}

expected<unit> stream_task::request_partitions() {
  pending_requests_ = false;
  for (auto& gate : gates_) {
    for (std::size_t c = 0; c < gate.channels.size(); ++c) {
      auto& channel = gate.channels[c];
      while (!channel.requested) {
        auto ok = gate.gate->channel(c).request_subpartition();
        if (ok) {
          channel.requested = true;
          break;
        }
        if (ok.error().code != errc::not_found)
          return make_error(ok.error().code, "task " + tdd_.task_name + ": " + ok.error().message);
        // The producer has not registered it yet (Flink retries the partition request); wait
        // for its registration instead of polling.
        if (shuffle_->notify_when_registered(tdd_.job_id, channel.partition, waker())) {
          pending_requests_ = true;
          break;
        }
      }
    }
  }
  return unit{};
}

bool stream_task::drain_outputs() {
  for (auto& writer : writers_) {
    while (!writer->try_drain()) {
      if (writer->notify_when_available(waker()))
        return false;
    }
  }
  yield_ = false;
  return true;
}

expected<bool> stream_task::step() {
  if (phase_ == phase::finished)
    return true;
  if (phase_ == phase::created) {
    if (auto ok = before_invoke(); !ok)
      return ok.error();
    phase_ = phase::running;
  }
  has_work_ = true;
  if (!drain_outputs()) {
    has_work_ = false;
    return false;
  }
  if (phase_ == phase::running) {
    if (pending_requests_)
      if (auto ok = request_partitions(); !ok)
        return ok.error();
    if (source_) {
      run_source();
    } else if (auto ok = run_input(); !ok) {
      return ok.error();
    }
    for (auto& op : operators_)
      op->end_of_batch();
  }
  if (phase_ == phase::ending) {
    if (end_outputs())
      return true;
    has_work_ = false;
    return false;
  }
  if (yield_ && !drain_outputs())
    has_work_ = false;
  arm_flush_timer();
  return false;
}

void stream_task::run_source() {
  auto status = source_->emit_next(records_per_step);
  if (status == source_status::end_of_input)
    end_input();
  else if (status == source_status::nothing_available && !yield_)
    has_work_ = false;
}

expected<unit> stream_task::run_input() {
  std::size_t n = 0;
  while (n < records_per_step && !yield_) {
    if (current_) {
      std::span<const char> record;
      if (current_->next_record(record) == network::deserialization_result::record) {
        input_->process_serialized(record);
        ++n;
        continue;
      }
      current_ = nullptr;
    }
    std::optional<network::buffer_or_event> next;
    std::size_t g = 0;
    for (std::size_t i = 0; i < gates_.size() && !next; ++i) {
      g = (next_gate_ + i) % gates_.size();
      next = gates_[g].gate->poll_next();
    }
    if (!next) {
      // The gate's listener fires when a channel turns non-empty again.
      has_work_ = false;
      break;
    }
    next_gate_ = g + 1;
    auto& channel = gates_[g].channels.at(next->channel);
    if (next->is_event()) {
      if (next->buf.kind() == network::buffer_kind::end_of_partition) {
        if (channel.deserializer.has_unfinished_data())
          return make_error(errc::internal, "task " + tdd_.task_name + ": a record was cut off by end-of-partition");
        if (!channel.consumed) {
          channel.consumed = true;
          shuffle_->subpartition_consumed(tdd_.job_id, channel.partition);
        }
        if (std::all_of(gates_.begin(), gates_.end(), [](const gate_state& s) { return s.gate->is_finished(); })) {
          end_input();
          break;
        }
      }
      continue;
    }
    channel.deserializer.set_next_buffer(std::move(next->buf));
    current_ = &channel.deserializer;
  }
  return unit{};
}

void stream_task::end_input() {
  for (auto& op : operators_)
    op->finish();
  for (auto& op : operators_)
    op->end_of_batch();
  phase_ = phase::ending;
}

bool stream_task::end_outputs() {
  if (!drain_outputs())
    return false;
  for (auto& writer : writers_) {
    writer->partition().finish();
    shuffle_->producer_finished(tdd_.job_id, writer->partition().id());
  }
  phase_ = phase::finished;
  closed_ = true;
  for (auto& op : operators_)
    op->close();
  return true;
}

void stream_task::arm_flush_timer() {
  if (buffer_timeout_ms_ <= 0 || timer_armed_ || !context_)
    return;
  bool dirty = std::any_of(writers_.begin(), writers_.end(), [](const auto& w) { return w->is_dirty(); });
  if (!dirty)
    return;
  timer_armed_ = true;
  context_->schedule_timer(std::chrono::milliseconds(buffer_timeout_ms_), ++timer_id_);
}

void stream_task::on_timer(std::uint64_t id) {
  if (id != timer_id_ || !timer_armed_)
    return;
  timer_armed_ = false;
  if (phase_ != phase::running && phase_ != phase::ending)
    return;
  for (auto& writer : writers_)
    if (writer->is_dirty())
      writer->flush();
  // Records waiting for buffers keep the data dirty; the next step re-arms.
}

void stream_task::clean_up() noexcept {
  if (!closed_) {
    closed_ = true;
    for (auto& op : operators_) {
      try {
        if (op)
          op->close();
      } catch (...) {
        // Best effort: the task already ends.
      }
    }
  }
  current_ = nullptr;
  for (auto& gate : gates_) {
    for (auto& channel : gate.channels)
      if (!channel.consumed) {
        channel.consumed = true;
        shuffle_->subpartition_consumed(tdd_.job_id, channel.partition);
      }
    gate.gate->release();
  }
  gates_.clear();
  operators_.clear();
  for (auto& writer : writers_)
    if (phase_ != phase::finished)
      shuffle_->producer_failed(tdd_.job_id, writer->partition().id());
  writers_.clear();
}

} // namespace flint::streaming
