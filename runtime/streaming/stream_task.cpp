#include "runtime/streaming/stream_task.hpp"

#include "runtime/streaming/stream_operator_factory.hpp"

#include "runtime/network/local_input_channel.hpp"
#include "runtime/network/remote_input_channel.hpp"
#include "runtime/network/transport/remote_channel_client.hpp"
#include "runtime/network/transport/transport_messages.hpp"
#include "runtime/streaming/key_groups.hpp"
#include "runtime/streaming/remote_channels.hpp"

#include <caf/system_messages.hpp>
#include <caf/type_erased_tuple.hpp>

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
  interrupt_ = context_ ? context_->interrupt_flag() : nullptr;
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
      static_cast<std::size_t>(produced.number_of_subpartitions), produced.partition_type);
    if (!partition)
      return make_error(partition.error().code, "task " + tdd_.task_name + ": " + partition.error().message);
    writers_.push_back(std::make_unique<partition_writer>(std::move(*partition), &yield_, buffer_timeout_ms_ == 0));
  }

  if (auto built = build_chain(); !built)
    return built;

  partitions_ = shuffle_->partitions_of(tdd_.job_id);
  remote_ = shuffle_->remote();
  for (std::size_t g = 0; g < tdd_.input_gates.size(); ++g)
    if (auto ok = make_gate(g, remote_.get()); !ok)
      return ok;
  if (!source_ && gates_.empty())
    return make_error(errc::invalid_argument, "task " + tdd_.task_name + " has neither a source nor inputs");
  if (auto ok = request_partitions(); !ok)
    return ok;
  if (remote_)
    if (auto ok = start_remote_channels(*remote_); !ok)
      return ok;

  for (auto it = operators_.rbegin(); it != operators_.rend(); ++it)
    (*it)->open();
  return unit{};
}

expected<unit> stream_task::make_gate(std::size_t g, remote_channels* remote) {
  const auto& descriptor = tdd_.input_gates[g];
  auto located = [&](std::size_t c) {
    return c < descriptor.producer_locations.size() ? descriptor.producer_locations[c] : graph::producer_location{};
  };
  // Flink's SingleInputGateFactory: a channel is local when its producer runs in this process
  // (contract C), remote otherwise; remote channels borrow floating buffers from the gate's pool.
  bool any_remote = false;
  if (remote)
    for (std::size_t c = 0; c < descriptor.partition_numbers.size(); ++c)
      any_remote = any_remote || !remote->is_local(located(c));
  std::shared_ptr<network::local_buffer_pool> floating;
  const auto& config = shuffle_->config();
  if (any_remote) {
    auto pool = shuffle_->buffer_pool().create_buffer_pool(0, config.floating_buffers_per_gate);
    if (!pool)
      return make_error(pool.error().code, "Insufficient network buffers for the input gate " + std::to_string(g) +
                                             " of " + tdd_.task_name + ": " + pool.error().message);
    floating = std::move(*pool);
  }
  gate_state state;
  state.gate = std::make_unique<network::input_gate>(g, floating);
  state.channels.resize(descriptor.partition_numbers.size());
  auto subpartition = static_cast<std::size_t>(descriptor.consumed_subpartition_index);
  for (std::size_t c = 0; c < descriptor.partition_numbers.size(); ++c) {
    network::result_partition_id id{descriptor.consumed_result_id, descriptor.partition_numbers[c]};
    state.channels[c].partition = id;
    state.channels[c].subpartition = subpartition;
    if (remote && !remote->is_local(located(c))) {
      state.gate->add_channel(std::make_unique<network::remote_input_channel>(
        network::input_channel_id{static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(c)}, c, id, subpartition,
        shuffle_->buffer_pool_ptr(), floating, config.buffers_per_channel));
      // The client comes once the channel is set up and requested (start_remote_channels).
      continue;
    }
    state.gate->add_channel(std::make_unique<network::local_input_channel>(c, id, subpartition, *partitions_));
  }
  // Pushed before setup so that clean_up releases whatever setup took.
  gates_.push_back(std::move(state));
  auto& gate = gates_.back();
  if (auto ok = gate.gate->setup(); !ok)
    return make_error(ok.error().code, "task " + tdd_.task_name + ": " + ok.error().message);
  gate.gate->set_availability_listener(waker());
  return unit{};
}

expected<unit> stream_task::start_remote_channels(remote_channels& remote) {
  auto self = context_ ? context_->actor() : caf::actor{};
  for (std::size_t g = 0; g < gates_.size(); ++g) {
    const auto& descriptor = tdd_.input_gates[g];
    for (std::size_t c = 0; c < gates_[g].channels.size(); ++c) {
      auto* channel = dynamic_cast<network::remote_input_channel*>(&gates_[g].gate->channel(c));
      if (!channel)
        continue;
      if (!self)
        return make_error(errc::illegal_state, "task " + tdd_.task_name + " has no actor for its remote channels");
      const auto& producer = descriptor.producer_locations.at(c);
      auto server = remote.server_of(producer);
      if (!server)
        return make_error(server.error().code, "task " + tdd_.task_name + ": " + server.error().message);
      auto& state = gates_[g].channels[c];
      // A producer process that dies, or whose node becomes unreachable, fails this task.
      if (!remote.is_local(producer) && context_)
        context_->monitor(*server);
      state.client = std::make_unique<network::transport::remote_channel_client>(self, *server, *channel,
                                                                                 shuffle_->config(), tdd_.job_id);
      state.client->request();
    }
  }
  return unit{};
}

network::transport::remote_channel_client* stream_task::client_of(std::uint32_t gate, std::uint32_t channel) {
  if (gate >= gates_.size() || channel >= gates_[gate].channels.size())
    return nullptr;
  return gates_[gate].channels[channel].client.get();
}

void stream_task::fail(error cause) {
  if (!failure_)
    failure_ = make_error(cause.code, "task " + tdd_.task_name + ": " + cause.message);
}

std::size_t stream_task::num_remote_channels() const {
  std::size_t n = 0;
  for (const auto& gate : gates_)
    for (const auto& channel : gate.channels)
      n += channel.client ? 1 : 0;
  return n;
}

bool stream_task::on_message(caf::type_erased_tuple& content) {
  using namespace network::transport;
  auto after = [this](const expected<unit>& ok) {
    if (!ok)
      fail(ok.error());
  };
  if (content.match_elements<buffer_atom, wire_u32, wire_u32, wire_u64, wire_u64, wire_kind, std::vector<char>>()) {
    if (auto* client = client_of(content.get_as<wire_u32>(1), content.get_as<wire_u32>(2)))
      after(client->on_buffer(content.get_as<wire_u64>(3), content.get_as<wire_u64>(4), content.get_as<wire_kind>(5),
                              content.get_as<std::vector<char>>(6)));
    return true;
  }
  if (content.match_elements<local_buffer_atom, wire_u32, wire_u32, wire_u64, wire_u64, shared_buffer>()) {
    // A dropped holder returns the producer's buffer to its pool.
    if (auto* client = client_of(content.get_as<wire_u32>(1), content.get_as<wire_u32>(2)))
      after(client->on_local_buffer(content.get_as<wire_u64>(3), content.get_as<wire_u64>(4),
                                    content.get_as<shared_buffer>(5)));
    return true;
  }
  if (content.match_elements<partition_error_atom, wire_u32, wire_u32, wire_i32, std::string>()) {
    if (auto* client = client_of(content.get_as<wire_u32>(1), content.get_as<wire_u32>(2))) {
      // Not found: retried after Flink's back-off; anything else, or the back-off used up, fails.
      auto delay = client->on_partition_error(content.get_as<wire_i32>(3), content.get_as<std::string>(4));
      if (!delay)
        fail(delay.error());
    }
    return true;
  }
  if (content.match_elements<caf::down_msg>()) {
    const auto& down = content.get_as<caf::down_msg>(0);
    for (std::size_t g = 0; g < gates_.size() && remote_; ++g) {
      for (std::size_t c = 0; c < gates_[g].channels.size(); ++c) {
        auto& channel = gates_[g].channels[c];
        if (!channel.client || channel.consumed)
          continue;
        const auto& producer = tdd_.input_gates[g].producer_locations.at(c);
        if (channel.client->server().address() != down.source)
          continue;
        remote_->forget(producer);
        fail(make_error(errc::unreachable, "the partition server of " + producer.resource_id + " at " +
                                             producer.host + ":" + std::to_string(producer.data_port) +
                                             " is gone (" + caf::to_string(down.reason) + ") before partition " +
                                             network::to_string(channel.partition) + " ended"));
        return true;
      }
    }
    return true;
  }
  if (content.match_elements<retry_request_atom, wire_u32, wire_u32>()) {
    auto gate = content.get_as<wire_u32>(1);
    auto channel = content.get_as<wire_u32>(2);
    if (auto* client = client_of(gate, channel); client && !gates_[gate].channels[channel].consumed)
      client->retry();
    return true;
  }
  return false;
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
    ctx.interrupt = interrupt_;
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
    const auto* runnable = dynamic_cast<const stream_operator_factory*>(node.factory.get());
    auto op = runnable != nullptr ? runnable->create_operator(ctx) : nullptr;
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
  if (failure_)
    return *failure_;
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
    auto ended = end_outputs();
    if (!ended)
      return ended.error();
    if (*ended)
      return true;
    has_work_ = false;
    return false;
  }
  if (yield_ && !drain_outputs())
    has_work_ = false;
  if (auto failed = output_failure())
    return *failed;
  arm_flush_timer();
  return false;
}

std::optional<error> stream_task::output_failure() const {
  for (const auto& writer : writers_)
    if (auto failed = writer->partition().failure())
      return make_error(failed->code, "task " + tdd_.task_name + ": " + failed->message);
  return std::nullopt;
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
  const yield_signal stop{&yield_, interrupt_};
  while (n < records_per_step && !stop()) {
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
          // A remote producer's partition request server counts it when it sent end-of-partition.
          if (!channel.client)
            shuffle_->subpartition_consumed(tdd_.job_id, channel.partition, channel.subpartition);
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

expected<bool> stream_task::end_outputs() {
  if (!drain_outputs())
    return false;
  for (auto& writer : writers_)
    writer->partition().finish();
  // A blocking partition that could not write all its data must not look finished to readers:
  // the task fails and clean_up releases it.
  if (auto failed = output_failure())
    return *failed;
  for (auto& writer : writers_)
    shuffle_->producer_finished(tdd_.job_id, writer->partition().id());
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
    for (auto& channel : gate.channels) {
      if (channel.client) {
        // The producer's server drops the reader and counts the subpartition consumed.
        if (!channel.consumed)
          channel.client->cancel();
        // Before the gate releases the channel: the client unhooks its credit listener.
        channel.client.reset();
        channel.consumed = true;
      } else if (!channel.consumed) {
        channel.consumed = true;
        shuffle_->subpartition_consumed(tdd_.job_id, channel.partition, channel.subpartition);
      }
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
