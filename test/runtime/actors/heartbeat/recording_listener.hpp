#pragma once
/// A heartbeat listener that records what it is told, with the time it was told, and sends
/// "<own id>-><target>" (plus a counter) as its payload.

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/actors/heartbeat/heartbeat_listener.hpp"
#include "runtime/actors/heartbeat/main_thread_executor.hpp"

namespace flint::heartbeat::test {

inline payload bytes_of(const std::string& s) {
  return payload(s.begin(), s.end());
}

inline std::string string_of(const payload& p) {
  return std::string(p.begin(), p.end());
}

class recording_listener : public heartbeat_listener {
public:
  struct event {
    resource_id id;
    time_point at;
  };
  struct payload_event {
    resource_id id;
    std::string data;
    time_point at;
  };

  /// `own_id` names the payloads; `clock` stamps the events.
  recording_listener(std::string own_id, std::function<time_point()> clock)
    : own_id_(std::move(own_id)),
      clock_(std::move(clock)) {}

  void notify_heartbeat_timeout(const resource_id& id) override {
    timeouts.push_back({id, clock_()});
    if (on_timeout)
      on_timeout(id);
  }

  void notify_target_unreachable(const resource_id& id) override {
    unreachable.push_back({id, clock_()});
    if (on_unreachable)
      on_unreachable(id);
  }

  void report_payload(const resource_id& id, const payload& data) override {
    payloads.push_back({id, string_of(data), clock_()});
  }

  payload retrieve_payload(const resource_id& id) override {
    if (!send_payloads)
      return {};
    return bytes_of(own_id_ + "->" + id + "#" + std::to_string(++retrieved_[id]));
  }

  std::vector<event> timeouts;
  std::vector<event> unreachable;
  std::vector<payload_event> payloads;
  bool send_payloads = true;
  /// Hooks for listeners that react (unmonitor, reconnect) from inside a notification.
  std::function<void(const resource_id&)> on_timeout;
  std::function<void(const resource_id&)> on_unreachable;

private:
  std::string own_id_;
  std::function<time_point()> clock_;
  std::map<resource_id, int> retrieved_;
};

} // namespace flint::heartbeat::test
