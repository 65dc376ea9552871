#include "runtime/network/transport/remote_channel_client.hpp"

#include <algorithm>
#include <mutex>
#include <span>
#include <utility>

#include <caf/send.hpp>

namespace flint::network::transport {

struct remote_channel_client::credit_sender {
  caf::actor consumer;
  caf::actor server;
  remote_input_channel* channel;
  std::mutex mutex;
  bool closed = false;

  void send() {
    std::lock_guard<std::mutex> guard{mutex};
    if (closed)
      return;
    if (auto credit = channel->take_unannounced_credit())
      caf::anon_send(server, add_credit_atom::value, consumer, static_cast<wire_u32>(credit->channel.gate),
                     static_cast<wire_u32>(credit->channel.channel), static_cast<wire_u64>(credit->credit));
  }
};

remote_channel_client::remote_channel_client(caf::actor consumer, caf::actor server, remote_input_channel& channel,
                                             const network_config& config, graph::job_id job)
  : consumer_(std::move(consumer)),
    server_(std::move(server)),
    channel_(channel),
    id_(channel.id()),
    job_(job),
    backoff_initial_(config.request_backoff_initial),
    backoff_max_(config.request_backoff_max),
    next_backoff_(config.request_backoff_initial),
    credit_(std::make_shared<credit_sender>()) {
  credit_->consumer = consumer_;
  credit_->server = server_;
  credit_->channel = &channel_;
}

remote_channel_client::~remote_channel_client() {
  channel_.set_credit_listener(nullptr);
  std::lock_guard<std::mutex> guard{credit_->mutex};
  credit_->closed = true;
}

void remote_channel_client::request() {
  channel_.set_credit_listener([credit = credit_] { credit->send(); });
  send_request();
}

void remote_channel_client::send_request() {
  auto request = channel_.partition_request();
  ++requests_sent_;
  caf::anon_send(server_, partition_request_atom::value, consumer_, job_.upper(), job_.lower(),
                 request.partition.result.upper(),
                 request.partition.result.lower(), static_cast<wire_i32>(request.partition.partition_number),
                 static_cast<wire_u64>(request.subpartition), static_cast<wire_u32>(id_.gate),
                 static_cast<wire_u32>(id_.channel), static_cast<wire_u64>(request.initial_credit));
}

expected<unit> remote_channel_client::on_buffer(wire_u64 sequence, wire_u64 backlog, wire_kind kind,
                                                const std::vector<char>& bytes) {
  if (kind > static_cast<wire_kind>(buffer_kind::end_of_partition))
    return make_error(errc::malformed_message, "unknown buffer kind " + std::to_string(kind) + " on channel " +
                                                 std::to_string(id_.gate) + "/" + std::to_string(id_.channel));
  // Straight into a credited buffer: no intermediate buffer of the received bytes.
  return channel_.on_bytes(sequence, static_cast<std::size_t>(backlog), static_cast<buffer_kind>(kind),
                           std::span<const char>(bytes.data(), bytes.size()));
}

expected<unit> remote_channel_client::on_local_buffer(wire_u64 sequence, wire_u64 backlog, const shared_buffer& holder) {
  if (!holder.buf || (!*holder.buf && holder.buf->is_data()))
    return make_error(errc::malformed_message, "empty local buffer on channel " + std::to_string(id_.gate) + "/" +
                                                 std::to_string(id_.channel));
  return channel_.on_buffer(
    buffer_response{id_, std::move(*holder.buf), static_cast<std::size_t>(backlog), sequence});
}

expected<std::chrono::milliseconds> remote_channel_client::on_partition_error(wire_i32 code, const std::string& text) {
  auto reason = static_cast<errc>(code);
  // Flink retries only PartitionNotFound: the producer may not have registered it yet.
  if (reason != errc::not_found)
    return make_error(reason, text);
  if (next_backoff_ > backoff_max_)
    return make_error(errc::not_found, text + " (gave up after " + std::to_string(requests_sent_) + " requests)");
  auto delay = next_backoff_;
  next_backoff_ = next_backoff_ == std::chrono::milliseconds{0} ? std::chrono::milliseconds{1} : next_backoff_ * 2;
  caf::delayed_anon_send(consumer_, delay, retry_request_atom::value, static_cast<wire_u32>(id_.gate),
                         static_cast<wire_u32>(id_.channel));
  return delay;
}

void remote_channel_client::retry() {
  send_request();
}

void remote_channel_client::send_credit() {
  credit_->send();
}

void remote_channel_client::cancel() {
  auto request = channel_.partition_request();
  caf::anon_send(server_, cancel_request_atom::value, consumer_, static_cast<wire_u32>(id_.gate),
                 static_cast<wire_u32>(id_.channel), job_.upper(), job_.lower(), request.partition.result.upper(),
                 request.partition.result.lower(), static_cast<wire_i32>(request.partition.partition_number),
                 static_cast<wire_u64>(request.subpartition));
}

} // namespace flint::network::transport
