#include "runtime/actors/rpc/peer_roles.hpp"

#include <atomic>
#include <mutex>
#include <set>
#include <unordered_map>

namespace flint::rpc {

namespace {

struct registry {
  std::mutex mtx;
  std::unordered_map<int, peer_role> by_fd;
  /// Node ids announced under a client certificate, and under a node certificate.
  std::set<std::string, std::less<>> clients;
  std::set<std::string, std::less<>> nodes;
  std::atomic<bool> any_clients{false};
};

registry& roles() {
  // Never destroyed: network threads may still call in while the process exits.
  static auto* r = new registry;
  return *r;
}

} // namespace

void set_connection_role(int fd, peer_role role) {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  r.by_fd[fd] = role;
}

bool peer_announced(int fd, const std::string& node_id) {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  auto it = r.by_fd.find(fd);
  auto role = it == r.by_fd.end() ? peer_role::node : it->second;
  auto& mine = role == peer_role::client ? r.clients : r.nodes;
  auto& other = role == peer_role::client ? r.nodes : r.clients;
  if (other.count(node_id) != 0)
    return false;
  mine.insert(node_id);
  if (role == peer_role::client)
    r.any_clients.store(true, std::memory_order_release);
  return true;
}

peer_role connection_role(int fd) {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  auto it = r.by_fd.find(fd);
  return it == r.by_fd.end() ? peer_role::node : it->second;
}

void connection_closed(int fd) {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  r.by_fd.erase(fd);
}

bool any_client_nodes() {
  return roles().any_clients.load(std::memory_order_acquire);
}

bool is_client_node(std::string_view node_id) {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  return r.clients.find(node_id) != r.clients.end();
}

void reset_peer_roles() {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  r.by_fd.clear();
  r.clients.clear();
  r.nodes.clear();
  r.any_clients.store(false);
}

} // namespace flint::rpc
