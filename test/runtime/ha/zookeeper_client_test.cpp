// The ZooKeeper client against real servers. Waits are on a real server only: polls with short
// sleeps under a generous deadline, never a fixed sleep.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/common/logging.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "test/support/loopback_ports.hpp"
#include "test/support/zookeeper_server.hpp"

using namespace std::chrono_literals;
using flint::errc;
using flint::ha::zookeeper_client;
using flint::ha::zookeeper_connection_state;
using flint::ha::zookeeper_create_mode;
using flint::ha::zookeeper_event_type;
using flint::ha::zookeeper_watch_event;
using flint::test::zookeeper_server;

namespace {

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 15s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::unique_ptr<zookeeper_client> connected_client(const zookeeper_server& zk,
                                                   std::chrono::milliseconds session = 4s) {
  auto client = std::make_unique<zookeeper_client>(flint::make_endpoint_logger("zookeeper"));
  auto r = client->connect(zk.connect_string(), session);
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  return client;
}

/// Records the events of watches, thread-safely.
struct watch_log {
  std::mutex mutex;
  std::vector<zookeeper_watch_event> events;

  flint::ha::zookeeper_watch watch() {
    return [this](const zookeeper_watch_event& e) {
      std::lock_guard guard{mutex};
      events.push_back(e);
    };
  }
  std::size_t size() {
    std::lock_guard guard{mutex};
    return events.size();
  }
};

} // namespace

TEST_CASE("the test servers' ports lie below the kernel's ephemeral range and differ") {
  // A port from the ephemeral range can become the local end of any outgoing connection before
  // the server binds it ("Address already in use" in a soak of the cluster scripts).
  unsigned low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range)
    range >> low;
  auto ports = flint::test::free_loopback_ports(9);
  REQUIRE(ports.size() == 9);
  for (auto port : ports) {
    CHECK(port >= 20000);
    CHECK(port < std::max(low, 21024u));
  }
  std::sort(ports.begin(), ports.end());
  CHECK(std::adjacent_find(ports.begin(), ports.end()) == ports.end());
  zookeeper_server zk;
  CHECK(zk.client_port(0) < std::max(low, 21024u));
}

TEST_CASE("znodes round-trip through create and get and set and remove with versions") {
  zookeeper_server zk;
  auto client = connected_client(zk);
  CHECK(client->state() == zookeeper_connection_state::connected);
  CHECK(client->session_id() != 0);

  auto created = client->create("/flint", "v0");
  REQUIRE_MESSAGE(created.has_value(), created.error().to_string());
  CHECK(*created == "/flint");

  auto node = client->get("/flint");
  REQUIRE(node.has_value());
  CHECK(node->data == "v0");
  CHECK(node->stat.version == 0);

  auto stat = client->set("/flint", std::string("v1\0bin", 6), 0);
  REQUIRE(stat.has_value());
  CHECK(stat->version == 1);
  CHECK(client->get("/flint")->data == std::string("v1\0bin", 6));

  auto large = std::string(100'000, 'x');
  REQUIRE(client->set("/flint", large).has_value());
  CHECK(client->get("/flint")->data == large);
  CHECK(client->get("/flint")->stat.version == 2);

  auto stale = client->set("/flint", "v3", 1);
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().code == errc::rejected);
  CHECK(stale.error().message.find("/flint") != std::string::npos);
  CHECK(stale.error().message.find("bad version") != std::string::npos);

  auto stale_remove = client->remove("/flint", 0);
  REQUIRE_FALSE(stale_remove.has_value());
  CHECK(stale_remove.error().code == errc::rejected);

  REQUIRE(client->remove("/flint", 2).has_value());
  auto gone = client->exists("/flint");
  REQUIRE(gone.has_value());
  CHECK_FALSE(gone->has_value());
}

TEST_CASE("errors name the path for no node, node exists and node has children") {
  zookeeper_server zk;
  auto client = connected_client(zk);

  auto missing = client->get("/missing");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().message == "get /missing: no node");

  CHECK(client->set("/missing", "x").error().code == errc::not_found);
  CHECK(client->remove("/missing").error().code == errc::not_found);
  CHECK(client->children("/missing").error().code == errc::not_found);

  auto orphan = client->create("/a/b/c", "x");
  REQUIRE_FALSE(orphan.has_value());
  CHECK(orphan.error().code == errc::not_found);

  auto nested = client->create("/a/b/c", "x", {.create_parents = true});
  REQUIRE_MESSAGE(nested.has_value(), nested.error().to_string());
  CHECK(client->exists("/a/b")->has_value());

  auto twice = client->create("/a/b/c", "y");
  REQUIRE_FALSE(twice.has_value());
  CHECK(twice.error().code == errc::rejected);
  CHECK(twice.error().message == "create /a/b/c: node exists");

  auto parent = client->remove("/a/b");
  REQUIRE_FALSE(parent.has_value());
  CHECK(parent.error().code == errc::illegal_state);
  CHECK(parent.error().message.find("/a/b") != std::string::npos);

  auto children = client->children("/a/b");
  REQUIRE(children.has_value());
  CHECK(*children == std::vector<std::string>{"c"});
}

TEST_CASE("an ephemeral node disappears when its session closes and sequential nodes count up") {
  zookeeper_server zk;
  auto owner = connected_client(zk);
  auto observer = connected_client(zk);

  REQUIRE(owner->create("/leader", "me", {.mode = zookeeper_create_mode::ephemeral}).has_value());
  auto seen = observer->exists("/leader");
  REQUIRE(seen.has_value());
  REQUIRE(seen->has_value());
  CHECK((*seen)->ephemeral_owner == owner->session_id());

  REQUIRE(observer->create("/seq").has_value());
  std::vector<std::string> names;
  for (int i = 0; i < 3; ++i) {
    auto name = owner->create("/seq/n-", "", {.mode = zookeeper_create_mode::ephemeral_sequential});
    REQUIRE(name.has_value());
    names.push_back(*name);
  }
  CHECK(names[0] == "/seq/n-0000000000");
  CHECK(names[0] < names[1]);
  CHECK(names[1] < names[2]);
  auto persistent =
    observer->create("/seq/p-", "", {.mode = zookeeper_create_mode::persistent_sequential});
  CHECK(*persistent == "/seq/p-0000000003");

  owner->close();
  CHECK(owner->state() == zookeeper_connection_state::disconnected);
  CHECK(owner->get("/leader").error().code == errc::illegal_state);
  // Closing ends the session at once: its ephemeral nodes are gone when close() returns.
  CHECK_FALSE(observer->exists("/leader")->has_value());
  CHECK(*observer->children("/seq") == std::vector<std::string>{"p-0000000003"});
}

TEST_CASE("a data watch and a children watch fire once") {
  zookeeper_server zk;
  auto client = connected_client(zk);
  REQUIRE(client->create("/w", "0").has_value());

  watch_log data;
  REQUIRE(client->get("/w", data.watch()).has_value());
  REQUIRE(client->set("/w", "1").has_value());
  REQUIRE(client->set("/w", "2").has_value());
  watch_log later;
  REQUIRE(client->exists("/w", later.watch()).has_value());
  REQUIRE(client->set("/w", "3").has_value());
  // Events arrive in order: once the later watch fired, the first one had its only chance.
  REQUIRE(eventually([&] { return later.size() == 1; }));
  REQUIRE(data.size() == 1);
  CHECK(data.events[0].type == zookeeper_event_type::data_changed);
  CHECK(data.events[0].path == "/w");

  watch_log kids;
  REQUIRE(client->children("/w", kids.watch())->empty());
  REQUIRE(client->create("/w/a").has_value());
  REQUIRE(client->create("/w/b").has_value());
  watch_log gone;
  REQUIRE(client->exists("/w/a", gone.watch()).has_value());
  REQUIRE(client->remove("/w/a").has_value());
  REQUIRE(eventually([&] { return gone.size() == 1; }));
  CHECK(gone.events[0].type == zookeeper_event_type::deleted);
  REQUIRE(kids.size() == 1);
  CHECK(kids.events[0].type == zookeeper_event_type::children_changed);
  CHECK(kids.events[0].path == "/w");

  watch_log created;
  REQUIRE_FALSE(client->exists("/w/c", created.watch())->has_value());
  REQUIRE(client->create("/w/c").has_value());
  REQUIRE(eventually([&] { return created.size() == 1; }));
  CHECK(created.events[0].type == zookeeper_event_type::created);
}

TEST_CASE("a stopped server makes the session connecting and its restart connected again") {
  zookeeper_server zk;
  auto client = connected_client(zk, 6s);
  std::mutex mutex;
  std::vector<zookeeper_connection_state> states;
  client->add_connection_listener([&](zookeeper_connection_state s) {
    std::lock_guard guard{mutex};
    states.push_back(s);
  });
  auto last = [&] {
    std::lock_guard guard{mutex};
    return states.empty() ? zookeeper_connection_state::disconnected : states.back();
  };
  auto session = client->session_id();
  REQUIRE(client->create("/mine", "x", {.mode = zookeeper_create_mode::ephemeral}).has_value());

  zk.stop(0);
  REQUIRE(eventually([&] { return last() == zookeeper_connection_state::connecting; }));
  CHECK(client->state() == zookeeper_connection_state::connecting);
  auto lost = client->get("/mine");
  REQUIRE_FALSE(lost.has_value());
  CHECK(lost.error().code == errc::unreachable);

  zk.restart(0);
  REQUIRE(eventually([&] { return last() == zookeeper_connection_state::connected; }));
  // The same data directory revives the session, and with it the ephemeral node.
  CHECK(client->session_id() == session);
  CHECK(client->get("/mine")->data == "x");
}

TEST_CASE("a three-server ensemble keeps serving when its leader is killed") {
  zookeeper_server zk(3);
  CHECK(zk.connect_string().find(',') != std::string::npos);
  auto client = connected_client(zk);
  REQUIRE(client->create("/job", "graph").has_value());

  std::size_t leader = zk.size();
  for (std::size_t i = 0; i < zk.size(); ++i)
    if (zk.mode(i) == "leader")
      leader = i;
  REQUIRE(leader < zk.size());
  zk.kill(leader);

  // Calls may fail while a new leader is elected and the client finds a server; then they pass.
  REQUIRE(eventually([&] {
    auto r = client->set("/job", "graph-2");
    return r.has_value();
  }));
  CHECK(client->get("/job")->data == "graph-2");
  CHECK(client->state() == zookeeper_connection_state::connected);
  std::size_t serving = 0;
  for (std::size_t i = 0; i < zk.size(); ++i)
    serving += zk.mode(i).empty() ? 0 : 1;
  CHECK(serving == 2);
}

TEST_CASE("the creator ACL needs a well-formed digest, and errors never show it") {
  zookeeper_server zk;
  using flint::ha::zookeeper_acl;
  for (const std::string digest : {"", "no-colon-secret", ":secret-without-user"}) {
    CAPTURE(digest);
    zookeeper_client client(flint::make_endpoint_logger("zookeeper"));
    auto r = client.connect(zk.connect_string(), 4s, 10s, {zookeeper_acl::creator, digest});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_argument);
    if (!digest.empty())
      CHECK(r.error().message.find(digest) == std::string::npos);
    CHECK(client.state() == zookeeper_connection_state::disconnected);
  }
  // With a digest, nodes (and the parents made for them) are the creator's alone.
  zookeeper_client owner(flint::make_endpoint_logger("zookeeper"));
  REQUIRE(owner.connect(zk.connect_string(), 4s, 10s, {zookeeper_acl::creator, "flint:pw"}));
  REQUIRE(owner.create("/owned/a/b", "x", {.create_parents = true}).has_value());
  auto stranger = connected_client(zk);
  for (const auto* node : {"/owned", "/owned/a", "/owned/a/b"}) {
    CAPTURE(node);
    auto set = stranger->set(node, "y");
    REQUIRE_FALSE(set.has_value());
    CHECK(set.error().code == errc::rejected);
  }
  REQUIRE_FALSE(stranger->remove("/owned/a/b").has_value());
  CHECK(owner.get("/owned/a/b")->data == "x");
  REQUIRE(owner.remove("/owned/a/b").has_value());
}

TEST_CASE("under the creator ACL a cluster node anyone may change is refused, and a new one is "
          "the creator's alone") {
  zookeeper_server zk;
  using flint::ha::zookeeper_acl;
  using flint::ha::zookeeper_acl_entry;
  auto stranger = connected_client(zk);
  // Squatted before Flint started: an open node whose children anyone could delete or plant.
  REQUIRE(stranger->create("/flink/squatted", "", {.create_parents = true}).has_value());
  zookeeper_client owner(flint::make_endpoint_logger("zookeeper"));
  REQUIRE(owner.connect(zk.connect_string(), 4s, 10s, {zookeeper_acl::creator, "flint:pw"}));
  auto refused = owner.ensure_private_node("/flink/squatted");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::rejected);
  CHECK(refused.error().message.find("/flink/squatted") != std::string::npos);
  CHECK(refused.error().message.find("anyone") != std::string::npos);

  REQUIRE(owner.ensure_private_node("/flink/mine").has_value());
  REQUIRE(owner.ensure_private_node("/flink/mine").has_value()); // again: it is ours
  auto entries = owner.acl("/flink/mine");
  REQUIRE(entries.has_value());
  REQUIRE(entries->size() == 1);
  CHECK(entries->front().scheme == "digest");
  CHECK(entries->front().id.starts_with("flint:"));
  CHECK(entries->front().perms == 31);
  auto planted = stranger->create("/flink/mine/jobgraphs", "");
  REQUIRE_FALSE(planted.has_value());
  CHECK(planted.error().code == errc::rejected);

  // The open ACL checks nothing (Flink's default).
  CHECK(stranger->ensure_private_node("/flink/squatted").has_value());
}
