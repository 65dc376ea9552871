#pragma once
/// What typed operators are made of: outputs (chained calls or record writers with Flink's
/// channel selectors), one-input operators and sources, and the context a factory builds an
/// operator in. Header-only and free of CAF and of the network's internals, so the API's typed
/// factories (`api/functions.hpp`) can instantiate it for every record type.

#include "runtime/graph/stream_partitioner.hpp"
#include "runtime/network/buffer.hpp"
#include "runtime/graph/types.hpp"
#include "runtime/state/keyed_state_backend.hpp"
#include "runtime/streaming/key_groups.hpp"
#include "runtime/streaming/step_budget.hpp"
#include "runtime/streaming/time/element_time.hpp"
#include "runtime/streaming/time/processing_time_service.hpp"
#include "runtime/network/record_serializer.hpp"
#include "runtime/streaming/stream_operator.hpp"
#include "runtime/streaming/type_serializer.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace flint::streaming {

/// Where an operator emits records (Flink's Output / Collector).
template <class T>
class output {
public:
  virtual ~output() = default;
  virtual void collect(T value) = 0;
  /// Emits a record the caller keeps (state, a filtered input): outputs that only read it
  /// (chained operators, record writers) skip the copy.
  virtual void collect_ref(const T& value) { collect(value); }
  /// Where the records really go: the chained operator when this output only forwards to it.
  virtual output* target() noexcept { return this; }
};

/// An operator's output as the operator holds it: owned, and called at its target, so a record
/// passed down a chain costs one virtual call per operator instead of two.
template <class T>
class output_ref {
public:
  output_ref(std::unique_ptr<output<T>> out) : owned_(std::move(out)), to_(owned_->target()) {}
  output<T>* operator->() const noexcept { return to_; }
  output<T>& operator*() const noexcept { return *to_; }

private:
  std::unique_ptr<output<T>> owned_;
  output<T>* to_;
};

/// The untyped side of a one-input operator: a record's bytes from the network.
class serialized_input {
public:
  virtual ~serialized_input() = default;
  virtual void process_serialized(std::span<const char> record) = 0;
};

/// The untyped side of a two-input operator (the head of its task): a record's bytes from the
/// network, from input 1 or input 2.
class serialized_two_input {
public:
  virtual ~serialized_two_input() = default;
  virtual void process_serialized1(std::span<const char> record) = 0;
  virtual void process_serialized2(std::span<const char> record) = 0;
};

/// An operator with one input of T (Flink's OneInputStreamOperator). It is also the output of
/// the operator chained in front of it (Flink's Input): records arrive as collect calls.
template <class T>
class one_input_operator : public stream_operator, public serialized_input, public output<T> {
public:
  virtual void process_element(const T& value) = 0;
  void collect(T value) override { process_element(value); }
  /// Final operators override this to call their process_element directly (no second hop).
  void collect_ref(const T& value) override { process_element(value); }

  void process_serialized(std::span<const char> record) override {
    byte_reader in(record);
    if constexpr (std::is_default_constructible_v<T> && is_serializable_v<T>) {
      // One record object for every input: a string field keeps its storage from record to
      // record instead of being built and freed each time. process_element only reads it.
      if (!scratch_)
        scratch_.emplace();
      type_serializer<T>::read_into(in, *scratch_);
      process_element(*scratch_);
    } else {
      T value = type_serializer<T>::read(in);
      process_element(value);
    }
  }

private:
  std::optional<T> scratch_;
};

/// What a source step found.
enum class source_status {
  /// More records can be emitted right away.
  more_available,
  /// Nothing now; the source calls `operator_context::wake` when there is.
  nothing_available,
  /// The source is exhausted.
  end_of_input,
};

/// The head of a source task (Flink's SourceOperator, pulled by the mailbox).
class source_operator : public stream_operator {
public:
  /// Emits up to `max_records`, fewer when `operator_context::must_yield()` turns true.
  virtual source_status emit_next(std::size_t max_records) = 0;
};

/// Room in one channel's open buffer that a typed output fills with framed records itself
/// (4-byte length, then the record; no timestamp), one bounds check a record, the writer told
/// only when the room runs out or anything else touches the partition (Flink's RecordWriter
/// keeps its BufferBuilder the same way). `at == end` (both null when closed): no room.
struct claim_cursor {
  char* at = nullptr;
  char* end = nullptr;
  /// Records written since the room was opened.
  std::size_t records = 0;
};

/// A produced partition as a typed output sees it (implemented by the task over a result
/// partition). Records are serialized bytes; a writer never blocks: when its buffers run out it
/// keeps the rest and raises the task's yield flag.
class record_writer {
public:
  virtual ~record_writer() = default;
  /// `timestamped`: the record's first 8 bytes are its event timestamp.
  virtual void emit(std::span<const char> record, std::size_t channel, bool timestamped) = 0;
  void emit(std::span<const char> record, std::size_t channel) { emit(record, channel, false); }
  virtual std::size_t num_channels() const = 0;
  /// Puts a watermark or watermark status event behind every record emitted so far, in every
  /// channel.
  virtual void broadcast_event(const network::buffer& event) { (void)event; }
  /// Room for a record of `size` bytes in `channel`'s current buffer, framed and counted as
  /// emitted, for the caller to write all `size` bytes into before it emits anything else; null
  /// when the record does not fit there now (emit() it instead). Spares the copy through a
  /// scratch array in the common case.
  virtual char* claim(std::size_t size, std::size_t channel) {
    (void)size;
    (void)channel;
    return nullptr;
  }
  /// One claim_cursor per channel, for records without a timestamp, or null when this writer
  /// has none. Fixed for the writer's life; a cursor is opened by a successful claim() and its
  /// records are handed over before the writer does anything else.
  virtual claim_cursor* claim_cursors() noexcept { return nullptr; }
  /// claim() for a record with event timestamp `timestamp` (written by the writer: `size` is
  /// the record's bytes without it).
  virtual char* claim_stamped(std::size_t size, std::size_t channel, std::int64_t timestamp) {
    (void)size;
    (void)channel;
    (void)timestamp;
    return nullptr;
  }
};

struct network_output;

/// The typed key of a HASH edge: implemented by the API's typed key selector.
template <class T>
class typed_key_hasher {
public:
  virtual ~typed_key_hasher() = default;
  /// `key_hash` of the record's key.
  virtual std::int32_t key_hash_of(const T& record) const = 0;
  /// The output writing records to `target`, a HASH edge keyed by this key: by default a
  /// record_writer_output calling key_hash_of; a key the compiler can read (a tuple field) gives
  /// one that hashes it without a call.
  virtual std::unique_ptr<output<T>> make_writer_output(const network_output& target,
                                                       int subtask_index) const;
};

/// A network output of an operator: the writer and how records pick channels.
struct network_output {
  record_writer* writer = nullptr;
  graph::partitioner_kind partitioner = graph::partitioner_kind::forward;
  /// For key_group: a typed_key_hasher of the record type.
  const graph::key_selector* key = nullptr;
  int key_group_max_parallelism = 128;
  /// The task's record timestamp: written in front of each record that has one.
  const element_time* time = nullptr;
  /// Non-empty: the edge carries this side output's records, not the main output's.
  std::string output_tag;
};

/// Whether a source must stop emitting for this step: a record writer ran out of buffers (the
/// task's yield flag, its own thread's), the task is being cancelled or failed from outside (its
/// interrupt flag, raised by another thread), or the step used its time (its budget, so mail
/// gets its turn). A plain and a relaxed atomic load and a countdown per record.
struct yield_signal {
  const bool* yield = nullptr;
  const std::atomic<bool>* interrupt = nullptr;
  step_budget* budget = nullptr;
  bool operator()() const {
    return (yield && *yield) || (interrupt && interrupt->load(std::memory_order_relaxed))
      || (budget && budget->expired());
  }
};

/// Everything an operator factory gets to build its operator in one task.
struct operator_context {
  std::string operator_name;
  std::string task_name;
  int subtask_index = 0;
  int parallelism = 1;
  /// Key groups of keyed state (the HASH input's max parallelism) and this subtask's share.
  int key_group_max_parallelism = 128;
  key_group_range key_groups;
  /// Operators this one feeds inside the chain (already built), and for each the side output
  /// it takes (empty: the main output).
  std::vector<stream_operator*> chained_targets;
  std::vector<std::string> chained_target_tags;
  std::vector<network_output> network_outputs;
  /// Writes whole lines to the process's standard output (thread-safe).
  std::function<void(std::string_view)> write_stdout;
  /// Thread-safe: makes the task step again (sources with their own reader thread).
  std::function<void()> wake;
  /// Raised by a record writer out of buffers: sources stop emitting for this step.
  const bool* yield = nullptr;
  /// Raised from another thread when the task is cancelled or failed from outside: stop too.
  const std::atomic<bool>* interrupt = nullptr;
  /// The task's time for this step: spent, the source stops too.
  step_budget* budget = nullptr;
  /// The timestamp of the record being processed (the task's slot, shared by the chain).
  element_time* time = nullptr;
  /// Processing time and its timers, on the task's thread.
  processing_time_service* processing_time = nullptr;
  /// `pipeline.auto-watermark-interval` in ms (0: periodic watermarks off).
  std::int64_t auto_watermark_interval = 200;
  /// Whether the job checkpoints: a file sink then commits its files with the checkpoints.
  graph::checkpointing_mode checkpointing = graph::checkpointing_mode::none;
  /// Where keyed state that goes through a keyed_state_backend lives (`state.backend.type`); its
  /// local directory is this subtask's alone.
  state::keyed_state_backend_options state_backend;
  yield_signal yield_signal_of() const { return {yield, interrupt, budget}; }
  bool must_yield() const { return yield_signal_of()(); }
};

/// Calls the next operator of the chain directly (Flink's ChainingOutput).
template <class T>
class chaining_output final : public output<T> {
public:
  explicit chaining_output(one_input_operator<T>& target) : target_(target) {}
  void collect(T value) override { target_.process_element(value); }
  void collect_ref(const T& value) override { target_.process_element(value); }
  output<T>* target() noexcept override { return &target_; }

private:
  one_input_operator<T>& target_;
};

/// Hands each record to several outputs (Flink's BroadcastingOutputCollector).
template <class T>
class broadcasting_output final : public output<T> {
public:
  explicit broadcasting_output(std::vector<std::unique_ptr<output<T>>> outputs)
    : outputs_(std::move(outputs)) {}
  void collect(T value) override {
    // All but the last only read it (a chained operator or a writer takes a reference without a
    // copy; others copy as before); the last may take it.
    for (std::size_t i = 0; i + 1 < outputs_.size(); ++i)
      outputs_[i]->collect_ref(value);
    outputs_.back()->collect(std::move(value));
  }
  void collect_ref(const T& value) override {
    for (auto& out : outputs_)
      out->collect_ref(value);
  }

private:
  std::vector<std::unique_ptr<output<T>>> outputs_;
};

/// Drops every record (an operator nobody consumes).
template <class T>
class discarding_output final : public output<T> {
public:
  void collect(T) override {}
  void collect_ref(const T&) override {}
};

/// Serializes each record once and sends it to the channel(s) Flink's partitioner picks
/// (RecordWriterOutput + ChannelSelector). `KeyHash`, when not void, is the HASH edge's key hash
/// (`KeyHash{}(record)`, what the key selector's key_hash_of returns) called directly.
template <class T, class KeyHash = void>
class record_writer_output final : public output<T> {
public:
  record_writer_output(const network_output& target, int subtask_index)
    : writer_(*target.writer),
      kind_(target.partitioner),
      max_parallelism_(target.key_group_max_parallelism),
      channels_(target.writer->num_channels()),
      time_(target.time),
      cursors_(target.writer->claim_cursors()),
      rng_(0x5eedULL + static_cast<std::uint64_t>(subtask_index)) {
    if (channels_ == 0)
      throw std::logic_error("a network output without channels");
    // RebalancePartitioner starts at a random channel; a subtask-based start spreads the same way
    // and keeps runs reproducible.
    next_ = static_cast<std::size_t>(subtask_index) % channels_;
    if (kind_ == graph::partitioner_kind::rescale)
      next_ = channels_ - 1;
    if (kind_ == graph::partitioner_kind::key_group) {
      key_ = dynamic_cast<const typed_key_hasher<T>*>(target.key);
      if (!key_)
        throw std::logic_error("the key selector of a HASH edge does not take this record type");
      if (max_parallelism_ <= 0)
        throw std::logic_error("a HASH edge without key groups");
      // Flink's key_group * parallelism / max_parallelism, once per key group instead of a
      // division per record.
      channel_of_group_.resize(static_cast<std::size_t>(max_parallelism_));
      for (int g = 0; g < max_parallelism_; ++g)
        channel_of_group_[static_cast<std::size_t>(g)] = static_cast<std::uint32_t>(
          operator_index_for_key_group(max_parallelism_, static_cast<int>(channels_), g));
    }
  }

  void collect(T value) override { collect_ref(value); }

  void collect_ref(const T& value) override {
    auto size = type_serializer<T>::size(value);
    // A record with an event timestamp carries it in front (the length's tag says so).
    const bool stamped = time_ != nullptr && time_->has_timestamp;
    std::size_t channel = 0;
    switch (kind_) {
      case graph::partitioner_kind::forward:
      case graph::partitioner_kind::global: break;
      case graph::partitioner_kind::rebalance:
        channel = next_;
        next_ = next_ + 1 == channels_ ? 0 : next_ + 1;
        break;
      case graph::partitioner_kind::rescale:
        next_ = next_ + 1 >= channels_ ? 0 : next_ + 1;
        channel = next_;
        break;
      case graph::partitioner_kind::shuffle:
        channel = std::uniform_int_distribution<std::size_t>(0, channels_ - 1)(rng_);
        break;
      case graph::partitioner_kind::broadcast: {
        auto record = serialize(value, size, stamped);
        for (std::size_t c = 0; c < channels_; ++c)
          writer_.emit(record, c, stamped);
        return;
      }
      case graph::partitioner_kind::key_group: {
        // One consumer takes every key group: no need to hash the key here.
        if (channels_ == 1)
          break;
        std::int32_t hash = 0;
        if constexpr (std::is_void_v<KeyHash>)
          hash = key_->key_hash_of(value);
        else
          hash = KeyHash{}(value);
        int group = assign_to_key_group(hash, max_parallelism_);
        channel = channel_of_group_[static_cast<std::size_t>(group)];
        break;
      }
    }
    // The common case writes the record once, straight into the channel's buffer; else one pass
    // into the reused scratch array and the writer copies it (across buffers if need be).
    if (stamped) {
      if (char* at = writer_.claim_stamped(size, channel, time_->timestamp)) {
        type_serializer<T>::write_to(value, at);
        return;
      }
      writer_.emit(serialize(value, size, true), channel, true);
      return;
    }
    if (cursors_) {
      // The open buffer's room, held here: one bounds check, no call.
      auto& cursor = cursors_[channel];
      const auto framed = network::record_serializer::framed_size(size);
      if (framed <= static_cast<std::size_t>(cursor.end - cursor.at)) {
        network::record_serializer::write_header(static_cast<std::uint32_t>(size), cursor.at);
        type_serializer<T>::write_to(value, cursor.at + 4);
        cursor.at += framed;
        ++cursor.records;
        return;
      }
    }
    if (char* at = writer_.claim(size, channel)) {
      type_serializer<T>::write_to(value, at);
      return;
    }
    writer_.emit(serialize(value, size, false), channel, false);
  }

private:
  /// `value` (behind its timestamp when `stamped`) written into the reused scratch array.
  std::span<const char> serialize(const T& value, std::size_t size, bool stamped) {
    const std::size_t head = stamped ? network::record_serializer::timestamp_size : 0;
    if (bytes_.size() < size + head)
      bytes_.resize(std::max(size + head, 2 * bytes_.size()));
    if (stamped)
      network::record_serializer::write_timestamp(time_->timestamp, bytes_.data());
    type_serializer<T>::write_to(value, bytes_.data() + head);
    return {bytes_.data(), size + head};
  }

  record_writer& writer_;
  graph::partitioner_kind kind_;
  int max_parallelism_;
  std::size_t channels_;
  std::size_t next_ = 0;
  const typed_key_hasher<T>* key_ = nullptr;
  const element_time* time_;
  /// The writer's claim cursors, one per channel (null: it has none).
  claim_cursor* cursors_;
  /// The consumer subtask of each key group (HASH edges).
  std::vector<std::uint32_t> channel_of_group_;
  std::mt19937_64 rng_;
  std::vector<char> bytes_;
};

template <class T>
std::unique_ptr<output<T>> typed_key_hasher<T>::make_writer_output(const network_output& target,
                                                                  int subtask_index) const {
  return std::make_unique<record_writer_output<T>>(target, subtask_index);
}

/// An OutputTag (Flink's OutputTag<T>): names a side output of records of T, which
/// `get_side_output` turns into a stream.
template <class T>
class output_tag {
public:
  explicit output_tag(std::string id) : id_(std::move(id)) {
    if (id_.empty())
      throw std::invalid_argument("OutputTag id cannot be empty.");
  }
  const std::string& id() const noexcept { return id_; }

private:
  std::string id_;
};

/// The output of an operator emitting T to side output `tag` (empty: its main output): the
/// chained operators and network outputs from `ctx` that take it. Nobody consuming it: records
/// are dropped.
template <class T>
std::unique_ptr<output<T>> make_output(const operator_context& ctx, const std::string& tag = {}) {
  std::vector<std::unique_ptr<output<T>>> outputs;
  for (std::size_t i = 0; i < ctx.chained_targets.size(); ++i) {
    if ((i < ctx.chained_target_tags.size() ? ctx.chained_target_tags[i] : std::string()) != tag)
      continue;
    auto* typed = dynamic_cast<one_input_operator<T>*>(ctx.chained_targets[i]);
    if (!typed)
      throw std::logic_error("operator " + ctx.operator_name
                             + " is chained to an operator that takes another record type"
                             + (tag.empty() ? std::string() : " (side output " + tag + ")"));
    outputs.push_back(std::make_unique<chaining_output<T>>(*typed));
  }
  for (const auto& target : ctx.network_outputs) {
    if (target.output_tag != tag)
      continue;
    const auto* key = target.partitioner == graph::partitioner_kind::key_group
      ? dynamic_cast<const typed_key_hasher<T>*>(target.key)
      : nullptr;
    if (key)
      outputs.push_back(key->make_writer_output(target, ctx.subtask_index));
    else
      outputs.push_back(std::make_unique<record_writer_output<T>>(target, ctx.subtask_index));
  }
  if (outputs.empty())
    return std::make_unique<discarding_output<T>>();
  if (outputs.size() == 1)
    return std::move(outputs.front());
  return std::make_unique<broadcasting_output<T>>(std::move(outputs));
}

/// The side output `tag` of an operator (Flink's Context#output(OutputTag, value)).
template <class T>
std::unique_ptr<output<T>> make_side_output(const operator_context& ctx, const output_tag<T>& tag) {
  return make_output<T>(ctx, tag.id());
}

} // namespace flint::streaming
