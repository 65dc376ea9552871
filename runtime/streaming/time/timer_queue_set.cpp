#include "runtime/streaming/time/timer_queue_set.hpp"

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>

namespace flint::streaming {

namespace {

/// The first eight bytes of `key`, big-endian, zero-padded: comparing two of these orders the
/// keys as their bytes do unless they are equal (then the whole keys decide).
std::uint64_t prefix_of(std::string_view key) {
  std::uint64_t out = 0;
  std::size_t n = std::min<std::size_t>(key.size(), 8);
  for (std::size_t i = 0; i < n; ++i)
    out |= std::uint64_t{static_cast<unsigned char>(key[i])} << (56 - 8 * i);
  return out;
}

} // namespace

std::size_t timer_queue_set::hash::of(const timer_view& t) noexcept {
  auto mix = [](std::size_t seed, std::size_t h) {
    return seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
  };
  std::size_t h = std::hash<std::int64_t>{}(t.timestamp);
  h = mix(h, static_cast<std::size_t>(t.key_group));
  h = mix(h, std::hash<std::string_view>{}(t.key));
  return mix(h, std::hash<std::string_view>{}(t.ns));
}

timer_queue_set::slot timer_queue_set::slot_of(const entry& e) {
  return {e.t.key_group, prefix_of(e.t.key), &e};
}

timer_queue_set::bucket& timer_queue_set::bucket_for(std::int64_t timestamp) {
  if (last_ == nullptr || last_->first != timestamp)
    last_ = &*buckets_.try_emplace(timestamp).first;
  return last_->second;
}

void timer_queue_set::erase_bucket(bucket_map::iterator it) {
  if (last_ == &*it)
    last_ = nullptr;
  buckets_.erase(it);
}

bool timer_queue_set::add(const timer_view& t) {
  if (timers_.find(t) != timers_.end())
    return false;
  return add(timer{t.timestamp, t.key_group, std::string(t.key), std::string(t.ns)});
}

bool timer_queue_set::add(timer&& t) {
  auto h = hash::of(timer_view{t.timestamp, t.key_group, t.key, t.ns});
  auto timestamp = t.timestamp;
  auto [it, inserted] = timers_.insert(entry{std::move(t), h});
  if (!inserted)
    return false;
  auto& b = bucket_for(timestamp);
  it->slot = b.slots.size();
  b.slots.push_back(slot_of(*it));
  ++b.live;
  return true;
}

bool timer_queue_set::remove(const timer_view& t) {
  auto it = timers_.find(t);
  if (it == timers_.end())
    return false;
  auto b = buckets_.find(t.timestamp);
  b->second.slots[it->slot].e = nullptr;
  timers_.erase(it);
  if (--b->second.live == 0)
    erase_bucket(b);
  else if (b->second.slots.size() > 64 && b->second.slots.size() > 2 * b->second.live)
    compact(b->second); // registers and deletes at one timestamp must not grow it unbounded
  return true;
}

void timer_queue_set::compact(bucket& b) {
  // Keeps the order, so [head, sorted_end) stays sorted.
  std::size_t out = 0;
  std::size_t sorted_end = 0;
  for (std::size_t i = b.head; i < b.slots.size(); ++i) {
    if (i == b.sorted_end)
      sorted_end = out;
    if (b.slots[i].e == nullptr)
      continue;
    b.slots[i].e->slot = out;
    b.slots[out++] = b.slots[i];
  }
  b.sorted_end = b.sorted_end >= b.slots.size() ? out : sorted_end;
  b.slots.resize(out);
  b.head = 0;
}

void timer_queue_set::prepare_head() {
  auto& b = buckets_.begin()->second;
  if (b.sorted_end < b.slots.size()) {
    if (b.slots.size() - b.head != b.live)
      compact(b); // no removed slots in the sort
    auto less = [](const slot& x, const slot& y) {
      if (x.key_group != y.key_group)
        return x.key_group < y.key_group;
      if (x.key_prefix != y.key_prefix)
        return x.key_prefix < y.key_prefix;
      if (int c = std::string_view(x.e->t.key).compare(y.e->t.key); c != 0)
        return c < 0;
      return std::string_view(x.e->t.ns) < std::string_view(y.e->t.ns);
    };
    auto first = b.slots.begin() + static_cast<std::ptrdiff_t>(b.head);
    auto middle = b.slots.begin() + static_cast<std::ptrdiff_t>(std::max(b.sorted_end, b.head));
    std::sort(middle, b.slots.end(), less);
    if (first != middle)
      std::inplace_merge(first, middle, b.slots.end(), less);
    for (std::size_t i = b.head; i < b.slots.size(); ++i)
      if (b.slots[i].e != nullptr)
        b.slots[i].e->slot = i;
    b.sorted_end = b.slots.size();
  }
  while (b.slots[b.head].e == nullptr)
    ++b.head;
}

const timer* timer_queue_set::peek() {
  if (buckets_.empty())
    return nullptr;
  prepare_head();
  auto& b = buckets_.begin()->second;
  return &b.slots[b.head].e->t;
}

timer timer_queue_set::poll() {
  prepare_head();
  auto first = buckets_.begin();
  auto& b = first->second;
  const entry* head = b.slots[b.head].e;
  ++b.head;
  auto node = timers_.extract(timers_.find(*head));
  if (--b.live == 0)
    erase_bucket(first);
  return std::move(node.value().t);
}

void timer_queue_set::clear() {
  last_ = nullptr;
  buckets_.clear();
  timers_.clear();
}

} // namespace flint::streaming
