#include "runtime/metrics/metric_registry.hpp"

namespace flint::metrics {

registration::~registration() {
  if (auto r = registry_.lock())
    r->remove(id_);
}

registration& registration::operator=(registration&& other) noexcept {
  if (this != &other) {
    if (auto r = registry_.lock())
      r->remove(id_);
    registry_ = std::move(other.registry_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

registration metric_registry::add(collector c) {
  std::lock_guard<std::mutex> lock(mtx_);
  auto id = next_++;
  groups_.emplace(id, std::make_shared<collector>(std::move(c)));
  return registration(weak_from_this(), id);
}

void metric_registry::remove(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mtx_);
  groups_.erase(id);
}

std::vector<sample> metric_registry::collect() const {
  std::vector<std::shared_ptr<collector>> run;
  {
    std::lock_guard<std::mutex> lock(mtx_);
    run.reserve(groups_.size());
    for (const auto& [id, c] : groups_)
      run.push_back(c);
  }
  std::vector<sample> out;
  for (const auto& c : run)
    (*c)(out);
  return out;
}

std::uint64_t metric_registry::groups_added() const {
  std::lock_guard<std::mutex> lock(mtx_);
  return next_ - 1;
}

std::size_t metric_registry::groups() const {
  std::lock_guard<std::mutex> lock(mtx_);
  return groups_.size();
}

} // namespace flint::metrics
