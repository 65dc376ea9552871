#include "runtime/network/task_inputs.hpp"

#include "runtime/network/remote_input_channel.hpp"
#include "runtime/network/shuffle_environment.hpp"
#include "runtime/network/transport/connection_cache.hpp"
#include "runtime/network/transport/network_router.hpp"
#include "runtime/network/transport/remote_channel_client.hpp"
#include "runtime/state/checkpoint_metrics.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <utility>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/system_messages.hpp>

namespace flint::network {

/// Where the router delivers this task's transport messages.
class task_inputs::routes final : public transport::consumer_routes {
public:
  explicit routes(task_inputs& inputs) : inputs_(inputs) {}

  /// The channel `id` names, if the task has it.
  template <class Gates>
  static auto* find(Gates& gates, const input_channel_id& id) {
    using channel = std::remove_reference_t<decltype(gates[0].channels[0])>;
    if (id.gate >= gates.size() || id.channel >= gates[id.gate].channels.size())
      return static_cast<channel*>(nullptr);
    return &gates[id.gate].channels[id.channel];
  }

  transport::remote_channel_client* client_of(const input_channel_id& id) override {
    auto* channel = find(inputs_.gates_, id);
    return channel ? channel->client.get() : nullptr;
  }

  bool is_reading(const input_channel_id& id) const override {
    const auto* channel = find(std::as_const(inputs_.gates_), id);
    return channel && channel->client && !channel->consumed;
  }

  void fail(error cause) override { inputs_.fail(std::move(cause)); }

  void server_down(const caf::down_msg& down) override {
    auto& gates = inputs_.gates_;
    for (std::size_t g = 0; g < gates.size() && inputs_.connections_; ++g) {
      for (std::size_t c = 0; c < gates[g].channels.size(); ++c) {
        auto& channel = gates[g].channels[c];
        if (!channel.client || channel.consumed
            || channel.client->server().address() != down.source)
          continue;
        const auto& producer = inputs_.descriptors_[g].producer_locations.at(c);
        inputs_.connections_->forget(producer);
        inputs_.fail(make_error(
          errc::unreachable,
          "the partition server of " + producer.resource_id + " at " + producer.host + ":"
            + std::to_string(producer.data_port) + " is gone (" + caf::to_string(down.reason)
            + ") before partition " + to_string(channel.partition) + " ended"));
        return;
      }
    }
  }

private:
  task_inputs& inputs_;
};

task_inputs::task_inputs(std::shared_ptr<shuffle_environment> shuffle, graph::job_id job,
                         input_owner owner,
                         std::vector<graph::input_gate_deployment_descriptor> descriptors,
                         std::shared_ptr<result_partition_manager> partitions,
                         std::shared_ptr<transport::connection_cache> connections)
  : shuffle_(std::move(shuffle)),
    job_(job),
    owner_(std::move(owner)),
    descriptors_(std::move(descriptors)),
    partitions_(std::move(partitions)),
    connections_(std::move(connections)),
    routes_(std::make_unique<routes>(*this)) {}

expected<std::unique_ptr<task_inputs>> task_inputs::create(
  std::shared_ptr<shuffle_environment> shuffle, const input_gate_factory& factory,
  const graph::task_deployment_descriptor& tdd, input_owner owner) {
  auto connections = shuffle->connections();
  auto partitions = shuffle->partitions_of(tdd.job_id);
  auto wake = owner.wake;
  auto task_name = owner.task_name;
  auto inputs = std::make_unique<task_inputs>(std::move(shuffle), tdd.job_id, std::move(owner),
                                              tdd.input_gates, partitions, connections);
  for (std::size_t g = 0; g < tdd.input_gates.size(); ++g) {
    const auto& descriptor = tdd.input_gates[g];
    std::vector<channel_descriptor> channels;
    for (std::size_t c = 0; c < descriptor.partition_numbers.size(); ++c) {
      auto producer = c < descriptor.producer_locations.size() ? descriptor.producer_locations[c]
                                                               : graph::producer_location{};
      // Contract C: local when the producer runs in this process.
      channels.push_back(
        {result_partition_id{descriptor.consumed_result_id, descriptor.partition_numbers[c]},
         static_cast<std::size_t>(descriptor.consumed_subpartition_index),
         !connections || connections->is_local(producer)});
    }
    auto gate = factory.create(g, channels, *partitions);
    if (!gate)
      return make_error(gate.error().code, "task " + task_name + ": " + gate.error().message);
    (*gate)->set_availability_listener(wake);
    inputs->add_gate(std::move(*gate));
  }
  return inputs;
}

task_inputs::~task_inputs() {
  release();
}

void task_inputs::add_gate(std::unique_ptr<input_gate> gate) {
  gate_state state;
  state.channels.resize(gate->num_channels());
  for (std::size_t c = 0; c < state.channels.size(); ++c) {
    state.channels[c].partition = gate->channel(c).partition_id();
    state.channels[c].subpartition = gate->channel(c).subpartition_index();
  }
  state.gate = std::move(gate);
  gates_.push_back(std::move(state));
}

expected<unit> task_inputs::request_partitions() {
  pending_requests_ = false;
  for (std::size_t g = 0; g < gates_.size(); ++g) {
    for (std::size_t c = 0; c < gates_[g].channels.size(); ++c) {
      auto& channel = gates_[g].channels[c];
      auto& input = gates_[g].gate->channel(c);
      while (!channel.requested) {
        auto ok = input.request_subpartition();
        if (ok) {
          channel.requested = true;
          if (dynamic_cast<remote_input_channel*>(&input))
            if (auto connected = connect(g, c); !connected)
              return connected;
          break;
        }
        if (ok.error().code != errc::not_found)
          return make_error(ok.error().code,
                            "task " + owner_.task_name + ": " + ok.error().message);
        // The producer has not registered it yet (Flink retries the partition request); wait
        // for its registration instead of polling.
        if (shuffle_->notify_when_registered(job_, channel.partition, owner_.wake)) {
          pending_requests_ = true;
          break;
        }
      }
    }
  }
  return unit{};
}

expected<unit> task_inputs::connect(std::size_t g, std::size_t c) {
  auto self = owner_.actor ? owner_.actor() : caf::actor{};
  if (!self)
    return make_error(errc::illegal_state,
                      "task " + owner_.task_name + " has no actor for its remote channels");
  if (!connections_)
    return make_error(errc::illegal_state,
                      "task " + owner_.task_name + " has a remote channel but no connections");
  const auto& producer = descriptors_.at(g).producer_locations.at(c);
  auto server = connections_->server_of(producer);
  if (!server)
    return make_error(server.error().code,
                      "task " + owner_.task_name + ": " + server.error().message);
  // A producer process that dies, or whose node becomes unreachable, fails this task.
  if (!connections_->is_local(producer) && owner_.monitor)
    owner_.monitor(*server);
  auto& remote = static_cast<remote_input_channel&>(gates_[g].gate->channel(c));
  auto& channel = gates_[g].channels[c];
  channel.client = std::make_unique<transport::remote_channel_client>(self, *server, remote,
                                                                      shuffle_->config(), job_);
  channel.client->request();
  return unit{};
}

std::optional<gate_buffer> task_inputs::poll_gates() {
  for (std::size_t i = 0; i < gates_.size(); ++i) {
    auto g = (next_gate_ + i) % gates_.size();
    auto next = gates_[g].gate->poll_next();
    if (!next)
      continue;
    next_gate_ = g + 1;
    if (next->is_event() && next->buf.kind() == buffer_kind::end_of_partition) {
      auto& channel = gates_[g].channels.at(next->channel);
      if (!channel.consumed) {
        channel.consumed = true;
        // A remote producer's partition request server counts it when it sent end-of-partition.
        if (!channel.client)
          shuffle_->subpartition_consumed(job_, channel.partition, channel.subpartition);
      }
    }
    return gate_buffer{g, std::move(*next)};
  }
  return std::nullopt;
}

std::optional<gate_buffer> task_inputs::poll_next() {
  if (aligned_) {
    auto out = std::move(*aligned_);
    aligned_.reset();
    return out;
  }
  for (;;) {
    auto next = poll_gates();
    if (!next)
      return next;
    if (!next->data.is_event()) {
      // Flink's addProcessedBytes: a branch per buffer, no clock.
      if (aligning_)
        measuring_.bytes_processed += static_cast<std::int64_t>(next->data.buf.size());
      return next;
    }
    auto g = next->gate;
    auto c = next->data.channel;
    if (next->data.buf.kind() == buffer_kind::checkpoint_barrier) {
      auto barrier = barrier_of(next->data.buf);
      if (!barrier) {
        fail(make_error(errc::malformed_message,
                        "gate " + std::to_string(g) + " channel " + std::to_string(c)
                          + ": a checkpoint barrier without its id"));
        continue;
      }
      auto decision = barrier_arrived(flat_channel(g, c), *barrier);
      // The first barrier of a newer checkpoint that the handler took (the tracker holds
      // nothing, so its decisions do not tell).
      if (barrier->id > measuring_.checkpoint_id
          && (at_least_once_ || decision.block_channel || decision.trigger))
        mark_alignment_start(*barrier, decision.trigger && decision.trigger->id == barrier->id);
      if (decision.block_channel)
        gates_[g].gate->block_channel(c);
      if (auto out = apply(decision, g, c))
        return out;
      continue; // the barrier is the alignment's: the task sees it once every channel sent it
    }
    // Even before any barrier: a barrier that comes later must not wait for an ended channel.
    if (next->data.buf.kind() == buffer_kind::end_of_partition)
      aligned_ = apply(channel_ended(flat_channel(g, c)), g, c);
    return next;
  }
}

std::size_t task_inputs::total_channels() const {
  std::size_t channels = 0;
  for (const auto& gate : gates_)
    channels += gate.channels.size();
  return channels;
}

barrier_decision task_inputs::barrier_arrived(std::size_t flat, const checkpoint_barrier& barrier) {
  if (at_least_once_) {
    if (!tracker_)
      tracker_.emplace(total_channels());
    return tracker_->on_barrier(flat, barrier);
  }
  if (!aligner_)
    aligner_.emplace(total_channels());
  return aligner_->on_barrier(flat, barrier);
}

barrier_decision task_inputs::channel_ended(std::size_t flat) {
  if (at_least_once_) {
    if (!tracker_)
      tracker_.emplace(total_channels());
    return tracker_->on_end_of_partition(flat);
  }
  if (!aligner_)
    aligner_.emplace(total_channels());
  return aligner_->on_end_of_partition(flat);
}

std::size_t task_inputs::flat_channel(std::size_t gate, std::size_t channel) const {
  std::size_t offset = 0;
  for (std::size_t g = 0; g < gate; ++g)
    offset += gates_[g].channels.size();
  return offset + channel;
}

std::optional<gate_buffer> task_inputs::apply(const barrier_decision& decision, std::size_t gate,
                                              std::size_t channel) {
  for (auto flat : decision.release) {
    for (auto& state : gates_) {
      if (flat < state.channels.size()) {
        state.gate->resume_channel(flat);
        break;
      }
      flat -= state.channels.size();
    }
  }
  if (decision.aborted) {
    aborted_checkpoints_.push_back(*decision.aborted);
    if (*decision.aborted == measuring_.checkpoint_id)
      set_aligning(false);
  }
  if (!decision.trigger)
    return std::nullopt;
  mark_alignment_end(*decision.trigger);
  return gate_buffer{gate, buffer_or_event{to_event(*decision.trigger), channel, true}};
}

void task_inputs::cancel_checkpoint(std::int64_t checkpoint_id) {
  if (!aligner_ && !tracker_)
    return;
  auto decision =
    aligner_ ? aligner_->on_cancellation(checkpoint_id) : tracker_->on_cancellation(checkpoint_id);
  // Only what the handler gave up stops the measurement: the at-least-once tracker drops the
  // cancelled id alone and goes on with an older one in progress.
  if (decision.aborted && *decision.aborted == measuring_.checkpoint_id)
    set_aligning(false);
  decision.aborted.reset(); // the JobMaster knows: nothing to decline
  (void)apply(decision, 0, 0);
}

barrier_clock barrier_clock::system() {
  return {[] {
            return static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::steady_clock::now().time_since_epoch())
                                               .count());
          },
          [] {
            return static_cast<std::int64_t>(
              std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count());
          }};
}

void task_inputs::mark_alignment_start(const checkpoint_barrier& barrier, bool and_end) {
  measuring_ = checkpoint_alignment{};
  measuring_.checkpoint_id = barrier.id;
  measuring_.start_delay_nanos = state::start_delay_nanos(clock_.absolute_millis(), barrier.timestamp);
  // One barrier was all (one live channel): nothing was aligned, no second clock read.
  if (and_end)
    set_aligning(false);
  else
    set_aligning(true, clock_.relative_nanos());
}

void task_inputs::set_aligning(bool on, std::int64_t start_nanos) {
  if (on)
    alignment_start_nanos_ = start_nanos;
  if (alignment_started_gauge_ && (on || aligning_))
    alignment_started_gauge_->store(on ? std::max<std::int64_t>(1, start_nanos) : 0,
                                    std::memory_order_relaxed);
  aligning_ = on;
}

void task_inputs::mark_alignment_end(const checkpoint_barrier& barrier) {
  if (barrier.id != measuring_.checkpoint_id) {
    // The at-least-once tracker completed a checkpoint whose measurement a newer one's first
    // barrier took over: as Flink's tracker, it reports 0 for it (not unknown). The newer
    // one's measurement goes on.
    last_alignment_ = checkpoint_alignment{barrier.id, 0, 0, 0};
    return;
  }
  if (aligning_)
    measuring_.alignment_duration_nanos =
      std::max<std::int64_t>(0, clock_.relative_nanos() - alignment_start_nanos_);
  last_alignment_ = measuring_;
  set_aligning(false);
}

std::vector<std::int64_t> task_inputs::take_aborted_checkpoints() {
  return std::exchange(aborted_checkpoints_, {});
}

bool task_inputs::is_blocked(std::size_t gate, std::size_t channel) const {
  return gates_.at(gate).gate->is_blocked(channel);
}

bool task_inputs::is_finished() const {
  return std::all_of(gates_.begin(), gates_.end(),
                     [](const gate_state& s) { return s.gate->is_finished(); });
}

bool task_inputs::on_message(caf::type_erased_tuple& content) {
  return transport::route_to_consumer(content, *routes_);
}

void task_inputs::fail(error cause) {
  if (!failure_)
    failure_ = make_error(cause.code, "task " + owner_.task_name + ": " + cause.message);
}

std::size_t task_inputs::num_remote_channels() const {
  std::size_t n = 0;
  for (const auto& gate : gates_)
    for (const auto& channel : gate.channels)
      n += channel.client ? 1 : 0;
  return n;
}

float task_inputs::floating_pool_usage() const {
  std::size_t in_use = 0, capacity = 0;
  for (const auto& gate : gates_) {
    if (!gate.gate || !gate.gate->floating_pool())
      continue;
    in_use += gate.gate->floating_pool()->num_in_use();
    capacity += gate.gate->floating_pool()->max_segments();
  }
  return capacity == 0 ? 0.0f : static_cast<float>(in_use) / static_cast<float>(capacity);
}

void task_inputs::release() noexcept {
  if (released_)
    return;
  released_ = true;
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
        shuffle_->subpartition_consumed(job_, channel.partition, channel.subpartition);
      }
    }
    gate.gate->release();
  }
}

} // namespace flint::network
