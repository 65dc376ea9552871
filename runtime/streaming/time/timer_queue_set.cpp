#include "runtime/streaming/time/timer_queue_set.hpp"

#include <functional>
#include <utility>

namespace flint::streaming {

std::size_t timer_queue_set::hash::of(const timer_view& t) noexcept {
  auto mix = [](std::size_t seed, std::size_t h) {
    return seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
  };
  std::size_t h = std::hash<std::int64_t>{}(t.timestamp);
  h = mix(h, static_cast<std::size_t>(t.key_group));
  h = mix(h, std::hash<std::string_view>{}(t.key));
  return mix(h, std::hash<std::string_view>{}(t.ns));
}

bool timer_queue_set::add(const timer_view& t) {
  if (timers_.find(t) != timers_.end())
    return false;
  return add(timer{t.timestamp, t.key_group, std::string(t.key), std::string(t.ns)});
}

bool timer_queue_set::add(timer&& t) {
  auto h = hash::of(timer_view{t.timestamp, t.key_group, t.key, t.ns});
  auto [it, inserted] = timers_.insert(entry{std::move(t), h});
  if (inserted)
    order_.insert(&*it);
  return inserted;
}

bool timer_queue_set::remove(const timer_view& t) {
  auto it = timers_.find(t);
  if (it == timers_.end())
    return false;
  order_.erase(&*it);
  timers_.erase(it);
  return true;
}

timer timer_queue_set::poll() {
  const entry* head = *order_.begin();
  order_.erase(order_.begin());
  auto node = timers_.extract(timers_.find(*head));
  return std::move(node.value().t);
}

void timer_queue_set::clear() {
  order_.clear();
  timers_.clear();
}

} // namespace flint::streaming
