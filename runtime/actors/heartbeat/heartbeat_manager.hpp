#pragma once
/// Heartbeats of one relation, owned by an endpoint and used only in its main thread (Flink's
/// HeartbeatManagerImpl and HeartbeatManagerSenderImpl).
///
/// Both roles keep one `heartbeat_monitor` per monitored target and take both kinds of incoming
/// heartbeat:
/// - `request_heartbeat(origin, payload)`: a target asks us (we are its receiver). Report the
///   payload, re-arm the origin's monitor, answer with our payload through the target's
///   `receive_heartbeat`.
/// - `receive_heartbeat(origin, payload)`: a target answers our request. Report the payload and
///   re-arm the origin's monitor.
/// The sender role also requests a heartbeat from every monitored target every
/// `heartbeat.interval`, starting right after construction. Heartbeat RPCs that fail with
/// errc::unreachable count towards `heartbeat.rpc-failure-threshold`; other failures (an ask
/// timeout) do not, as in Flink, where only RecipientUnreachableException counts.
///
/// Heartbeats from targets that are not monitored are ignored.

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/actors/heartbeat/heartbeat_config.hpp"
#include "runtime/actors/heartbeat/heartbeat_listener.hpp"
#include "runtime/actors/heartbeat/heartbeat_target.hpp"
#include "runtime/actors/heartbeat/main_thread_executor.hpp"

namespace flint::rpc {
class rpc_endpoint;
}

namespace flint::heartbeat {

enum class heartbeat_role {
  /// Requests heartbeats periodically (ResourceManager, JobMaster towards TaskExecutors).
  sender,
  /// Answers requests and watches that they keep coming (TaskExecutor, JobMaster towards RM).
  receiver,
};

class heartbeat_monitor;

class heartbeat_manager {
public:
  /// A manager whose timers and clock are those of `executor`. Throws std::invalid_argument when
  /// `config` does not validate (validate configuration at start-up, where it is read).
  /// `listener` must outlive the manager.
  heartbeat_manager(heartbeat_role role, resource_id own_id, heartbeat_config config,
                    heartbeat_listener& listener, std::shared_ptr<main_thread_executor> executor);

  /// A manager living in `owner`'s main thread (`owner` must outlive it; it normally owns it).
  heartbeat_manager(heartbeat_role role, resource_id own_id, heartbeat_config config,
                    heartbeat_listener& listener, rpc::rpc_endpoint& owner);

  /// Stops the manager; timers still pending afterwards do nothing.
  ~heartbeat_manager();

  heartbeat_manager(const heartbeat_manager&) = delete;
  heartbeat_manager& operator=(const heartbeat_manager&) = delete;

  heartbeat_role role() const noexcept;
  const resource_id& own_id() const noexcept;
  const heartbeat_config& config() const noexcept;

  /// Starts watching `id`: its timeout runs from now. A target already monitored keeps its
  /// monitor (and its target). Does nothing once stopped. Both calls of `target` must be set
  /// (std::invalid_argument otherwise).
  void monitor_target(const resource_id& id, heartbeat_target target);

  /// Stops watching `id` without reporting it; later answers from it are ignored.
  void unmonitor_target(const resource_id& id);

  /// Stops every monitor and, for a sender, the periodic requests. Final.
  void stop();

  bool is_stopped() const noexcept;
  bool is_monitoring(const resource_id& id) const;

  /// When the last heartbeat from `id` arrived (owner's clock); empty when `id` is not
  /// monitored or has not been heard from yet.
  std::optional<time_point> last_heartbeat_from(const resource_id& id) const;

  /// The monitor of `id`, for inspection (null when not monitored).
  std::shared_ptr<const heartbeat_monitor> monitor_of(const resource_id& id) const;

  /// `origin` asks for our heartbeat (see the class comment).
  void request_heartbeat(const resource_id& origin, payload data);

  /// `origin` answers our heartbeat request (see the class comment).
  void receive_heartbeat(const resource_id& origin, payload data);

private:
  struct core; // shared with pending timers and RPC callbacks, which hold it weakly
  std::shared_ptr<core> core_;
};

} // namespace flint::heartbeat
