#pragma once
/// The consumer side of one remote channel over CAF (Flink's CreditBasedPartitionRequestClientHandler
/// for one channel): what the consuming task's actor uses to request a subpartition, take the
/// producer's buffers and grant credit.

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/remote_input_channel.hpp"
#include "runtime/network/transport/transport_messages.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>

namespace flint::network::transport {

/// Binds a remote_input_channel to the partition request server of the producer's TaskExecutor.
///
/// The owning actor (`consumer`: the consuming task's actor, event-based or detached) receives
/// the buffer, local buffer, partition error and retry messages for the channel's (gate, channel)
/// and hands them to this object on its own thread (route_to_consumer, network_router.hpp). Credit goes out directly from the channel's
/// credit listener, on whichever thread freed the buffer: sending a CAF message is thread-safe
/// and credits add up, so their order does not matter.
class remote_channel_client {
public:
  /// `channel` must outlive this client (the task owns both; it releases the channel last).
  /// `job` names the job whose partition is read (the server keeps partitions per job).
  remote_channel_client(caf::actor consumer, caf::actor server, remote_input_channel& channel,
                        const network_config& config, graph::job_id job = {});
  ~remote_channel_client();
  remote_channel_client(const remote_channel_client&) = delete;
  remote_channel_client& operator=(const remote_channel_client&) = delete;

  /// Installs the credit listener and sends the partition request with the channel's initial
  /// credit (its exclusive buffers). The channel must be set up and its subpartition requested.
  void request();

  /// A buffer message: feeds its bytes to the channel (which copies them into a credited
  /// buffer). Errors on an unknown kind, reordering or data without credit.
  expected<unit> on_buffer(const buffer_message& msg);
  /// The same with the received bytes handed over (`msg.bytes` is not read): a full buffer's
  /// memory becomes the credited buffer's without a copy (remote_input_channel::on_received).
  expected<unit> on_buffer(const buffer_message& msg, std::vector<char>&& bytes);
  /// A local buffer message: the producer's buffer itself.
  expected<unit> on_local_buffer(const local_buffer_message& msg);

  /// A partition error message. A partition that is not registered yet (not_found) is asked for
  /// again after Flink's back-off (`request-backoff.initial`, doubling up to
  /// `request-backoff.max`): a retry_request_message is mailed to the consumer, whose router
  /// calls retry(). Returns the delay, or the error when the back-off is used up or the refusal
  /// is final.
  expected<std::chrono::milliseconds> on_partition_error(const partition_error_message& msg);
  /// Sends the request again (on the retry message).
  void retry();

  /// Sends the unannounced credit now, if any (the listener does this by itself).
  void send_credit();
  /// Tells the server to drop the reader (the consumer released the channel early); the server
  /// counts the subpartition consumed even when it never served it.
  void cancel();

  const input_channel_id& id() const noexcept { return id_; }
  /// The producer's partition request server.
  const caf::actor& server() const noexcept { return server_; }
  remote_input_channel& channel() noexcept { return channel_; }
  /// Partition requests sent, retries included.
  std::uint32_t requests_sent() const noexcept { return requests_sent_; }

private:
  void send_request();
  /// An error on a kind this build does not know.
  expected<unit> check_kind(wire_kind kind) const;

  /// What the credit listener needs; shared because the channel may run a copy of the listener
  /// after this client is gone.
  struct credit_sender;

  caf::actor consumer_;
  caf::actor server_;
  remote_input_channel& channel_;
  const input_channel_id id_;
  const graph::job_id job_;
  const std::chrono::milliseconds backoff_initial_;
  const std::chrono::milliseconds backoff_max_;
  std::chrono::milliseconds next_backoff_{0};
  std::uint32_t requests_sent_ = 0;
  std::shared_ptr<credit_sender> credit_;
};

} // namespace flint::network::transport
