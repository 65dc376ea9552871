#include "runtime/streaming/stream_task.hpp"

#include "runtime/network/stream_events.hpp"

#include <caf/actor.hpp>

#include <chrono>

#include <algorithm>
#include <string>
#include <utility>

namespace flint::streaming {

stream_task::stream_task(job_program program, graph::task_deployment_descriptor tdd,
                         std::shared_ptr<network::shuffle_environment> shuffle,
                         std::function<void(std::string_view)> write_stdout,
                         std::shared_ptr<local_state_root> local_state)
  : program_(std::move(program)),
    tdd_(std::move(tdd)),
    shuffle_(std::move(shuffle)),
    write_stdout_(std::move(write_stdout)),
    local_state_(std::move(local_state)) {
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
    return make_error(errc::invalid_argument,
                      "task " + tdd_.task_name + " belongs to job " + tdd_.job_id.to_string()
                        + " but the program compiled in is job " + job.job_id.to_string());
  auto index = job.find_vertex(tdd_.job_vertex_id);
  if (!index)
    return make_error(
      errc::not_found,
      "job " + job.job_id.to_string() + " has no vertex " + tdd_.job_vertex_id.to_string());
  vertex_ = &job.vertices[*index];
  if (vertex_->operators.empty())
    return make_error(errc::invalid_argument, "vertex " + vertex_->name + " has no operators");

  // Flink's buffer timeout of a task: the smallest of its chain's, -1 only when all are -1.
  buffer_timeout_ms_ = -1;
  for (const auto& op : vertex_->operators)
    if (op.buffer_timeout >= 0)
      buffer_timeout_ms_ = buffer_timeout_ms_ < 0 ? op.buffer_timeout
                                                  : std::min(buffer_timeout_ms_, op.buffer_timeout);

  auto partitions = shuffle_->create_partitions(tdd_);
  if (!partitions)
    return partitions.error();
  for (auto& partition : *partitions)
    writers_.push_back(
      std::make_unique<partition_writer>(std::move(partition), &yield_, buffer_timeout_ms_ == 0));

  if (auto built = build_chain(); !built)
    return built;
  if (auto restored = restore_state(); !restored)
    return restored;

  if (auto ok = create_inputs(); !ok)
    return ok;
  for (auto it = operators_.rbegin(); it != operators_.rend(); ++it)
    (*it)->open();
  return unit{};
}

expected<unit> stream_task::create_inputs() {
  network::input_owner owner{
    tdd_.task_name, waker(),
    [context = context_] { return context ? context->actor() : caf::actor{}; },
    [context = context_](const caf::actor& whom) {
      if (context)
        context->monitor(whom);
    }};
  auto inputs = shuffle_->create_inputs(tdd_, std::move(owner));
  if (!inputs)
    return inputs.error();
  inputs_ = std::move(*inputs);
  inputs_->set_at_least_once(tdd_.checkpointing.mode == graph::checkpointing_mode::at_least_once);
  publish_alignment_gauge();
  deserializers_.resize(inputs_->num_gates());
  gate_offsets_.assign(inputs_->num_gates(), 0);
  std::size_t channels = 0;
  for (std::size_t g = 0; g < deserializers_.size(); ++g) {
    deserializers_[g].resize(inputs_->num_channels(g));
    gate_offsets_[g] = channels;
    channels += inputs_->num_channels(g);
  }
  if (channels > 0)
    valve_.emplace(channels);
  if (two_input_) {
    // Which input each gate feeds: the type number of the stream edge its job edge came from.
    second_input_.assign(inputs_->num_gates(), false);
    const auto& job = *program_.job;
    auto vertex_index = job.find_vertex(tdd_.job_vertex_id);
    for (std::size_t g = 0; g < tdd_.input_gates.size() && g < second_input_.size(); ++g) {
      int type = 0;
      for (const auto& edge : job.edges)
        if (edge.target == *vertex_index
            && job.data_sets.at(edge.source).id == tdd_.input_gates[g].consumed_result_id)
          for (const auto& se : program_.stream->edges())
            if (se.source_id == edge.source_node_id && se.target_id == edge.target_node_id)
              type = se.type_number;
      if (type != 1 && type != 2)
        return make_error(errc::invalid_argument,
                          "task " + tdd_.task_name + ": input gate " + std::to_string(g)
                            + " feeds neither input of its two-input operator");
      second_input_[g] = type == 2;
    }
  }
  if (!source_ && inputs_->num_gates() == 0)
    return make_error(errc::invalid_argument,
                      "task " + tdd_.task_name + " has neither a source nor inputs");
  return inputs_->request_partitions();
}

expected<unit> stream_task::build_chain() {
  processing_time_ = std::make_unique<queued_processing_time_service>(
    [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
    },
    [this](std::int64_t time) { arm_processing_timer(time); });
  auto chain = build_operator_chain(
    program_, tdd_, *vertex_, writers_,
    {write_stdout_, waker(), &yield_, interrupt_, &budget_, local_state_.get(), &time_,
     processing_time_.get(), auto_watermark_interval()});
  if (!chain)
    return chain.error();
  forwarders_ = std::move(chain->forwarders);
  operators_ = std::move(chain->operators);
  source_ = chain->source;
  input_ = chain->input;
  two_input_ = chain->two_input;
  if (io_)
    for (std::size_t i = 0; i < operators_.size() && i < vertex_->operators.size(); ++i)
      if (operators_[i]->records_in_counted() >= 0 || operators_[i]->records_out_counted() >= 0)
        counted_operators_.emplace_back(operators_[i].get(),
                                        &io_->add_operator(vertex_->operators[i].name,
                                                           vertex_->operators[i].id.to_string()));
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
  if (inputs_ && inputs_->failure())
    return *inputs_->failure();
  if (phase_ == phase::finished) {
    // A checkpoint taken on the way out is acknowledged before the task reports FINISHED.
    if (uploader_ && uploader_->has_results())
      collect_uploads();
    if (uploader_ && uploader_->busy()) {
      has_work_ = false; // the upload's end wakes the task
      return false;
    }
    return true;
  }
  if (phase_ == phase::created) {
    if (auto ok = before_invoke(); !ok)
      return ok.error();
    phase_ = phase::running;
  }
  has_work_ = true;
  waits_for_output_ = false;
  if (uploader_ && uploader_->has_results())
    collect_uploads();
  if (!drain_outputs()) {
    has_work_ = false;
    waits_for_output_ = true;
    publish_metrics();
    return false;
  }
  if (phase_ == phase::running) {
    budget_.start();
    if (inputs_->has_pending_requests())
      if (auto ok = inputs_->request_partitions(); !ok)
        return ok.error();
    if (source_ && restored_finished_) {
      end_input(); // it had emitted everything before the restored checkpoint
    } else if (source_) {
      run_source();
    } else if (auto ok = run_input(); !ok) {
      return ok.error();
    }
    for (auto& op : operators_)
      op->end_of_batch();
  }
  // Before the branches below return: a step that ended the input published its last figures
  // too (the scrape after a finished job must see every record).
  publish_metrics();
  if (phase_ == phase::waiting_for_final_checkpoint) {
    // Until notify_checkpoint_complete of the final checkpoint: nothing to do but wait.
    if (!yield_)
      has_work_ = false;
    return false;
  }
  if (phase_ == phase::ending) {
    auto ended = end_outputs();
    if (!ended)
      return ended.error();
    if (*ended)
      return step(); // finished: unless an upload is still on its way
    has_work_ = false;
    return false;
  }
  if (yield_ && !drain_outputs()) {
    has_work_ = false;
    waits_for_output_ = true;
    publish_metrics();
  }
  if (auto failed = output_failure())
    return *failed;
  arm_flush_timer();
  return false;
}

void stream_task::publish_alignment_gauge() {
  if (io_ && inputs_)
    inputs_->set_alignment_started_gauge(
      std::shared_ptr<std::atomic<std::int64_t>>(io_, &io_->checkpoint_alignment_started_nanos));
}

void stream_task::publish_metrics() {
  if (!io_)
    return;
  if (!operators_.empty()) {
    std::int64_t late = 0;
    for (const auto& op : operators_)
      late += std::max<std::int64_t>(0, op->late_records_dropped());
    io_->late_records_dropped.store(late, std::memory_order_relaxed);
    io_->current_output_watermark.store(operators_.back()->current_output_watermark(),
                                        std::memory_order_relaxed);
  }
  std::int64_t records = 0, buffers = 0, bytes = 0;
  std::size_t out_in_use = 0, out_capacity = 0; // Flink's outPoolUsage: used over pool size
  for (const auto& w : writers_) {
    records += static_cast<std::int64_t>(w->partition().num_records_out());
    buffers += static_cast<std::int64_t>(w->partition().num_buffers_out());
    bytes += static_cast<std::int64_t>(w->partition().num_bytes_out());
    if (const auto& pool = w->partition().pool(); pool && !pool->is_destroyed()) {
      out_in_use += pool->num_in_use();
      out_capacity += pool->max_segments();
    }
  }
  io_->records_out.store(records, std::memory_order_relaxed);
  io_->buffers_out.store(buffers, std::memory_order_relaxed);
  io_->bytes_out.store(bytes, std::memory_order_relaxed);
  io_->out_pool_usage.store(out_capacity == 0 ? 0.0f
                                              : static_cast<float>(out_in_use)
                                                  / static_cast<float>(out_capacity),
                            std::memory_order_relaxed);
  if (inputs_)
    io_->in_pool_usage.store(inputs_->floating_pool_usage(), std::memory_order_relaxed);
  for (auto [op, counts] : counted_operators_) {
    counts->records_in.store(op->records_in_counted(), std::memory_order_relaxed);
    counts->records_out.store(op->records_out_counted(), std::memory_order_relaxed);
  }
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
  const yield_signal stop{&yield_, interrupt_, &budget_};
  while (n < records_per_step && !stop()) {
    if (current_) {
      std::span<const char> record;
      auto result = current_->next_record(record);
      if (result == network::deserialization_result::record) {
        time_.has_timestamp = current_->has_timestamp();
        time_.timestamp = current_->timestamp();
        if (two_input_ == nullptr)
          input_->process_serialized(record);
        else if (second_input_[current_gate_])
          two_input_->process_serialized2(record);
        else
          two_input_->process_serialized1(record);
        ++n;
        continue;
      }
      if (result == network::deserialization_result::record_too_large)
        return make_error(errc::malformed_message,
                          "task " + tdd_.task_name + ": an input record of "
                            + std::to_string(current_->oversized_length())
                            + " bytes is larger than the largest record ("
                            + std::to_string(current_->max_record_size())
                            + " bytes): its channel's bytes are corrupt");
      if (result == network::deserialization_result::malformed_record)
        return make_error(errc::malformed_message,
                          "task " + tdd_.task_name + ": an input record is malformed ("
                            + current_->malformed_reason() + "): its channel's bytes are corrupt");
      current_ = nullptr;
    }
    auto next = inputs_->poll_next();
    // Rare: a flag test per buffer; the list is taken only when it holds one.
    if (inputs_->has_aborted_checkpoints())
      for (auto id : inputs_->take_aborted_checkpoints())
        decline_checkpoint(id,
                           "Checkpoint " + std::to_string(id)
                             + " was overtaken by a newer checkpoint while aligning.",
                           true);
    if (!next) {
      // The gate's listener fires when a channel turns non-empty again.
      has_work_ = false;
      break;
    }
    if (auto barrier = network::barrier_of(next->data.buf)) {
      // Every input delivered it and every record before it is processed.
      perform_checkpoint(*barrier, aligned_metrics(*barrier));
      continue;
    }
    auto& deserializer = deserializers_[next->gate].at(next->data.channel);
    if (next->data.is_event()) {
      const auto& event = next->data.buf;
      auto flat = flat_channel(next->gate, next->data.channel);
      switch (event.kind()) {
        case network::buffer_kind::end_of_partition:
          if (deserializer.has_unfinished_data())
            return make_error(
              errc::internal,
              "task " + tdd_.task_name + ": a record was cut off by end-of-partition");
          if (!stopping_without_drain_)
            apply_valve(valve_->on_channel_ended(flat));
          break;
        case network::buffer_kind::end_of_data: {
          auto drained = network::end_of_data_of(event);
          if (!drained)
            return make_error(errc::malformed_message,
                              "task " + tdd_.task_name + ": a malformed end-of-data event");
          if (!*drained)
            stopping_without_drain_ = true;
          break;
        }
        case network::buffer_kind::watermark: {
          auto watermark = network::watermark_of(event);
          if (!watermark)
            return make_error(errc::malformed_message,
                              "task " + tdd_.task_name + ": a watermark event of "
                                + std::to_string(event.size()) + " bytes (8 expected)");
          apply_valve(valve_->on_watermark(flat, *watermark));
          break;
        }
        case network::buffer_kind::watermark_status: {
          auto idle = network::watermark_status_of(event);
          if (!idle)
            return make_error(errc::malformed_message,
                              "task " + tdd_.task_name + ": a malformed watermark status event");
          if (valve_->channel_idle(flat) != *idle)
            trace_watermark_status(flat, *idle);
          apply_valve(valve_->on_watermark_status(flat, *idle));
          break;
        }
        default: break;
      }
      if (event.kind() == network::buffer_kind::end_of_partition && inputs_->is_finished()) {
        end_input();
        break;
      }
      continue;
    }
    if (io_) {
      auto& bytes = inputs_->is_remote(next->gate, next->data.channel) ? io_->bytes_in_remote
                                                                       : io_->bytes_in_local;
      bytes.fetch_add(static_cast<std::int64_t>(next->data.buf.size()), std::memory_order_relaxed);
    }
    deserializer.set_next_buffer(std::move(next->data.buf));
    current_ = &deserializer;
    current_gate_ = next->gate;
  }
  if (io_)
    io_->records_in.fetch_add(static_cast<std::int64_t>(n), std::memory_order_relaxed);
  return unit{};
}

std::string stream_task::describe_channel(std::size_t flat) const {
  std::size_t g = 0;
  while (g + 1 < gate_offsets_.size() && gate_offsets_[g + 1] <= flat)
    ++g;
  auto c = flat - gate_offsets_[g];
  std::string producer = "gate " + std::to_string(g);
  if (program_.job && g < tdd_.input_gates.size()) {
    const auto& job = *program_.job;
    for (const auto& set : job.data_sets)
      if (set.id == tdd_.input_gates[g].consumed_result_id) {
        const auto& v = job.vertices.at(set.producer);
        producer = v.name;
        if (c < tdd_.input_gates[g].partition_numbers.size())
          producer += " (" + std::to_string(tdd_.input_gates[g].partition_numbers[c] + 1) + "/"
            + std::to_string(v.parallelism) + ")";
      }
  }
  return "channel " + std::to_string(g) + "/" + std::to_string(c) + " from " + producer;
}

void stream_task::trace_watermark_status(std::optional<std::size_t> channel, bool idle) {
  if (!context_ || !valve_)
    return;
  auto watermark = [](std::int64_t w) {
    return w == min_watermark ? std::string("none yet") : std::to_string(w);
  };
  std::string detail = tdd_.task_name + ": ";
  detail += channel ? describe_channel(*channel) + (idle ? " went IDLE" : " is ACTIVE again")
                    : std::string(idle ? "every input channel is IDLE: the task's input is idle"
                                       : "the task's input is ACTIVE again");
  detail += "; input watermark " + watermark(valve_->input_watermark());
  if (auto holder = valve_->holding_back())
    detail += ", held back by " + describe_channel(*holder) + " at "
      + watermark(valve_->channel_watermark(*holder));
  context_->trace("watermark_status", detail);
}

void stream_task::apply_valve(const status_watermark_valve::output& changed) {
  auto& head = *operators_.front();
  if (changed.idle)
    trace_watermark_status(std::nullopt, *changed.idle);
  if (changed.idle && !*changed.idle)
    head.process_watermark_status(false);
  if (changed.watermark) {
    if (io_)
      io_->current_input_watermark.store(*changed.watermark, std::memory_order_relaxed);
    head.process_watermark(*changed.watermark);
  }
  if (io_) {
    if (changed.idle)
      io_->input_idle.store(*changed.idle, std::memory_order_relaxed);
    // Who holds the watermark back, for the dashboard's "why": named once per change.
    auto holder = valve_->holding_back();
    auto at = holder ? valve_->channel_watermark(*holder) : min_watermark;
    if (holder != published_holder_ || at != published_holder_watermark_) {
      published_holder_ = holder;
      published_holder_watermark_ = at;
      io_->set_watermark_holder(
        holder ? describe_channel(*holder) + " at "
                   + (at == min_watermark ? std::string("none yet") : std::to_string(at))
               : std::string());
    }
  }
  if (changed.idle && *changed.idle)
    head.process_watermark_status(true);
}

void stream_task::end_input() {
  // The input's event time is over (a bounded source's end, Flink's MAX_WATERMARK; in BATCH the
  // only watermark): everything it triggers is emitted before the operators finish.
  if (!stopping_without_drain_ && operators_.front()->current_output_watermark() < max_watermark) {
    if (io_)
      io_->current_input_watermark.store(max_watermark, std::memory_order_relaxed);
    operators_.front()->process_watermark(max_watermark);
  }
  for (auto& op : operators_)
    op->finish();
  for (auto& op : operators_)
    op->end_of_batch();
  input_ended_ = true;
  phase_ = awaits_commit() ? phase::waiting_for_final_checkpoint : phase::ending;
  if (auto deferred = std::exchange(deferred_trigger_, std::nullopt))
    perform_checkpoint(*deferred, triggered_metrics(*deferred));
}

expected<bool> stream_task::end_outputs() {
  if (!drain_outputs())
    return false;
  if (stopping_without_drain_) {
    // Behind every record: the consumers end their input without running event time out.
    auto event = network::to_end_of_data_event(false);
    for (auto& writer : writers_)
      writer->broadcast_event(event);
  }
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
  bool dirty =
    std::any_of(writers_.begin(), writers_.end(), [](const auto& w) { return w->is_dirty(); });
  if (!dirty)
    return;
  timer_armed_ = true;
  context_->schedule_timer(std::chrono::milliseconds(buffer_timeout_ms_), ++timer_id_);
}

namespace {
/// The actor timers of processing time, apart from the flush timer's ids.
constexpr std::uint64_t processing_timer_tag = std::uint64_t{1} << 63;
} // namespace

std::int64_t stream_task::auto_watermark_interval() const {
  return program_.job ? program_.job->execution_config.auto_watermark_interval : 200;
}

void stream_task::arm_processing_timer(std::int64_t time) {
  if (!context_ || (processing_timer_at_ && *processing_timer_at_ <= time))
    return;
  processing_timer_at_ = time;
  auto delay = std::max<std::int64_t>(0, time - processing_time_->current_processing_time());
  context_->schedule_timer(std::chrono::milliseconds(delay),
                           processing_timer_tag | ++processing_timer_id_);
}

void stream_task::fire_processing_timers() {
  processing_timer_at_.reset();
  if (phase_ != phase::running && phase_ != phase::waiting_for_final_checkpoint)
    return;
  processing_time_->fire_due(processing_time_->current_processing_time());
  for (auto& op : operators_)
    op->end_of_batch();
  if (auto next = processing_time_->next_time())
    arm_processing_timer(*next);
  // What the callbacks emitted goes out with the buffer timeout, or now when buffers ran out.
  if (yield_ && context_) {
    has_work_ = true;
    context_->wake();
  }
  arm_flush_timer();
}

void stream_task::on_timer(std::uint64_t id) {
  if ((id & processing_timer_tag) != 0) {
    if ((id & ~processing_timer_tag) == processing_timer_id_)
      fire_processing_timers();
    return;
  }
  if (id != timer_id_ || !timer_armed_)
    return;
  timer_armed_ = false;
  if (phase_ == phase::created || phase_ == phase::finished)
    return;
  for (auto& writer : writers_)
    if (writer->is_dirty())
      writer->flush();
  // Records waiting for buffers keep the data dirty; the next step re-arms.
}

void stream_task::clean_up() noexcept {
  uploader_.reset(); // waits for an upload in progress: it writes into this job's storage
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
  if (processing_time_)
    processing_time_->clear();
  if (inputs_)
    inputs_->release();
  deserializers_.clear();
  operators_.clear();
  for (auto& writer : writers_)
    if (phase_ != phase::finished)
      shuffle_->producer_failed(tdd_.job_id, writer->partition().id());
  writers_.clear();
}

} // namespace flint::streaming
