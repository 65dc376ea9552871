// ZooKeeper leader election and retrieval against a real server. Waits poll with short sleeps
// under a generous deadline, never a fixed sleep.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime/actors/leader/zookeeper_ha_services.hpp"
#include "runtime/actors/leader/zookeeper_leader_services.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "test/support/zookeeper_server.hpp"

using namespace std::chrono_literals;
using flint::ha::zookeeper_client;
using flint::ha::zookeeper_connection_state;
using flint::leader::leader_address;
using flint::leader::zookeeper_leader_election_service;
using flint::leader::zookeeper_leader_retrieval_service;
using flint::rpc::fencing_token;
using flint::test::zookeeper_server;

namespace {

constexpr const char* component = "/flint/test-cluster/leader/resource_manager";

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 15s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::shared_ptr<zookeeper_client> connected_client(const zookeeper_server& zk,
                                                   std::chrono::milliseconds session = 4s) {
  auto client = std::make_shared<zookeeper_client>(flint::make_endpoint_logger("zookeeper"));
  auto r = client->connect(zk.connect_string(), session);
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  return client;
}

struct contender : flint::leader::leader_contender {
  explicit contender(std::string name) : name(std::move(name)) {}

  void grant_leadership(const fencing_token& id) override {
    std::lock_guard guard{mutex};
    session = id;
    ++grants;
  }
  void revoke_leadership() override {
    std::lock_guard guard{mutex};
    session = {};
    ++revokes;
  }
  std::string description() const override { return name; }

  fencing_token current() {
    std::lock_guard guard{mutex};
    return session;
  }
  int granted() {
    std::lock_guard guard{mutex};
    return grants;
  }
  int revoked() {
    std::lock_guard guard{mutex};
    return revokes;
  }

  std::string name;
  std::mutex mutex;
  fencing_token session;
  int grants = 0;
  int revokes = 0;
};

struct listener : flint::leader::leader_retrieval_listener {
  void notify_leader_address(const leader_address& a, const fencing_token& id) override {
    std::lock_guard guard{mutex};
    address = a;
    session = id;
    ++notifications;
  }
  fencing_token current() {
    std::lock_guard guard{mutex};
    return session;
  }
  leader_address current_address() {
    std::lock_guard guard{mutex};
    return address;
  }

  std::mutex mutex;
  leader_address address;
  fencing_token session;
  int notifications = 0;
};

leader_address address_of(const std::string& name, std::uint16_t port) {
  leader_address a;
  a.endpoint_id = name;
  a.host = "127.0.0.1";
  a.port = port;
  return a;
}

} // namespace

TEST_CASE("leader addresses round-trip through their text form") {
  fencing_token id{0x0123456789abcdefull, 0xfedcba9876543210ull};
  auto text = flint::leader::encode_leader_address(address_of("resource_manager", 6123), id);
  auto decoded = flint::leader::decode_leader_address(text);
  REQUIRE(decoded.has_value());
  CHECK(decoded->address.endpoint_id == "resource_manager");
  CHECK(decoded->address.host == "127.0.0.1");
  CHECK(decoded->address.port == 6123);
  CHECK(decoded->session_id == id);
  CHECK_FALSE(flint::leader::decode_leader_address("garbage").has_value());
  CHECK_FALSE(flint::leader::decode_leader_address("a\nb\n99999\n0123").has_value());
}

TEST_CASE("one of two contenders leads and retrieval follows it to the next after a stop") {
  zookeeper_server zk;
  auto c1 = connected_client(zk);
  auto c2 = connected_client(zk);
  auto c3 = connected_client(zk);
  auto log = flint::make_endpoint_logger("leader");

  contender a("contender-a");
  contender b("contender-b");
  listener follower;
  auto ea = std::make_unique<zookeeper_leader_election_service>(c1, component, 2s, log);
  zookeeper_leader_election_service eb(c2, component, 2s, log);
  zookeeper_leader_retrieval_service retrieval(c3, component, log);
  retrieval.start(follower);

  ea->start(a);
  REQUIRE(eventually([&] { return a.granted() == 1; }));
  eb.start(b);
  auto first = a.current();
  CHECK_FALSE(first.is_nil());
  CHECK(ea->has_leadership(first));
  CHECK_FALSE(ea->has_leadership(fencing_token{1, 2}));

  // A confirmation under a wrong id publishes nothing.
  ea->confirm_leadership(fencing_token{1, 2}, address_of("wrong", 1));
  ea->confirm_leadership(first, address_of("rm-a", 1001));
  REQUIRE(eventually([&] { return follower.current() == first; }));
  CHECK(follower.current_address().endpoint_id == "rm-a");
  CHECK(follower.current_address().port == 1001);
  CHECK(b.granted() == 0);

  ea->stop();
  REQUIRE(eventually([&] { return b.granted() == 1; }));
  CHECK(a.revoked() == 0); // stop revokes nothing
  CHECK_FALSE(ea->has_leadership(first));
  auto second = b.current();
  CHECK_FALSE(second.is_nil());
  CHECK(second != first);
  // The stopped leader's address went with it: no leader until the next one confirms.
  REQUIRE(eventually([&] { return follower.current().is_nil(); }));
  eb.confirm_leadership(second, address_of("rm-b", 1002));
  REQUIRE(eventually([&] { return follower.current() == second; }));
  CHECK(follower.current_address().endpoint_id == "rm-b");
  ea.reset();
}

TEST_CASE("the next contender leads when the leader's client closes") {
  zookeeper_server zk;
  auto c1 = connected_client(zk);
  auto c2 = connected_client(zk);
  auto c3 = connected_client(zk);
  auto log = flint::make_endpoint_logger("leader");

  contender a("contender-a");
  contender b("contender-b");
  listener follower;
  zookeeper_leader_election_service ea(c1, component, 2s, log);
  zookeeper_leader_election_service eb(c2, component, 2s, log);
  zookeeper_leader_retrieval_service retrieval(c3, component, log);
  ea.start(a);
  REQUIRE(eventually([&] { return a.granted() == 1; }));
  eb.start(b);
  retrieval.start(follower);
  auto first = a.current();
  ea.confirm_leadership(first, address_of("rm-a", 1001));
  REQUIRE(eventually([&] { return follower.current() == first; }));

  c1->close();
  REQUIRE(eventually([&] { return b.granted() == 1; }));
  // No callback runs after close(), so `a` hears nothing: its process is gone in practice.
  auto second = b.current();
  CHECK(second != first);
  eb.confirm_leadership(second, address_of("rm-b", 1002));
  REQUIRE(eventually([&] { return follower.current() == second; }));
  CHECK(follower.current_address().endpoint_id == "rm-b");
}

TEST_CASE("a leader cut off from its session does not confirm its leadership, before any revocation") {
  // A JobManager frozen past its session wakes with its leadership still granted: what it
  // dequeues first must already see has_leadership false (issue 25), not only after the revocation.
  zookeeper_server zk;
  auto c1 = connected_client(zk, 6s);
  auto log = flint::make_endpoint_logger("leader");
  constexpr auto grace = 3s;
  contender a("contender-a");
  zookeeper_leader_election_service ea(c1, component, grace, log);
  ea.start(a);
  REQUIRE(eventually([&] { return a.granted() == 1; }));
  auto first = a.current();
  CHECK(ea.has_leadership(first));
  zk.stop(0);
  REQUIRE(eventually([&] { return c1->state() == zookeeper_connection_state::connecting; }));
  REQUIRE(eventually([&] { return !ea.has_leadership(first); }, 10s));
  CHECK(a.revoked() == 0);
  REQUIRE(eventually([&] { return a.revoked() == 1; }));
}

TEST_CASE("a suspended leader is revoked after the grace period and leads again after a restart") {
  zookeeper_server zk;
  auto c1 = connected_client(zk, 6s);
  auto c2 = connected_client(zk, 6s);
  auto log = flint::make_endpoint_logger("leader");
  constexpr auto grace = 1500ms;

  contender a("contender-a");
  listener follower;
  zookeeper_leader_election_service ea(c1, component, grace, log);
  zookeeper_leader_retrieval_service retrieval(c2, component, log);
  ea.start(a);
  retrieval.start(follower);
  REQUIRE(eventually([&] { return a.granted() == 1; }));
  auto first = a.current();
  ea.confirm_leadership(first, address_of("rm-a", 1001));
  REQUIRE(eventually([&] { return follower.current() == first; }));

  zk.stop(0);
  REQUIRE(eventually([&] { return c1->state() == zookeeper_connection_state::connecting; }));
  auto suspended_at = std::chrono::steady_clock::now();
  CHECK(a.revoked() == 0);
  REQUIRE(eventually([&] { return follower.current().is_nil(); }));
  REQUIRE(eventually([&] { return a.revoked() == 1; }));
  auto waited = std::chrono::steady_clock::now() - suspended_at;
  CHECK(waited >= grace - 200ms);
  CHECK_FALSE(ea.has_leadership(first));

  zk.restart(0);
  REQUIRE(eventually([&] { return a.granted() == 2; }, 20s));
  auto second = a.current();
  CHECK_FALSE(second.is_nil());
  CHECK(second != first);
  ea.confirm_leadership(second, address_of("rm-a", 1001));
  REQUIRE(eventually([&] { return follower.current() == second; }, 20s));
}

TEST_CASE(
  "ZooKeeper HA services elect each component under its own path, and a JobMaster under its Dispatcher") {
  zookeeper_server zk;
  auto client = connected_client(zk);
  flint::leader::zookeeper_ha_config config;
  config.root = "/flink/";
  config.cluster_id = "c1";
  flint::leader::zookeeper_ha_services services(client, config,
                                                flint::make_endpoint_logger("leader"));
  flint::graph::job_id job{1, 2};
  CHECK(services.component_path("dispatcher") == "/flink/c1/leader/dispatcher");

  contender rm("resource_manager");
  contender jm("job_master");
  listener follower;
  auto rm_election = services.resource_manager_election();
  auto jm_election = services.job_master_election(job);
  auto retrieval = services.resource_manager_retrieval();
  rm_election->start(rm);
  jm_election->start(jm);
  retrieval->start(follower);
  REQUIRE(eventually([&] { return rm.granted() == 1 && jm.granted() == 1; }));
  rm_election->confirm_leadership(rm.current(), address_of("resource_manager", 7001));
  REQUIRE(eventually([&] { return follower.current() == rm.current(); }));
  // A job's JobMaster has no latch of its own: its Dispatcher leads for it. Its address is
  // published under the job's path, and taken back when it stops.
  auto job_info = "/flink/c1/leader/job-" + job.to_string() + "/connection_info";
  jm_election->confirm_leadership(jm.current(), address_of("job_master/1", 7001));
  auto published = client->get(job_info);
  REQUIRE(published.has_value());
  auto decoded = flint::leader::decode_leader_address(published->data);
  REQUIRE(decoded.has_value());
  CHECK(decoded->session_id == jm.current());
  CHECK(client->exists("/flink/c1/leader/job-" + job.to_string() + "/latch").value()
        == std::nullopt);
  jm_election->stop();
  CHECK(client->exists(job_info).value() == std::nullopt);
}
