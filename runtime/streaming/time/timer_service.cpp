#include "runtime/streaming/time/timer_service.hpp"

#include "runtime/streaming/time/ordered_bytes.hpp"
#include "runtime/state/backend_entry_format.hpp"

#include <algorithm>

#include <stdexcept>
#include <utility>
#include <vector>

namespace flint::streaming {

std::string timer_backend_key(std::int64_t timestamp, std::string_view key, std::string_view ns) {
  std::string out;
  out.reserve(8 + 4 + key.size() + ns.size());
  append_ordered_int64(out, timestamp);
  append_length_prefixed(out, key);
  out.append(ns);
  return out;
}

std::optional<timer> timer_from_backend_key(std::int32_t key_group, std::string_view bytes) {
  if (bytes.size() < 8)
    return std::nullopt;
  std::size_t pos = 8;
  std::string_view key;
  if (!read_length_prefixed(bytes, pos, key))
    return std::nullopt;
  return timer{read_ordered_int64(bytes, 0), key_group, std::string(key),
               std::string(bytes.substr(pos))};
}

internal_timer_service::internal_timer_service(state::keyed_state_backend& backend,
                                               std::string name,
                                               state::key_group_range key_groups)
  : backend_(backend), name_(std::move(name)), key_groups_(key_groups) {
  event_time_.state_name = "_timer_state/event_" + name_;
  processing_time_.state_name = "_timer_state/processing_" + name_;
  index_only_ = backend_.add_snapshot_participant(this);
}

internal_timer_service::~internal_timer_service() {
  if (index_only_)
    backend_.remove_snapshot_participant(this);
}

void internal_timer_service::begin_snapshot() {
  for (auto* q : {&event_time_, &processing_time_}) {
    q->snapshot_groups.assign(static_cast<std::size_t>(std::max(key_groups_.size(), 0)), {});
    q->index.for_each([&](const timer& t) {
      q->snapshot_groups[static_cast<std::size_t>(t.key_group - key_groups_.first)].push_back(&t);
    });
    // The order of timer_backend_key: time, the key's length, its bytes, the namespace.
    for (auto& group : q->snapshot_groups)
      std::sort(group.begin(), group.end(), [](const timer* a, const timer* b) {
        if (a->timestamp != b->timestamp)
          return a->timestamp < b->timestamp;
        if (a->key.size() != b->key.size())
          return a->key.size() < b->key.size();
        if (int c = std::string_view(a->key).compare(b->key); c != 0)
          return c < 0;
        return std::string_view(a->ns) < std::string_view(b->ns);
      });
  }
}

void internal_timer_service::write_key_group(std::int32_t key_group,
                                             state::key_group_entries_writer& writer) {
  for (auto* q : {&event_time_, &processing_time_}) {
    auto i = static_cast<std::size_t>(key_group - key_groups_.first);
    if (i >= q->snapshot_groups.size() || q->snapshot_groups[i].empty())
      continue;
    writer.begin_state(q->state_name);
    for (const timer* t : q->snapshot_groups[i])
      writer.add(timer_backend_key(t->timestamp, t->key, t->ns), {});
  }
}

void internal_timer_service::end_snapshot() {
  event_time_.snapshot_groups.clear();
  processing_time_.snapshot_groups.clear();
}

void internal_timer_service::ensure_registered() {
  if (registered_)
    return;
  event_time_.state = backend_.register_state(event_time_.state_name);
  processing_time_.state = backend_.register_state(processing_time_.state_name);
  registered_ = true;
}

void internal_timer_service::check_key_group(std::int32_t key_group) const {
  // A key outside the subtask's range means the caller routed a record wrongly: a bug.
  if (!key_groups_.contains(key_group))
    throw std::logic_error("timer service " + name_ + ": key group " + std::to_string(key_group) +
                           " is not in this subtask's range [" +
                           std::to_string(key_groups_.first) + ", " +
                           std::to_string(key_groups_.last) + "]");
}

bool internal_timer_service::add(queue& q, std::int32_t key_group, std::string_view key,
                                 std::string_view ns, std::int64_t timestamp) {
  check_key_group(key_group);
  ensure_registered();
  if (!q.index.add(timer_view{timestamp, key_group, key, ns}))
    return false;
  if (!index_only_)
    backend_.put(q.state, key_group, timer_backend_key(timestamp, key, ns), {});
  return true;
}

bool internal_timer_service::remove(queue& q, std::int32_t key_group, std::string_view key,
                                    std::string_view ns, std::int64_t timestamp) {
  check_key_group(key_group);
  ensure_registered();
  if (!q.index.remove(timer_view{timestamp, key_group, key, ns}))
    return false;
  if (!index_only_)
    backend_.remove(q.state, key_group, timer_backend_key(timestamp, key, ns));
  return true;
}

bool internal_timer_service::register_event_time_timer(std::int32_t key_group,
                                                       std::string_view key, std::string_view ns,
                                                       std::int64_t timestamp) {
  return add(event_time_, key_group, key, ns, timestamp);
}

bool internal_timer_service::register_processing_time_timer(std::int32_t key_group,
                                                            std::string_view key,
                                                            std::string_view ns,
                                                            std::int64_t timestamp) {
  return add(processing_time_, key_group, key, ns, timestamp);
}

bool internal_timer_service::delete_event_time_timer(std::int32_t key_group, std::string_view key,
                                                     std::string_view ns,
                                                     std::int64_t timestamp) {
  return remove(event_time_, key_group, key, ns, timestamp);
}

bool internal_timer_service::delete_processing_time_timer(std::int32_t key_group,
                                                          std::string_view key,
                                                          std::string_view ns,
                                                          std::int64_t timestamp) {
  return remove(processing_time_, key_group, key, ns, timestamp);
}

void internal_timer_service::fire_until(queue& q, std::int64_t time, const on_timer& fire) {
  // Re-reading the head each round takes in what `fire` registers or deletes (Flink's loop).
  while (!q.index.empty() && q.index.peek_timestamp() <= time) {
    auto due = q.index.poll();
    if (!index_only_)
      backend_.remove(q.state, due.key_group, timer_backend_key(due.timestamp, due.key, due.ns));
    fire(due);
  }
}

void internal_timer_service::advance_watermark(std::int64_t watermark, const on_timer& fire) {
  current_watermark_ = watermark;
  fire_until(event_time_, watermark, fire);
}

void internal_timer_service::advance_processing_time(std::int64_t now, const on_timer& fire) {
  fire_until(processing_time_, now, fire);
}

std::optional<std::int64_t> internal_timer_service::next_processing_time() const {
  if (processing_time_.index.empty())
    return std::nullopt;
  return processing_time_.index.peek_timestamp();
}

std::optional<std::int64_t> internal_timer_service::next_event_time() const {
  if (event_time_.index.empty())
    return std::nullopt;
  return event_time_.index.peek_timestamp();
}

void internal_timer_service::restore(queue& q) {
  q.index.clear();
  std::vector<std::string> restored;
  for (int key_group = key_groups_.first; key_group <= key_groups_.last; ++key_group) {
    restored.clear();
    backend_.for_each(q.state, key_group, {}, [&](std::string_view key, std::string_view) {
      auto t = timer_from_backend_key(key_group, key);
      // Only this service writes these states: other bytes are a broken invariant.
      if (!t)
        throw std::logic_error("timer service " + name_ + ": a malformed timer in " +
                               q.state_name);
      q.index.add(std::move(*t));
      if (index_only_)
        restored.emplace_back(key);
    });
    // From now on the index is their only copy until the next snapshot writes them in.
    for (const auto& key : restored)
      backend_.remove(q.state, key_group, key);
  }
}

void internal_timer_service::restore() {
  ensure_registered();
  restore(event_time_);
  restore(processing_time_);
}

} // namespace flint::streaming
