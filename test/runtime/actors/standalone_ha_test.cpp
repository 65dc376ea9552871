// Standalone HA services (Flink's StandaloneHaServices) and the locator's directory fallback, with
// two actor systems in one process talking over CAF's middleman on 127.0.0.1: the "JobManager"
// system publishes its locator, the "TaskManager" system resolves leaders there.

#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/actors/leader/standalone_ha_services.hpp"
#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"

using namespace flint;
using namespace flint::leader;
using namespace std::chrono_literals;

namespace {

/// Records notifications; tests wait on them with a timeout (real sockets, real threads).
struct recording_listener : leader_retrieval_listener {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::pair<leader_address, rpc::fencing_token>> seen;

  void notify_leader_address(const leader_address& a, const rpc::fencing_token& id) override {
    {
      std::lock_guard<std::mutex> guard(mtx);
      seen.emplace_back(a, id);
    }
    cv.notify_all();
  }
  /// Waits until at least `n` notifications arrived.
  bool await(std::size_t n, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock<std::mutex> lock(mtx);
    return cv.wait_for(lock, timeout, [&] { return seen.size() >= n; });
  }
  std::size_t count() {
    std::lock_guard<std::mutex> guard(mtx);
    return seen.size();
  }
  std::pair<leader_address, rpc::fencing_token> at(std::size_t i) {
    std::lock_guard<std::mutex> guard(mtx);
    return seen.at(i);
  }
};

struct recording_contender : leader_contender {
  std::vector<rpc::fencing_token> grants;
  int revokes = 0;
  void grant_leadership(const rpc::fencing_token& id) override { grants.push_back(id); }
  void revoke_leadership() override { ++revokes; }
  std::string description() const override { return "contender"; }
};

caf::behavior idle_actor() {
  return {[](int x) { return x; }};
}

/// Two nodes: `jm` publishes its locator (with the directory fallback), `tm` resolves there.
struct two_nodes {
  caf::actor_system_config jm_cfg;
  caf::actor_system jm{rpc::configure_node(jm_cfg, {})};
  caf::actor_system_config tm_cfg;
  caf::actor_system tm{rpc::configure_node(tm_cfg, {})};
  rpc::endpoint_directory directory;
  caf::actor locator = rpc::spawn_endpoint_locator(jm, &directory);
  std::uint16_t port = 0;

  two_nodes() {
    auto p = rpc::publish_locator(jm, locator, 0, "127.0.0.1");
    REQUIRE_MESSAGE(p.has_value(), p.error().to_string());
    port = *p;
  }
  ~two_nodes() { caf::anon_send_exit(locator, caf::exit_reason::user_shutdown); }

  standalone_ha_config ha_config() const {
    standalone_ha_config c;
    c.jobmanager_host = "127.0.0.1";
    c.jobmanager_port = port;
    c.retry_interval = 50ms;
    c.lookup_timeout = 2s;
    return c;
  }
};

bool same_actor(const caf::actor& a, const caf::actor& b) {
  return a && b && a.id() == b.id() && a.node() == b.node();
}

} // namespace

TEST_CASE("the fixed standalone leader id is not nil") {
  CHECK_FALSE(standalone_leader_id().is_nil());
  CHECK(standalone_leader_id() == rpc::fencing_token{0, 1});
}

TEST_CASE_FIXTURE(two_nodes, "the locator answers ids of the node's directory") {
  auto registered = jm.spawn(idle_actor);
  auto dynamic = jm.spawn(idle_actor);
  rpc::register_endpoint(locator, "dispatcher", registered);
  // Not registered and not in the directory: not found.
  auto missing = rpc::connect_endpoint(tm, "127.0.0.1", port, "job_master/j1", 5s);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  // Put into the directory later (as the Dispatcher does for a new JobMaster): found.
  directory.put("job_master/j1", dynamic);
  auto found = rpc::connect_endpoint(tm, "127.0.0.1", port, "job_master/j1", 5s);
  REQUIRE_MESSAGE(found.has_value(), found.error().to_string());
  CHECK(same_actor(*found, dynamic));
  // Registered ids come first; the directory is only the fallback.
  directory.put("dispatcher", dynamic);
  auto d = rpc::connect_endpoint(tm, "127.0.0.1", port, "dispatcher", 5s);
  REQUIRE(d.has_value());
  CHECK(same_actor(*d, registered));
  // Removed from the directory: gone again.
  directory.remove("job_master/j1");
  auto gone = rpc::connect_endpoint(tm, "127.0.0.1", port, "job_master/j1", 5s);
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().code == errc::not_found);
  caf::anon_send_exit(registered, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(dynamic, caf::exit_reason::user_shutdown);
}

TEST_CASE("local standalone elections grant the fixed id and publish to local retrievals") {
  standalone_ha_services ha;
  CHECK_FALSE(ha.remote());
  recording_listener early;
  auto early_retrieval = ha.resource_manager_retrieval();
  early_retrieval->start(early);
  CHECK(early.count() == 0);

  recording_contender rm;
  auto election = ha.resource_manager_election();
  election->start(rm);
  REQUIRE(rm.grants.size() == 1);
  CHECK(rm.grants[0] == standalone_leader_id());
  CHECK(election->has_leadership(standalone_leader_id()));
  CHECK_FALSE(election->has_leadership(rpc::fencing_token{7, 7}));
  // Not published before the contender confirms.
  CHECK(early.count() == 0);
  election->confirm_leadership(standalone_leader_id(), {"resource_manager", {}, {}, 0});
  REQUIRE(early.count() == 1);
  CHECK(early.at(0).first.endpoint_id == "resource_manager");
  CHECK(early.at(0).second == standalone_leader_id());

  // A retrieval started after the confirmation learns the leader at once.
  recording_listener late;
  auto late_retrieval = ha.resource_manager_retrieval();
  late_retrieval->start(late);
  REQUIRE(late.count() == 1);
  CHECK(late.at(0).first.endpoint_id == "resource_manager");

  // Other leaderships are separate: the Dispatcher's retrieval knows nothing yet.
  recording_listener dispatcher_follower;
  auto d = ha.dispatcher_retrieval();
  d->start(dispatcher_follower);
  CHECK(dispatcher_follower.count() == 0);

  // Stopping the election revokes and tells followers there is no leader.
  election->stop();
  CHECK(rm.revokes == 1);
  CHECK_FALSE(election->has_leadership(standalone_leader_id()));
  REQUIRE(early.count() == 2);
  CHECK(early.at(1).first.empty());
  CHECK(early.at(1).second.is_nil());
  // A stopped retrieval hears nothing more.
  early_retrieval->stop();
  recording_contender rm2;
  auto election2 = ha.resource_manager_election();
  election2->start(rm2);
  election2->confirm_leadership(standalone_leader_id(), {"resource_manager", {}, {}, 0});
  CHECK(early.count() == 2);
  CHECK(late.count() == 3);
}

TEST_CASE("job master elections are per job") {
  standalone_ha_services ha;
  graph::job_id a{1, 2};
  graph::job_id b{3, 4};
  recording_contender ca;
  auto ea = ha.job_master_election(a);
  ea->start(ca);
  ea->confirm_leadership(standalone_leader_id(), {"job_master/" + a.to_string(), {}, {}, 0});
  recording_listener fa;
  recording_listener fb;
  auto ra = ha.job_master_retrieval(a);
  auto rb = ha.job_master_retrieval(b);
  ra->start(fa);
  rb->start(fb);
  REQUIRE(fa.count() == 1);
  CHECK(fa.at(0).first.endpoint_id == "job_master/" + a.to_string());
  CHECK(fb.count() == 0);
}

TEST_CASE_FIXTURE(two_nodes,
                  "a remote retrieval resolves the leader once its endpoint is registered") {
  standalone_ha_services ha(tm, ha_config());
  CHECK(ha.remote());
  graph::job_id job{11, 22};
  auto endpoint_id = "job_master/" + job.to_string();
  recording_listener follower;
  auto retrieval = ha.job_master_retrieval(job);
  retrieval->start(follower);
  // The JobMaster does not exist yet: attempts fail and are retried; nothing is notified.
  CHECK(follower.count() == 0);

  auto job_master = jm.spawn(idle_actor);
  directory.put(endpoint_id, job_master);
  REQUIRE(follower.await(1));
  auto [address, token] = follower.at(0);
  CHECK(token == standalone_leader_id());
  CHECK(address.endpoint_id == endpoint_id);
  CHECK(address.host == "127.0.0.1");
  CHECK(address.port == port);
  CHECK(same_actor(address.handle, job_master));

  // The handle works from the TaskManager's system.
  caf::scoped_actor self{tm, true};
  int answer = 0;
  self->request(address.handle, 5s, 41).receive([&](int x) { answer = x; }, [](caf::error&) {});
  CHECK(answer == 41);

  // The JobMaster ends: the follower hears "no leader".
  directory.remove(endpoint_id);
  caf::anon_send_exit(job_master, caf::exit_reason::user_shutdown);
  REQUIRE(follower.await(2));
  CHECK(follower.at(1).first.empty());
  CHECK(follower.at(1).second.is_nil());

  // A new JobMaster under the same id is resolved again.
  auto second = jm.spawn(idle_actor);
  directory.put(endpoint_id, second);
  REQUIRE(follower.await(3));
  CHECK(same_actor(follower.at(2).first.handle, second));

  auto before = std::chrono::steady_clock::now();
  retrieval->stop();
  CHECK(std::chrono::steady_clock::now() - before < 3s);
  auto seen = follower.count();
  caf::anon_send_exit(second, caf::exit_reason::user_shutdown);
  CHECK(follower.count() == seen);
}

TEST_CASE("a remote retrieval with no JobManager listening retries until stopped") {
  caf::actor_system_config cfg;
  caf::actor_system tm{rpc::configure_node(cfg, {})};
  // A port nobody listens on: publish and close a locator to learn a free one.
  std::uint16_t port = 0;
  {
    auto locator = rpc::spawn_endpoint_locator(tm);
    auto p = rpc::publish_locator(tm, locator, 0, "127.0.0.1");
    REQUIRE(p.has_value());
    port = *p;
    tm.middleman().unpublish(locator, port);
    caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
  }
  standalone_ha_config config;
  config.jobmanager_host = "127.0.0.1";
  config.jobmanager_port = port;
  config.retry_interval = 20ms;
  standalone_ha_services ha(tm, config);
  recording_listener follower;
  auto retrieval = ha.resource_manager_retrieval();
  retrieval->start(follower);
  CHECK_FALSE(follower.await(1, 200ms));
  auto before = std::chrono::steady_clock::now();
  retrieval->stop();
  CHECK(std::chrono::steady_clock::now() - before < 3s);
  CHECK(follower.count() == 0);
}
