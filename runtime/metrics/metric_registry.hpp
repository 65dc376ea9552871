#pragma once
/// A node's metrics (Flink's MetricRegistry): groups of samples under Flink's scopes, read on
/// demand by reporters and the REST API. A group is a collector function that appends its current
/// samples; whoever registers it owns the returned handle, and the group leaves the registry
/// when the handle goes. Collectors run on the reader's thread: they read atomics or ask
/// gateways, never an endpoint's state.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace flint::metrics {

/// Flink's variables of a scope, e.g. {"job_id", "…"}, {"task_name", "Map"}, {"subtask_index", "0"}.
using variables = std::vector<std::pair<std::string, std::string>>;

/// One figure: its scope ("taskmanager.job.task"), Flink's metric name ("numRecordsIn") and
/// the scope's variables.
struct sample {
  std::string scope;
  std::string name;
  variables vars;
  double value = 0;
};

using collector = std::function<void(std::vector<sample>&)>;

class metric_registry;

/// Removes its group from the registry when destroyed (the registry may already be gone).
class registration {
public:
  registration() = default;
  registration(std::weak_ptr<metric_registry> registry, std::uint64_t id)
    : registry_(std::move(registry)), id_(id) {}
  ~registration();
  registration(registration&& other) noexcept { *this = std::move(other); }
  registration& operator=(registration&& other) noexcept;
  registration(const registration&) = delete;
  registration& operator=(const registration&) = delete;

private:
  std::weak_ptr<metric_registry> registry_;
  std::uint64_t id_ = 0;
};

class metric_registry : public std::enable_shared_from_this<metric_registry> {
public:
  static std::shared_ptr<metric_registry> make() { return std::shared_ptr<metric_registry>(new metric_registry); }

  [[nodiscard]] registration add(collector c);
  void remove(std::uint64_t id);
  /// Every group's samples, in registration order.
  std::vector<sample> collect() const;
  std::size_t groups() const;
  /// How many groups were ever added (ended tasks' groups are removed again).
  std::uint64_t groups_added() const;

private:
  metric_registry() = default;
  // Collectors are copied out under the lock and run without it: one may ask a gateway.
  mutable std::mutex mtx_;
  std::map<std::uint64_t, std::shared_ptr<collector>> groups_;
  std::uint64_t next_ = 1;
};

} // namespace flint::metrics
