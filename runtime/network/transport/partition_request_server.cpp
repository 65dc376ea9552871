#include "runtime/network/transport/partition_request_server.hpp"

#include "runtime/network/credit_based_view.hpp"
#include "runtime/network/local_buffer_pool.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/network/transport/network_router.hpp"
#include "runtime/network/transport/transport_messages.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/message_view.hpp>
#include <caf/send.hpp>
#include <caf/sec.hpp>
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
  /// The highest backlog a credit-stalled turn started with since the reader's last turn that
  /// did not end credit-stalled (0 then): what a stalled turn stamps on its buffers (drain()).
  std::size_t stalled_backlog = 0;
  /// The producing partition's pool: whether the producer is held up by it (drain()).
  std::weak_ptr<local_buffer_pool> producer_pool;
  /// Credit-stalled turns the mark may still stand without finding the producer held up by its
  /// pool: set to stalled_mark_grace_turns by a stalled turn that finds it held up (drain()).
  std::size_t mark_grace = 0;
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
  /// The responses of the sending turn under way (drain), kept for its allocation.
  std::vector<buffer_response> turn;
  static inline const char* name = "flint.partition_request_server";
};

using server_actor = caf::stateful_actor<server_state>;

void count(const std::shared_ptr<server_stats>& stats,
           std::atomic<std::uint64_t> server_stats::*field, std::uint64_t n = 1) {
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
  self->state.by_channel.erase(
    reader_key{i->second.consumer.address(), i->second.channel.gate, i->second.channel.channel});
  // Erased before reporting: the reader's reference to the job's partitions is gone when the
  // environment releases the partition (and may drop the job's empty manager).
  self->state.readers.erase(i);
  if (self->state.options.stats)
    self->state.options.stats->active_readers.fetch_sub(1, std::memory_order_relaxed);
  if (consumed && self->state.options.on_consumed)
    self->state.options.on_consumed(job, partition, subpartition);
}

/// Sends everything the view allows now; drops the reader after end-of-partition.
///
/// The buffers of one turn leave together and arrive together, and the consumer sizes its free
/// buffers by the backlog of each (backlog + exclusive buffers, Flink's onSenderBacklog), so the
/// last buffer of a turn decides its window. Exact backlogs fall by one per buffer of the turn,
/// which the producing task refills only after it is woken; a turn that ends credit-stalled (a
/// data buffer still queued, no credit left) therefore carries on every buffer the highest
/// backlog a stalled turn of this reader started with since it was last not stalled: the
/// producer is the faster side and the consumer's window should stay as wide as its queue gets.
/// The turn's own first backlog is not enough: a task woken once half its pool is back
/// (local_buffer_pool::wake_for_half) lets its queue sink by half before it refills, and the
/// consumer's window followed that dip (7 of 10 buffers in flight in flint-bench exchange, 9.9
/// with the high mark). Flink's server sends one buffer per socket write and its task is woken
/// on every buffer back, so its queue stays near full. A turn that does not end stalled (the
/// queue ran empty: the producer is the slower side) keeps exact backlogs and forgets the mark
/// (the consumer gives its floating buffers back); so does a stalled turn whose producer is not
/// held up by its pool (it refills nothing), once stalled_mark_grace_turns such turns passed
/// since one found it held up (a producer just woken has not written yet). Credit still bounds
/// every data buffer; the
/// backlog only sizes the consumer's floating buffers within the gate's pool.
void drain(server_actor* self, std::uint64_t id) {
  auto i = self->state.readers.find(id);
  if (i == self->state.readers.end())
    return;
  auto& r = i->second;
  auto& stats = self->state.options.stats;
  auto& turn = self->state.turn;
  bool sent_any = false;
  // In passes: what the view gives now is taken, stamped, sent and released, then the view is
  // asked again. A blocking subpartition's reader has two read buffers, which come back only when
  // a pass releases them; taking everything before releasing anything cut a turn to two buffers.
  for (;;) {
    turn.clear();
    while (auto response = r.view->next_response())
      turn.push_back(std::move(*response));
    if (turn.empty())
      break;
    if (!sent_any) {
      sent_any = true;
      count(stats, &server_stats::sending_turns);
    }
    if (r.view->waits_for_credit()) {
      count(stats, &server_stats::credit_stalls);
      // The mark stands while the producer is held up by its pool (it waits for buffers, or has
      // none left) and so refills its queue once woken, and for a few stalled turns after: the
      // turn that woke it (its releases did) is not the one that sees it write, its wake-up takes
      // one to four of the consumer's credit turns (flint-bench exchange: 12-130 us against
      // ~36 us), and a mark dropped meanwhile stamped the dip (8.8 buffers in flight of 10
      // against 9.8). A producer that went quiet refills nothing: the mark goes once the grace
      // is used up; one never held up (it has buffers to spare) gets no grace, and neither does
      // one whose pool is gone (a destroyed pool is not available, but nobody will refill).
      // The grace bounds the turns that carry the mark, not the credit: what the consumer
      // announced for those turns stays with the producer until it writes again (about 4
      // buffers of the gate's floating ones at most, against about 2 with exact backlogs).
      enum class producer_state { held_up, has_room, gone };
      const auto producer = [&] {
        auto pool = r.producer_pool.lock();
        if (!pool)
          return producer_state::gone;
        if (pool->has_waiters())
          return producer_state::held_up;
        if (pool->is_available())
          return producer_state::has_room;
        return pool->is_destroyed() ? producer_state::gone : producer_state::held_up;
      }();
      if (producer == producer_state::gone) {
        r.mark_grace = 0;
        r.stalled_backlog = 0;
      } else if (producer == producer_state::held_up)
        r.mark_grace = stalled_mark_grace_turns;
      else if (r.mark_grace > 0)
        --r.mark_grace;
      else
        r.stalled_backlog = 0;
      r.stalled_backlog = std::max(r.stalled_backlog, turn.front().backlog);
      for (auto& response : turn)
        response.backlog = std::max(response.backlog, r.stalled_backlog);
    }
    for (auto& response : turn) {
      auto& buf = response.buf;
      if (buf.is_data()) {
        count(stats, &server_stats::data_buffers_sent);
        count(stats, &server_stats::bytes_sent, buf.size());
        count(stats, &server_stats::backlog_sent, response.backlog);
      } else {
        count(stats, &server_stats::events_sent);
      }
      if (r.local && !self->state.options.always_copy) {
        send_from(self, r.consumer,
                  local_buffer_message{r.channel, response.sequence,
                                       static_cast<wire_u64>(response.backlog),
                                       shared_buffer{std::make_shared<buffer>(std::move(buf))}});
      } else {
        send_from(
          self, r.consumer,
          buffer_message{r.channel, response.sequence, static_cast<wire_u64>(response.backlog),
                         static_cast<wire_kind>(buf.kind()),
                         std::span<const char>(buf.data(), buf.size())});
        // The producer's pool gets the segment back before the bytes even leave.
        buf.release();
      }
    }
  }
  turn.clear();
  if (!r.view->waits_for_credit()) {
    r.stalled_backlog = 0;
    r.mark_grace = 0;
  }
  if (r.view->is_finished())
    drop_reader(self, id, true);
}

/// The server's handlers of its consumers' messages (network_router.hpp).
class server_handlers final : public server_routes {
public:
  explicit server_handlers(server_actor* self) : self_(self) {}

  void on_request(const partition_request_message& request) override {
    auto& st = self_->state;
    count(st.options.stats, &server_stats::requests);
    const auto& consumer = request.consumer;
    if (!consumer)
      return;
    reader_key key{consumer.address(), request.channel.gate, request.channel.channel};
    // A repeated request (the consumer restarted the channel) replaces the old reader.
    if (auto old = st.by_channel.find(key); old != st.by_channel.end())
      drop_reader(self_, old->second, false);
    const auto& job = request.job;
    const auto& partition = request.partition;
    auto refuse = [&](errc code, const std::string& reason) {
      count(st.options.stats, &server_stats::refused_requests);
      send_from(self_, consumer,
                partition_error_message{request.channel, static_cast<wire_i32>(code),
                                        "partition request for " + to_string(partition)
                                          + " subpartition " + std::to_string(request.subpartition)
                                          + " of job " + job.to_string() + " refused by "
                                          + caf::to_string(self_->node()) + ": " + reason});
    };
    auto manager = st.lookup ? st.lookup(job) : nullptr;
    if (!manager) {
      // The producer has registered nothing of this job yet: the consumer retries (not_found).
      refuse(errc::not_found, "no partition of job " + job.to_string() + " is registered");
      return;
    }
    auto id = st.next_id++;
    auto wake_pending = std::make_shared<std::atomic<bool>>(false);
    caf::weak_actor_ptr weak_self = caf::actor_cast<caf::weak_actor_ptr>(self_->ctrl());
    auto listener = [weak_self, id, wake_pending] {
      if (wake_pending->exchange(true))
        return;
      if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak_self))
        caf::anon_send(caf::actor_cast<caf::actor>(strong), wake_atom::value, id);
    };
    auto view = manager->create_subpartition_view(partition, request.subpartition, listener);
    if (!view) {
      refuse(view.error().code, view.error().message);
      return;
    }
    reader r;
    if (auto produced = manager->find(partition))
      r.producer_pool = (*produced)->pool();
    r.job = job;
    r.partition = partition;
    r.subpartition = request.subpartition;
    r.manager = std::move(manager);
    r.consumer = consumer;
    r.channel = request.channel;
    r.local = consumer.node() == self_->node();
    r.view =
      std::make_unique<credit_based_view>(r.channel, std::move(*view), request.initial_credit);
    r.wake_pending = wake_pending;
    st.readers.emplace(id, std::move(r));
    st.by_channel.emplace(key, id);
    if (st.options.stats)
      st.options.stats->active_readers.fetch_add(1, std::memory_order_relaxed);
    self_->monitor(consumer);
    drain(self_, id);
  }

  void on_credit(const add_credit_message& credit) override {
    auto& st = self_->state;
    auto i = st.by_channel.find(
      reader_key{credit.consumer.address(), credit.channel.gate, credit.channel.channel});
    // Credit for a dropped reader (finished or cancelled) is stale: ignore it.
    if (i == st.by_channel.end())
      return;
    st.readers.at(i->second).view->add_credit(static_cast<std::size_t>(credit.credit));
    drain(self_, i->second);
  }

  void on_cancel(const cancel_request_message& cancel) override {
    auto& st = self_->state;
    auto i = st.by_channel.find(
      reader_key{cancel.consumer.address(), cancel.channel.gate, cancel.channel.channel});
    if (i != st.by_channel.end()) {
      drop_reader(self_, i->second, true);
    } else if (st.options.on_consumed) {
      // Never served (or already ended): the consumer is done with it all the same.
      st.options.on_consumed(cancel.job, cancel.partition, cancel.subpartition);
    }
  }

  void on_malformed(error cause) override {
    count(self_->state.options.stats, &server_stats::malformed_messages);
    malformed_ = std::move(cause);
  }

  /// The last malformed message's error, taken.
  std::optional<error> take_malformed() { return std::exchange(malformed_, std::nullopt); }

private:
  server_actor* self_;
  std::optional<error> malformed_;
};

caf::behavior partition_request_server(server_actor* self, partition_lookup lookup,
                                       server_options options) {
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
  auto handlers = std::make_shared<server_handlers>(self);
  // Requests, credit and cancels arrive as named messages through the router.
  self->set_default_handler(
    [handlers](caf::scheduled_actor* me, caf::message_view& x) -> caf::result<caf::message> {
      if (!route_to_server(x.content(), *handlers))
        return caf::print_and_drop(me, x);
      if (auto bad = handlers->take_malformed())
        return caf::make_error(caf::sec::unexpected_message, bad->message);
      return caf::message{};
    });
  return {
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
  };
}

} // namespace

caf::actor spawn_partition_request_server(caf::actor_system& sys, partition_lookup lookup,
                                          server_options options) {
  return sys.spawn(partition_request_server, std::move(lookup), std::move(options));
}

caf::actor spawn_partition_request_server(caf::actor_system& sys, result_partition_manager& manager,
                                          server_options options) {
  // Not owned: the caller keeps the manager alive longer than the server.
  std::shared_ptr<result_partition_manager> shared{std::shared_ptr<result_partition_manager>{},
                                                   &manager};
  return spawn_partition_request_server(
    sys, [shared](const graph::job_id&) { return shared; }, std::move(options));
}

} // namespace flint::network::transport
