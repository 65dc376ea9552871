#include "runtime/actors/heartbeat/heartbeat_manager.hpp"

#include <map>
#include <stdexcept>

#include "runtime/actors/heartbeat/endpoint_executor.hpp"
#include "runtime/actors/heartbeat/heartbeat_monitor.hpp"

namespace flint::heartbeat {

struct heartbeat_manager::core : std::enable_shared_from_this<core> {
  core(heartbeat_role r, resource_id own, heartbeat_config cfg, heartbeat_listener& l,
       std::shared_ptr<main_thread_executor> exec)
    : role(r),
      own_id(std::move(own)),
      config(cfg),
      listener(l),
      executor(std::move(exec)) {}

  heartbeat_role role;
  resource_id own_id;
  heartbeat_config config;
  heartbeat_listener& listener;
  std::shared_ptr<main_thread_executor> executor;
  /// Ordered, so a round requests heartbeats in the same order every time.
  std::map<resource_id, std::shared_ptr<heartbeat_monitor>> monitors;
  bool stopped = false;

  bool is_current(const std::shared_ptr<heartbeat_monitor>& m) const {
    auto i = monitors.find(m->target_id());
    return i != monitors.end() && i->second == m;
  }

  std::shared_ptr<heartbeat_monitor> find(const resource_id& id) const {
    auto i = monitors.find(id);
    return i != monitors.end() ? i->second : nullptr;
  }

  /// Completes a heartbeat RPC to `m`'s target. The monitor is captured rather than looked up
  /// by id so that the answer to a call made before an unmonitor/monitor pair cannot count for
  /// the new monitor.
  heartbeat_target::done_fn rpc_done(const std::shared_ptr<heartbeat_monitor>& m) {
    return [weak_core = weak_from_this(), weak_monitor = std::weak_ptr(m)](expected<unit> result) {
      auto self = weak_core.lock();
      auto monitor = weak_monitor.lock();
      if (!self || !monitor || self->stopped || !self->is_current(monitor))
        return;
      if (result)
        monitor->report_rpc_success();
      else if (result.error().code == errc::unreachable)
        monitor->report_rpc_failure();
    };
  }

  void send_round() {
    if (stopped)
      return;
    // The listener may monitor or unmonitor targets while we call out: iterate over a copy.
    std::vector<std::shared_ptr<heartbeat_monitor>> round;
    round.reserve(monitors.size());
    for (auto& [id, m] : monitors)
      round.push_back(m);
    for (auto& m : round) {
      if (stopped)
        return;
      if (!is_current(m))
        continue;
      auto data = listener.retrieve_payload(m->target_id());
      m->target().request_heartbeat(own_id, std::move(data), rpc_done(m));
    }
    if (stopped)
      return;
    executor->schedule(
      [weak = weak_from_this()] {
        if (auto self = weak.lock())
          self->send_round();
      },
      config.interval);
  }

  void stop() {
    stopped = true;
    for (auto& [id, m] : monitors)
      m->cancel();
    monitors.clear();
  }
};

namespace {

heartbeat_config checked(heartbeat_config config) {
  if (auto ok = config.validate(); !ok)
    throw std::invalid_argument("heartbeat_manager: " + ok.error().message);
  return config;
}

} // namespace

heartbeat_manager::heartbeat_manager(heartbeat_role role, resource_id own_id,
                                     heartbeat_config config, heartbeat_listener& listener,
                                     std::shared_ptr<main_thread_executor> executor)
  : core_(std::make_shared<core>(role, std::move(own_id), checked(config), listener,
                                 std::move(executor))) {
  if (role == heartbeat_role::sender) {
    // Flink's sender starts its first round at once (delay 0), in the main thread.
    core_->executor->execute([weak = std::weak_ptr(core_)] {
      if (auto self = weak.lock())
        self->send_round();
    });
  }
}

heartbeat_manager::heartbeat_manager(heartbeat_role role, resource_id own_id,
                                     heartbeat_config config, heartbeat_listener& listener,
                                     rpc::rpc_endpoint& owner)
  : heartbeat_manager(role, std::move(own_id), config, listener,
                      std::make_shared<endpoint_executor>(owner)) {}

heartbeat_manager::~heartbeat_manager() {
  // Not necessarily in the main thread (the owner may be destroyed elsewhere): no validation.
  core_->stop();
}

heartbeat_role heartbeat_manager::role() const noexcept {
  return core_->role;
}

const resource_id& heartbeat_manager::own_id() const noexcept {
  return core_->own_id;
}

const heartbeat_config& heartbeat_manager::config() const noexcept {
  return core_->config;
}

void heartbeat_manager::monitor_target(const resource_id& id, heartbeat_target target) {
  core_->executor->validate_main_thread();
  // An empty call would throw later, inside a timer, and take the endpoint down with it.
  if (!target.request_heartbeat || !target.receive_heartbeat)
    throw std::invalid_argument("heartbeat_manager: target " + id + " lacks a call");
  if (core_->stopped || core_->monitors.contains(id))
    return;
  core_->monitors.emplace(
    id,
    heartbeat_monitor::start(id, std::move(target), core_->executor, core_->listener,
                             core_->config.timeout, core_->config.rpc_failure_threshold));
}

void heartbeat_manager::unmonitor_target(const resource_id& id) {
  core_->executor->validate_main_thread();
  auto i = core_->monitors.find(id);
  if (i == core_->monitors.end())
    return;
  i->second->cancel();
  core_->monitors.erase(i);
}

void heartbeat_manager::stop() {
  core_->executor->validate_main_thread();
  core_->stop();
}

bool heartbeat_manager::is_stopped() const noexcept {
  return core_->stopped;
}

bool heartbeat_manager::is_monitoring(const resource_id& id) const {
  return core_->monitors.contains(id);
}

std::optional<time_point> heartbeat_manager::last_heartbeat_from(const resource_id& id) const {
  if (auto m = core_->find(id))
    return m->last_heartbeat();
  return std::nullopt;
}

std::shared_ptr<const heartbeat_monitor> heartbeat_manager::monitor_of(
  const resource_id& id) const {
  return core_->find(id);
}

void heartbeat_manager::request_heartbeat(const resource_id& origin, payload data) {
  core_->executor->validate_main_thread();
  if (core_->stopped)
    return;
  auto m = core_->find(origin);
  if (!m)
    return;
  m->report_heartbeat();
  if (!data.empty())
    core_->listener.report_payload(origin, data);
  // The listener may have unmonitored the origin or stopped us: then nobody wants the answer.
  if (core_->stopped || !core_->is_current(m))
    return;
  auto answer = core_->listener.retrieve_payload(origin);
  m->target().receive_heartbeat(core_->own_id, std::move(answer), core_->rpc_done(m));
}

void heartbeat_manager::receive_heartbeat(const resource_id& origin, payload data) {
  core_->executor->validate_main_thread();
  if (core_->stopped)
    return;
  auto m = core_->find(origin);
  if (!m)
    return;
  m->report_heartbeat();
  if (!data.empty())
    core_->listener.report_payload(origin, data);
}

} // namespace flint::heartbeat
