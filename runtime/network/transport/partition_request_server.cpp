#include "runtime/network/transport/partition_request_server.hpp"

#include "runtime/network/credit_based_view.hpp"
#include "runtime/network/transport/transport_messages.hpp"

#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

namespace flint::network::transport {

namespace {

/// Server → itself: reader `id` has data (local only).
using wake_atom = caf::atom_constant<caf::atom("flint_wake")>;

struct reader {
  caf::actor consumer;
  input_channel_id channel;
  graph::job_id job;
  result_partition_id partition;
  std::size_t subpartition = 0;
  /// Keeps the job's partitions reachable while the view reads one of them.
  std::shared_ptr<result_partition_manager> manager;
  /// The consumer lives in this process: hand buffers over without copying.
  bool local = false;
  std::unique_ptr<credit_based_view> view;
  /// Set by the data listener when it mailed a wake-up not yet handled, so a busy producer sends
  /// one mail per drain rather than one per buffer.
  std::shared_ptr<std::atomic<bool>> wake_pending;
};

struct reader_key {
  caf::actor_addr consumer;
  wire_u32 gate;
  wire_u32 channel;
  friend bool operator<(const reader_key& a, const reader_key& b) {
    if (a.consumer != b.consumer)
      return a.consumer < b.consumer;
    return std::tie(a.gate, a.channel) < std::tie(b.gate, b.channel);
  }
};

struct server_state {
  partition_lookup lookup;
  server_options options;
  std::unordered_map<std::uint64_t, reader> readers;
  std::map<reader_key, std::uint64_t> by_channel;
  std::uint64_t next_id = 1;
  static inline const char* name = "flint.partition_request_server";
};

using server_actor = caf::stateful_actor<server_state>;

void count(const std::shared_ptr<server_stats>& stats, std::atomic<std::uint64_t> server_stats::*field,
           std::uint64_t n = 1) {
  if (stats)
    (stats.get()->*field).fetch_add(n, std::memory_order_relaxed);
}

/// `consumed`: the reader ended for good (not replaced by a repeated request).
void drop_reader(server_actor* self, std::uint64_t id, bool consumed) {
  auto i = self->state.readers.find(id);
  if (i == self->state.readers.end())
    return;
  if (i->second.view)
    i->second.view->release();
  auto job = i->second.job;
  auto partition = i->second.partition;
  auto subpartition = i->second.subpartition;
  self->state.by_channel.erase(reader_key{i->second.consumer.address(), i->second.channel.gate, i->second.channel.channel});
  // Erased before reporting: the reader's reference to the job's partitions is gone when the
  // environment releases the partition (and may drop the job's empty manager).
  self->state.readers.erase(i);
  if (self->state.options.stats)
    self->state.options.stats->active_readers.fetch_sub(1, std::memory_order_relaxed);
  if (consumed && self->state.options.on_consumed)
    self->state.options.on_consumed(job, partition, subpartition);
}

/// Sends everything the view allows now; drops the reader after end-of-partition.
void drain(server_actor* self, std::uint64_t id) {
  auto i = self->state.readers.find(id);
  if (i == self->state.readers.end())
    return;
  auto& r = i->second;
  auto& stats = self->state.options.stats;
  while (auto response = r.view->next_response()) {
    auto& buf = response->buf;
    if (buf.is_data()) {
      count(stats, &server_stats::data_buffers_sent);
      count(stats, &server_stats::bytes_sent, buf.size());
    } else {
      count(stats, &server_stats::events_sent);
    }
    auto kind = static_cast<wire_kind>(buf.kind());
    if (r.local && !self->state.options.always_copy) {
      shared_buffer holder{std::make_shared<buffer>(std::move(buf))};
      self->send(r.consumer, local_buffer_atom::value, r.channel.gate, r.channel.channel,
                 static_cast<wire_u64>(response->sequence), static_cast<wire_u64>(response->backlog),
                 std::move(holder));
    } else {
      std::vector<char> bytes(buf.data(), buf.data() + buf.size());
      // The producer's pool gets the segment back before the bytes even leave.
      buf.release();
      self->send(r.consumer, buffer_atom::value, r.channel.gate, r.channel.channel,
                 static_cast<wire_u64>(response->sequence), static_cast<wire_u64>(response->backlog), kind,
                 std::move(bytes));
    }
  }
  if (r.view->is_finished())
    drop_reader(self, id, true);
}

caf::behavior partition_request_server(server_actor* self, partition_lookup lookup, server_options options) {
  self->state.lookup = std::move(lookup);
  self->state.options = std::move(options);
  self->set_down_handler([self](caf::down_msg& down) {
    // The consumer is gone (or its node unreachable): nobody will grant credit again.
    std::vector<std::uint64_t> dead;
    for (auto& [id, r] : self->state.readers)
      if (r.consumer.address() == down.source)
        dead.push_back(id);
    for (auto id : dead)
      drop_reader(self, id, true);
  });
  return {
    [self](partition_request_atom, const caf::actor& consumer, wire_u64 job_upper, wire_u64 job_lower,
           wire_u64 result_upper, wire_u64 result_lower, wire_i32 partition_number, wire_u64 subpartition,
           wire_u32 gate, wire_u32 channel, wire_u64 initial_credit) {
      auto& st = self->state;
      count(st.options.stats, &server_stats::requests);
      if (!consumer)
        return;
      reader_key key{consumer.address(), gate, channel};
      // A repeated request (the consumer restarted the channel) replaces the old reader.
      if (auto old = st.by_channel.find(key); old != st.by_channel.end())
        drop_reader(self, old->second, false);
      graph::job_id job{job_upper, job_lower};
      result_partition_id partition{graph::intermediate_data_set_id{result_upper, result_lower}, partition_number};
      auto refuse = [&](errc code, const std::string& reason) {
        count(st.options.stats, &server_stats::refused_requests);
        self->send(consumer, partition_error_atom::value, gate, channel, static_cast<wire_i32>(code),
                   "partition request for " + to_string(partition) + " subpartition " + std::to_string(subpartition) +
                     " of job " + job.to_string() + " refused by " + caf::to_string(self->node()) + ": " + reason);
      };
      auto manager = st.lookup ? st.lookup(job) : nullptr;
      if (!manager) {
        // The producer has registered nothing of this job yet: the consumer retries (not_found).
        refuse(errc::not_found, "no partition of job " + job.to_string() + " is registered");
        return;
      }
      auto id = st.next_id++;
      auto wake_pending = std::make_shared<std::atomic<bool>>(false);
      caf::weak_actor_ptr weak_self = caf::actor_cast<caf::weak_actor_ptr>(self->ctrl());
      auto listener = [weak_self, id, wake_pending] {
        if (wake_pending->exchange(true))
          return;
        if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak_self))
          caf::anon_send(caf::actor_cast<caf::actor>(strong), wake_atom::value, id);
      };
      auto view = manager->create_subpartition_view(partition, static_cast<std::size_t>(subpartition), listener);
      if (!view) {
        refuse(view.error().code, view.error().message);
        return;
      }
      reader r;
      r.job = job;
      r.partition = partition;
      r.subpartition = static_cast<std::size_t>(subpartition);
      r.manager = std::move(manager);
      r.consumer = consumer;
      r.channel = input_channel_id{gate, channel};
      r.local = consumer.node() == self->node();
      r.view = std::make_unique<credit_based_view>(r.channel, std::move(*view),
                                                   static_cast<std::size_t>(initial_credit));
      r.wake_pending = wake_pending;
      st.readers.emplace(id, std::move(r));
      st.by_channel.emplace(key, id);
      if (st.options.stats)
        st.options.stats->active_readers.fetch_add(1, std::memory_order_relaxed);
      self->monitor(consumer);
      drain(self, id);
    },
    // A consumer checks a new connection with one round trip (partition_server_connection.hpp).
    [](ping_atom) { return ping_atom::value; },
    [self](wake_atom, std::uint64_t id) {
      auto i = self->state.readers.find(id);
      if (i == self->state.readers.end())
        return;
      // Cleared before draining: data added during the drain mails again rather than being missed.
      i->second.wake_pending->store(false);
      drain(self, id);
    },
    [self](add_credit_atom, const caf::actor& consumer, wire_u32 gate, wire_u32 channel, wire_u64 credit) {
      auto i = self->state.by_channel.find(reader_key{consumer.address(), gate, channel});
      // Credit for a dropped reader (finished or cancelled) is stale: ignore it.
      if (i == self->state.by_channel.end())
        return;
      self->state.readers.at(i->second).view->add_credit(static_cast<std::size_t>(credit));
      drain(self, i->second);
    },
    [self](cancel_request_atom, const caf::actor& consumer, wire_u32 gate, wire_u32 channel, wire_u64 job_upper,
           wire_u64 job_lower, wire_u64 result_upper, wire_u64 result_lower, wire_i32 partition_number,
           wire_u64 subpartition) {
      auto i = self->state.by_channel.find(reader_key{consumer.address(), gate, channel});
      if (i != self->state.by_channel.end()) {
        drop_reader(self, i->second, true);
      } else if (self->state.options.on_consumed) {
        // Never served (or already ended): the consumer is done with it all the same.
        self->state.options.on_consumed(
          graph::job_id{job_upper, job_lower},
          result_partition_id{graph::intermediate_data_set_id{result_upper, result_lower}, partition_number},
          static_cast<std::size_t>(subpartition));
      }
    },
  };
}

} // namespace

caf::actor spawn_partition_request_server(caf::actor_system& sys, partition_lookup lookup, server_options options) {
  return sys.spawn(partition_request_server, std::move(lookup), std::move(options));
}

caf::actor spawn_partition_request_server(caf::actor_system& sys, result_partition_manager& manager,
                                          server_options options) {
  // Not owned: the caller keeps the manager alive longer than the server.
  std::shared_ptr<result_partition_manager> shared{std::shared_ptr<result_partition_manager>{}, &manager};
  return spawn_partition_request_server(
    sys, [shared](const graph::job_id&) { return shared; }, std::move(options));
}

} // namespace flint::network::transport
