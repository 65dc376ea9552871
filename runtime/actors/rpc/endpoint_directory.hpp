#pragma once
/// The endpoints a node knows by id: its own, and peers it learned of (a JobMaster records the
/// TaskExecutors that registered with it). Thread-safe: endpoints on any thread look up here.
/// One per node, owned by whoever wires the node (no singleton).

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <caf/actor.hpp>

namespace flint::rpc {

class endpoint_directory {
public:
  void put(const std::string& endpoint_id, const caf::actor& handle) {
    std::lock_guard<std::mutex> guard(mtx_);
    entries_[endpoint_id] = handle;
  }
  void remove(const std::string& endpoint_id) {
    std::lock_guard<std::mutex> guard(mtx_);
    entries_.erase(endpoint_id);
  }
  std::optional<caf::actor> lookup(const std::string& endpoint_id) const {
    std::lock_guard<std::mutex> guard(mtx_);
    auto i = entries_.find(endpoint_id);
    if (i == entries_.end())
      return std::nullopt;
    return i->second;
  }

private:
  mutable std::mutex mtx_;
  std::unordered_map<std::string, caf::actor> entries_;
};

} // namespace flint::rpc
