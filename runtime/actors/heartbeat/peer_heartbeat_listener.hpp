#pragma once
/// The one heartbeat listener every endpoint uses for a kind of peer: a lost peer (timed out or
/// unreachable) is reported to `lost` with Flink's cause texts, payloads go to optional functions.

#include <functional>
#include <string>
#include <utility>

#include "runtime/actors/heartbeat/heartbeat_listener.hpp"

namespace flint::heartbeat {

class peer_heartbeat_listener final : public heartbeat_listener {
public:
  using lost_fn = std::function<void(const resource_id& id, const std::string& cause)>;
  using report_fn = std::function<void(const resource_id& id, const payload& data)>;
  using retrieve_fn = std::function<payload(const resource_id& id)>;

  /// `timed_out` starts the timeout cause, `peer` names the peer in the unreachable one: with
  /// ("The heartbeat of TaskManager", "TaskManager") a lost `id` is reported as "The heartbeat of
  /// TaskManager with id <id> timed out." or "TaskManager with id <id> is no longer reachable."
  peer_heartbeat_listener(std::string timed_out, std::string peer, lost_fn lost,
                          report_fn report = {}, retrieve_fn retrieve = {})
    : timed_out_(std::move(timed_out)),
      peer_(std::move(peer)),
      lost_(std::move(lost)),
      report_(std::move(report)),
      retrieve_(std::move(retrieve)) {}

  void notify_heartbeat_timeout(const resource_id& id) override {
    lost_(id, timed_out_ + " with id " + id + " timed out.");
  }
  void notify_target_unreachable(const resource_id& id) override {
    lost_(id, peer_ + " with id " + id + " is no longer reachable.");
  }
  void report_payload(const resource_id& id, const payload& data) override {
    if (report_)
      report_(id, data);
  }
  payload retrieve_payload(const resource_id& id) override {
    return retrieve_ ? retrieve_(id) : payload{};
  }

private:
  std::string timed_out_;
  std::string peer_;
  lost_fn lost_;
  report_fn report_;
  retrieve_fn retrieve_;
};

} // namespace flint::heartbeat
