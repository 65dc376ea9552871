#pragma once
/// The consuming end of one remote channel for the transport tests: a gate with one
/// remote_input_channel, its remote_channel_client, and an event-based actor that feeds the
/// channel from its mailbox and (optionally) reads records as they come.

#include "runtime/network/checkpoint_barrier.hpp"
#include "runtime/network/input_gate.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/remote_input_channel.hpp"
#include "runtime/network/transport/network_router.hpp"
#include "runtime/network/transport/remote_channel_client.hpp"
#include "runtime/network/transport/transport_messages.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/message_view.hpp>

namespace flint::network::transport::test {

/// A record whose bytes depend on its number and position (a shifted or lost byte shows).
inline std::string make_record(std::size_t number, std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    out[i] = static_cast<char>((number * 131 + i * 7 + (i >> 8)) & 0xff);
  return out;
}

/// Record sizes from a few bytes to several buffers (32 KiB each), cycling.
inline std::size_t record_size(std::size_t i) {
  static const std::size_t sizes[] = {1, 100,   5000, 32 * 1024,     40000,
                                      3, 70000, 900,  32 * 1024 - 4, 100000};
  return sizes[i % std::size(sizes)];
}

/// FNV-1a over records, in order.
struct checksum {
  std::uint64_t value = 0xcbf29ce484222325ULL;
  void add(std::span<const char> bytes) {
    for (char c : bytes) {
      value ^= static_cast<unsigned char>(c);
      value *= 0x100000001b3ULL;
    }
  }
};

struct consumer_side final : consumer_routes {
  network_config config;
  std::shared_ptr<network_buffer_pool> global;
  input_gate gate;
  remote_input_channel* channel = nullptr;
  std::unique_ptr<remote_channel_client> client;
  record_deserializer deserializer;
  /// Read records as buffers arrive; false makes a slow consumer the test drives by hand.
  bool auto_consume = true;
  std::function<void(std::span<const char>)> on_record;
  /// Runs once at end-of-partition or on failure (on the consumer's thread).
  std::function<void()> on_done;
  std::size_t data_buffers_taken = 0;
  std::size_t records = 0;
  /// Checkpoint barriers in arrival order, with the records read before each.
  std::vector<std::pair<checkpoint_barrier, std::size_t>> barriers;
  bool ended = false;
  std::optional<flint::error> failure;
  std::vector<std::string> partition_errors;
  /// The job whose partition the channel reads.
  graph::job_id job;

  consumer_side(network_config c, result_partition_id partition, std::size_t subpartition,
                graph::job_id j = {})
    : config(c),
      global(network_buffer_pool::make(64, c.segment_size)),
      gate(0, *global->create_buffer_pool(0, c.floating_buffers_per_gate)),
      job(j) {
    auto remote =
      std::make_unique<remote_input_channel>(input_channel_id{0, 0}, 0, partition, subpartition,
                                             global, gate.floating_pool(), c.buffers_per_channel);
    channel = remote.get();
    gate.add_channel(std::move(remote));
  }

  ~consumer_side() override {
    client.reset();
    deserializer.clear();
    gate.release();
  }

  /// Sets the gate up and sends the request from `self` to `server`.
  void start(const caf::actor& self, const caf::actor& server) {
    auto ok = gate.setup();
    if (ok)
      ok = gate.request_partitions();
    if (!ok) {
      fail(ok.error());
      return;
    }
    client = std::make_unique<remote_channel_client>(self, server, *channel, config, job);
    client->request();
  }

  /// Data buffers the consumer still holds (queued in the channel or being read).
  std::size_t held() const { return channel->num_queued() + (deserializer.has_buffer() ? 1 : 0); }
  /// Data buffers read to the end (released, so their credit went back).
  std::size_t released() const { return data_buffers_taken - (deserializer.has_buffer() ? 1 : 0); }

  /// Reads up to `max_buffers` buffers from the gate; the number read.
  std::size_t consume(std::size_t max_buffers) {
    std::size_t n = 0;
    // Finish the buffer in hand before taking the next one.
    drain_records();
    while (n < max_buffers && !ended) {
      auto next = gate.poll_next();
      if (!next)
        break;
      ++n;
      if (next->is_event()) {
        if (auto b = barrier_of(next->buf))
          barriers.emplace_back(*b, records);
        ended = next->buf.kind() == buffer_kind::end_of_partition;
        if (ended && on_done)
          on_done();
        continue;
      }
      ++data_buffers_taken;
      deserializer.set_next_buffer(std::move(next->buf));
      drain_records();
    }
    return n;
  }

  void fail(flint::error e) override {
    if (failure)
      return;
    failure = std::move(e);
    if (on_done)
      on_done();
  }

  remote_channel_client* client_of(const input_channel_id& id) override {
    return id == input_channel_id{0, 0} ? client.get() : nullptr;
  }
  bool is_reading(const input_channel_id& id) const override {
    return id == input_channel_id{0, 0} && !ended;
  }
  void server_down(const caf::down_msg&) override {}

  /// Everything goes through the router, as in a stream task; partition errors are also
  /// recorded.
  caf::behavior behavior(caf::event_based_actor* self) {
    self->set_default_handler(
      [this](caf::scheduled_actor* me, caf::message_view& x) -> caf::result<caf::message> {
        auto& content = x.content();
        if (is_message<partition_error_message>(content))
          if (auto error = from_message<partition_error_message>(content))
            partition_errors.push_back(error->text);
        if (!route_to_consumer(content, *this))
          return caf::drop(me, x);
        if (is_message<buffer_message>(content) || is_message<local_buffer_message>(content))
          after_buffer();
        return caf::message{};
      });
    // Not empty, or the actor would quit at once.
    return {[](caf::atom_constant<caf::atom("flint_tnop")>) {}};
  }

private:
  bool drain_records() {
    if (!deserializer.has_buffer())
      return false;
    std::span<const char> record;
    while (deserializer.next_record(record) == deserialization_result::record) {
      ++records;
      if (on_record)
        on_record(record);
    }
    return true;
  }

  void after_buffer() {
    if (!failure && auto_consume)
      consume(static_cast<std::size_t>(-1));
  }
};

/// Spawns the actor of `side` in `sys` and starts the request to `server`.
inline caf::actor spawn_consumer(caf::actor_system& sys, consumer_side& side,
                                 const caf::actor& server) {
  auto self = sys.spawn([&side](caf::event_based_actor* me) { return side.behavior(me); });
  side.start(self, server);
  return self;
}

} // namespace flint::network::transport::test
