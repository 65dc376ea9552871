#pragma once
/// The consumer side of a channel whose producer is reached through a transport (Flink's
/// RemoteInputChannel with credit-based flow control).

#include "runtime/network/buffer_manager.hpp"
#include "runtime/network/input_channel.hpp"
#include "runtime/network/network_messages.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace flint::network {

/// Receives buffer_responses into its own buffers (exclusive, then floating from the gate's
/// pool) and grants the producer one credit per free buffer. Each response's backlog tells it how
/// many floating buffers to borrow; new credit is collected as unannounced until the transport
/// takes it as an add_credit message. Memory in flight per channel is thus bounded by its
/// exclusive buffers plus what it borrowed from the gate's floating budget.
///
/// Transport-agnostic: the transport delivers responses with on_buffer, sends the
/// partition_request and add_credit messages this class prepares, and is woken by the credit
/// listener. Thread-safe.
///
/// Credit is announced in batches (set_credit_batch) while received buffers wait to be read:
/// freed buffers wait until a batch is full, unless the producer holds less than a batch of
/// credit; once the consumer has read everything it received they go out at once. So the
/// producer is never left without credit while the consumer has free buffers, and a consumer
/// that keeps up never holds credit back (Flink announces credit as soon as the client's event
/// loop gets to it; batching only pays while the consumer is the slower side).
class remote_input_channel final : public input_channel {
public:
  /// What the channel saw at each data buffer's arrival, summed (divide by data_buffers): how
  /// full the pipe to the producer is kept.
  struct arrival_stats {
    std::uint64_t data_buffers = 0;
    /// Credit the producer held when the buffer came (this buffer's included): buffers on the
    /// wire plus credit it has not used.
    std::uint64_t outstanding = 0;
    /// Free buffers not yet announced.
    std::uint64_t unannounced = 0;
    /// Free buffers (announced or not) before the buffer took one.
    std::uint64_t free = 0;
    /// Received buffers still queued for the task.
    std::uint64_t queued = 0;
    /// The producer's backlog the buffer carried.
    std::uint64_t backlog = 0;
    /// add_credit messages taken, and the credit they carried.
    std::uint64_t announcements = 0;
    std::uint64_t announced = 0;
  };

  /// Freed buffers announced per add_credit while the producer still holds at least that much
  /// credit. Each add_credit is a message (across processes: a BASP frame, a syscall and a worker
  /// wake-up on each side), so batching cuts that cost per buffer by up to 4; with a small budget
  /// (no backlog: exclusive buffers only) the producer always holds less and every buffer is
  /// announced at once, so latency does not change.
  static constexpr std::size_t default_credit_batch = 4;

  /// `exclusive_buffers` is Flink's buffers-per-channel; floating buffers come from
  /// `floating_pool` (the gate's), exclusive ones from `global`.
  remote_input_channel(input_channel_id id, std::size_t channel_index,
                       result_partition_id partition, std::size_t subpartition,
                       std::shared_ptr<network_buffer_pool> global,
                       std::shared_ptr<local_buffer_pool> floating_pool,
                       std::size_t exclusive_buffers,
                       std::size_t credit_batch = default_credit_batch);
  ~remote_input_channel() override;

  /// Takes the exclusive buffers from the global pool.
  expected<unit> setup() override;
  /// Marks the subpartition requested; the transport sends partition_request().
  expected<unit> request_subpartition() override;
  /// The request the transport sends to the producer's TaskExecutor.
  network::partition_request partition_request() const;
  /// Credit the producer starts with: the exclusive buffers.
  std::size_t initial_credit() const noexcept { return exclusive_buffers_; }

  /// A response from the producer: checks the sequence, copies a data buffer into one of this
  /// channel's credit buffers (the incoming one is released), queues it and requests floating
  /// buffers for the announced backlog. Errors on reordering or data without credit.
  expected<unit> on_buffer(buffer_response response);
  /// The same for a response that arrived as bytes (across processes): a data payload is copied
  /// once, straight from `bytes` into a credited buffer, without building a buffer first.
  expected<unit> on_bytes(std::uint64_t sequence, std::size_t backlog, buffer_kind kind,
                          std::span<const char> bytes);
  /// The same for bytes the transport received into a vector it hands over: a data payload of
  /// exactly the segment size (a full buffer, the common case under load) becomes the credited
  /// buffer's memory, whose own segment is freed, so the bytes are not copied again; a smaller
  /// one is copied as on_bytes does. The consumer's memory stays bounded by its credits either
  /// way: every received buffer still takes one credited buffer's place.
  expected<unit> on_received(std::uint64_t sequence, std::size_t backlog, buffer_kind kind,
                             std::vector<char>&& bytes);
  /// Sets who hears that unannounced credit went from zero to positive.
  void set_credit_listener(availability_listener listener);
  /// Takes the unannounced credit as a message, if there is any.
  std::optional<add_credit> take_unannounced_credit();
  std::size_t unannounced_credit() const;
  /// Announce credit in batches of `batch` buffers while received buffers are still queued
  /// (whatever is free is announced once the queue is empty); 1 announces every buffer at once.
  void set_credit_batch(std::size_t batch);

  std::optional<buffer_and_availability> get_next_buffer() override;
  void release() override;
  bool is_released() const override;

  input_channel_id id() const noexcept { return id_; }
  /// Buffers received and not yet taken by the gate.
  std::size_t num_queued() const;
  /// Free buffers held for receiving (= credit granted or still to announce).
  std::size_t num_available_buffers() const { return manager_->num_available(); }
  const buffer_manager& manager() const noexcept { return *manager_; }
  std::uint64_t expected_sequence() const;
  arrival_stats stats() const;

private:
  void on_new_credit(std::size_t count);
  /// Whether unannounced credit should go out now (mutex_ held).
  bool should_announce() const;
  expected<unit> check_sequence(std::uint64_t sequence) const;
  /// A credited buffer holding a copy of `bytes`; an error without credit or when too large.
  expected<buffer> copy_into_credited(std::span<const char> bytes, std::uint64_t sequence);
  /// A credited buffer (empty), or an error naming the sequence when there is no credit.
  expected<buffer> credited_buffer(std::uint64_t sequence);
  /// Copies `bytes` into `target` (a credited buffer) and queues it; an error when too large.
  expected<unit> on_bytes_into(buffer target, std::span<const char> bytes, std::uint64_t sequence,
                               std::size_t backlog);
  /// Queues a received buffer and tops the floating buffers up for `backlog`.
  expected<unit> enqueue(buffer received, std::size_t backlog);

  const input_channel_id id_;
  const std::size_t exclusive_buffers_;
  const std::shared_ptr<buffer_manager> manager_;
  mutable std::mutex mutex_;
  std::deque<buffer> received_;
  std::size_t last_backlog_ = 0;
  std::uint64_t expected_sequence_ = 0;
  std::size_t unannounced_credit_ = 0;
  std::size_t credit_batch_ = default_credit_batch;
  /// Credit the producer still holds: initial + announced - data buffers received.
  std::size_t credit_outstanding_ = 0;
  availability_listener credit_listener_;
  arrival_stats stats_;
  bool requested_ = false;
  bool released_ = false;
};

} // namespace flint::network
