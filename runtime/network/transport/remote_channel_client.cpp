#include "runtime/network/transport/remote_channel_client.hpp"

#include <algorithm>
#include <mutex>
#include <span>
#include <utility>

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
      transport::send(
        server,
        add_credit_message{consumer, credit->channel, static_cast<wire_u64>(credit->credit)});
  }
};

remote_channel_client::remote_channel_client(caf::actor consumer, caf::actor server,
                                             remote_input_channel& channel,
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
  transport::send(server_,
                  partition_request_message{consumer_, job_, request.partition,
                                            request.subpartition, id_, request.initial_credit});
}

expected<unit> remote_channel_client::check_kind(wire_kind kind) const {
  if (kind > static_cast<wire_kind>(buffer_kind::end_of_data))
    return make_error(errc::malformed_message,
                      "unknown buffer kind " + std::to_string(kind) + " on channel "
                        + std::to_string(id_.gate) + "/" + std::to_string(id_.channel));
  return unit{};
}

expected<unit> remote_channel_client::on_buffer(const buffer_message& msg) {
  if (auto ok = check_kind(msg.kind); !ok)
    return ok;
  // Straight into a credited buffer: no intermediate buffer of the received bytes.
  return channel_.on_bytes(msg.sequence, static_cast<std::size_t>(msg.backlog),
                           static_cast<buffer_kind>(msg.kind), msg.bytes);
}

expected<unit> remote_channel_client::on_buffer(const buffer_message& msg,
                                                std::vector<char>&& bytes) {
  if (auto ok = check_kind(msg.kind); !ok)
    return ok;
  return channel_.on_received(msg.sequence, static_cast<std::size_t>(msg.backlog),
                              static_cast<buffer_kind>(msg.kind), std::move(bytes));
}

expected<unit> remote_channel_client::on_local_buffer(const local_buffer_message& msg) {
  const auto& holder = msg.holder;
  if (!holder.buf || (!*holder.buf && holder.buf->is_data()))
    return make_error(errc::malformed_message,
                      "empty local buffer on channel " + std::to_string(id_.gate) + "/"
                        + std::to_string(id_.channel));
  return channel_.on_buffer(buffer_response{id_, std::move(*holder.buf),
                                            static_cast<std::size_t>(msg.backlog), msg.sequence});
}

expected<std::chrono::milliseconds> remote_channel_client::on_partition_error(
  const partition_error_message& msg) {
  auto reason = static_cast<errc>(msg.code);
  // Flink retries only PartitionNotFound: the producer may not have registered it yet.
  if (reason != errc::not_found)
    return make_error(reason, msg.text);
  if (next_backoff_ > backoff_max_)
    return make_error(
      errc::not_found,
      msg.text + " (gave up after " + std::to_string(requests_sent_) + " requests)");
  auto delay = next_backoff_;
  next_backoff_ = next_backoff_ == std::chrono::milliseconds{0} ? std::chrono::milliseconds{1}
                                                                : next_backoff_ * 2;
  transport::delayed_send(consumer_, delay, retry_request_message{id_});
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
  transport::send(
    server_, cancel_request_message{consumer_, id_, job_, request.partition, request.subpartition});
}

} // namespace flint::network::transport
