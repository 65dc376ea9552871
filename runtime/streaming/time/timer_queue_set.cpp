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

constexpr std::uint64_t low_mask = 0xffffffffu;

} // namespace

std::uint64_t timer_queue_set::hash_of(const timer_view& t) noexcept {
  auto mix = [](std::uint64_t seed, std::uint64_t h) {
    return seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
  };
  std::uint64_t h = static_cast<std::uint64_t>(t.timestamp);
  h = mix(h, static_cast<std::uint64_t>(t.key_group));
  h = mix(h, std::hash<std::string_view>{}(t.key));
  h = mix(h, std::hash<std::string_view>{}(t.ns));
  // The table's places come from the upper half: spread every input bit into it.
  h ^= h >> 31;
  h *= 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

bool timer_queue_set::same(const entry& e, const timer_view& t) noexcept {
  return e.t.timestamp == t.timestamp && e.t.key_group == t.key_group && e.t.key == t.key &&
         e.t.ns == t.ns;
}

std::size_t timer_queue_set::find(const timer_view& t, std::uint64_t h) const {
  if (table_.empty())
    return 0;
  std::size_t mask = table_.size() - 1;
  std::uint64_t upper = h >> 32;
  for (std::size_t i = upper & mask;; i = (i + 1) & mask) {
    auto v = table_[i];
    if (v == 0)
      return table_.size();
    if ((v >> 32) == upper && same(pool_[(v & low_mask) - 1], t))
      return i;
  }
}

std::size_t timer_queue_set::position_of(std::uint32_t index) const {
  std::size_t mask = table_.size() - 1;
  for (std::size_t i = (pool_[index].hash >> 32) & mask;; i = (i + 1) & mask)
    if ((table_[i] & low_mask) == index + std::uint64_t{1})
      return i;
}

void timer_queue_set::erase_at(std::size_t position) {
  // Backward-shift deletion: later entries of the probe run move up unless that would put them
  // before their home place.
  std::size_t mask = table_.size() - 1;
  std::size_t i = position;
  for (std::size_t j = (i + 1) & mask; table_[j] != 0; j = (j + 1) & mask) {
    std::size_t home = (table_[j] >> 32) & mask;
    bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays)
      continue;
    table_[i] = table_[j];
    i = j;
  }
  table_[i] = 0;
}

void timer_queue_set::grow() {
  std::vector<std::uint64_t> old(std::max<std::size_t>(table_.size() * 2, 64), 0);
  old.swap(table_);
  std::size_t mask = table_.size() - 1;
  for (auto v : old) {
    if (v == 0)
      continue;
    std::size_t i = (v >> 32) & mask;
    while (table_[i] != 0)
      i = (i + 1) & mask;
    table_[i] = v;
  }
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
  auto h = hash_of(t);
  if (find(t, h) != table_.size())
    return false;
  if (2 * (size_ + 1) > table_.size())
    grow();
  std::uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(pool_.size());
    pool_.emplace_back();
  }
  auto& e = pool_[index];
  e.t.timestamp = t.timestamp;
  e.t.key_group = t.key_group;
  e.t.key.assign(t.key);
  e.t.ns.assign(t.ns);
  e.hash = h;
  e.live = true;
  std::size_t mask = table_.size() - 1;
  std::size_t i = (h >> 32) & mask;
  while (table_[i] != 0)
    i = (i + 1) & mask;
  table_[i] = ((h >> 32) << 32) | (index + std::uint64_t{1});
  ++size_;
  auto& b = bucket_for(t.timestamp);
  e.slot = b.slots.size();
  b.slots.push_back({t.key_group, index, prefix_of(t.key)});
  ++b.live;
  return true;
}

bool timer_queue_set::add(timer&& t) {
  return add(timer_view{t.timestamp, t.key_group, t.key, t.ns});
}

bool timer_queue_set::remove(const timer_view& t) {
  auto position = find(t, hash_of(t));
  if (position == table_.size())
    return false;
  auto index = static_cast<std::uint32_t>((table_[position] & low_mask) - 1);
  erase_at(position);
  auto& e = pool_[index];
  auto b = buckets_.find(t.timestamp);
  b->second.slots[e.slot].index = removed;
  e.live = false;
  free_.push_back(index);
  --size_;
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
    if (b.slots[i].index == removed)
      continue;
    pool_[b.slots[i].index].slot = out;
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
    auto less = [this](const slot& x, const slot& y) {
      if (x.key_group != y.key_group)
        return x.key_group < y.key_group;
      if (x.key_prefix != y.key_prefix)
        return x.key_prefix < y.key_prefix;
      const auto& a = pool_[x.index].t;
      const auto& c = pool_[y.index].t;
      if (int r = std::string_view(a.key).compare(c.key); r != 0)
        return r < 0;
      return std::string_view(a.ns) < std::string_view(c.ns);
    };
    auto first = b.slots.begin() + static_cast<std::ptrdiff_t>(b.head);
    auto middle = b.slots.begin() + static_cast<std::ptrdiff_t>(std::max(b.sorted_end, b.head));
    std::sort(middle, b.slots.end(), less);
    if (first != middle)
      std::inplace_merge(first, middle, b.slots.end(), less);
    for (std::size_t i = b.head; i < b.slots.size(); ++i)
      pool_[b.slots[i].index].slot = i;
    b.sorted_end = b.slots.size();
  }
  while (b.slots[b.head].index == removed)
    ++b.head;
}

const timer* timer_queue_set::peek() {
  if (buckets_.empty())
    return nullptr;
  prepare_head();
  auto& b = buckets_.begin()->second;
  return &pool_[b.slots[b.head].index].t;
}

timer timer_queue_set::poll() {
  prepare_head();
  auto first = buckets_.begin();
  auto& b = first->second;
  auto index = b.slots[b.head].index;
  ++b.head;
  erase_at(position_of(index));
  auto& e = pool_[index];
  e.live = false;
  free_.push_back(index);
  --size_;
  timer out = std::move(e.t);
  if (--b.live == 0)
    erase_bucket(first);
  return out;
}

void timer_queue_set::clear() {
  last_ = nullptr;
  buckets_.clear();
  table_.clear();
  pool_.clear();
  free_.clear();
  size_ = 0;
}

} // namespace flint::streaming
