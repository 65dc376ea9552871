#include "runtime/actors/rpc/peer_roles.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

namespace flint::rpc {

namespace {

struct connection {
  peer_role role = peer_role::node;
  /// What the peer announced in its RPC handshake (empty until then).
  std::string node_id;
};

struct registry {
  std::mutex mtx;
  std::unordered_map<int, connection> by_fd;
  /// Node ids announced under a client certificate: kept for the process's life, so a client's
  /// call still in a mailbox after its connection closed is still a client's.
  std::set<std::string, std::less<>> clients;
  /// Node ids announced by open connections under a node certificate (or without TLS), with
  /// their number of connections: forgotten with the last, so one id per connecting process
  /// does not pile up.
  std::map<std::string, int, std::less<>> nodes;
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
  r.by_fd[fd] = connection{role, {}};
}

bool peer_announced(int fd, const std::string& node_id) {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  auto& conn = r.by_fd[fd]; // without TLS: a node's connection
  if (conn.role == peer_role::client) {
    if (r.nodes.count(node_id) != 0)
      return false;
    r.clients.insert(node_id);
    r.any_clients.store(true, std::memory_order_release);
  } else {
    if (r.clients.count(node_id) != 0)
      return false;
    if (conn.node_id != node_id) {
      ++r.nodes[node_id];
      if (!conn.node_id.empty() && --r.nodes[conn.node_id] <= 0)
        r.nodes.erase(conn.node_id);
    }
  }
  conn.node_id = node_id;
  return true;
}

peer_role connection_role(int fd) {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  auto it = r.by_fd.find(fd);
  return it == r.by_fd.end() ? peer_role::node : it->second.role;
}

void connection_closed(int fd) {
  auto& r = roles();
  std::lock_guard<std::mutex> lock(r.mtx);
  auto it = r.by_fd.find(fd);
  if (it == r.by_fd.end())
    return;
  if (it->second.role == peer_role::node && !it->second.node_id.empty()) {
    auto n = r.nodes.find(it->second.node_id);
    if (n != r.nodes.end() && --n->second <= 0)
      r.nodes.erase(n);
  }
  r.by_fd.erase(it);
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
