// Leader election and retrieval; the granted session id fences the leader's endpoint.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <caf/all.hpp>

#include "runtime/actors/leader/embedded_leader_service.hpp"
#include "runtime/actors/leader/resolving_leader_retrieval.hpp"
#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::rpc;
using namespace flint::leader;
using flint::test::fake_endpoint;
using flint::test::test_fixture;

namespace {

/// An endpoint that leads: on grant it takes the session id as its token (in its main thread)
/// and confirms, as Flink's fenced endpoints do.
struct leading_endpoint : leader_contender {
  caf::actor handle;
  fake_endpoint* self = nullptr;
  leader_election_service* election = nullptr;
  int grants = 0;
  int revokes = 0;

  void grant_leadership(const fencing_token& id) override {
    ++grants;
    self->run_async([this, id] {
      self->set_token(id);
      election->confirm_leadership(id, leader_address{self->endpoint_id(), handle, {}, 0});
    });
  }
  void revoke_leadership() override {
    ++revokes;
    self->run_async([this] { self->set_token({}); });
  }
  std::string description() const override { return "echo leader"; }
};

struct follower : leader_retrieval_listener {
  leader_address address;
  fencing_token id;
  int notifications = 0;
  void notify_leader_address(const leader_address& a, const fencing_token& t) override {
    address = a;
    id = t;
    ++notifications;
  }
};

} // namespace

TEST_CASE_FIXTURE(test_fixture,
                  "after a new leader session id, calls carrying the old token fail") {
  embedded_leader_service service(7);
  auto executed = std::make_shared<int>(0);
  auto server = spawn<fake_endpoint>(context("dispatcher"), [executed](fake_endpoint& ep) {
    ep.on<echo_method>(fencing::fenced, [executed](echo_request r) -> expected<echo_response> {
      ++*executed;
      return echo_response{r.text, {}, "dispatcher"};
    });
  });
  auto client = spawn<fake_endpoint>(context("client"));
  run();

  leading_endpoint contender;
  contender.handle = server;
  contender.self = &deref<fake_endpoint>(server);
  auto election = service.create_election_service();
  contender.election = election.get();
  follower f;
  auto retrieval = service.create_retrieval_service();
  retrieval->start(f);
  CHECK(f.notifications == 0); // no leader yet

  election->start(contender);
  CHECK(contender.grants == 1);
  run(); // the grant runs in the endpoint's main thread and confirms
  REQUIRE(f.notifications == 1);
  CHECK(f.address.handle == server);
  CHECK_FALSE(f.id.is_nil());
  CHECK(contender.self->token() == f.id);
  CHECK(election->has_leadership(f.id));

  auto ask = [&](const gateway& gw) {
    std::optional<expected<echo_response>> result;
    in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
      gw.ask<echo_method>(self, echo_request{"hi", {}},
                          [&](expected<echo_response> r) { result.emplace(std::move(r)); });
    });
    run();
    REQUIRE(result.has_value());
    return *result;
  };

  auto old_gateway = gateway(f.address.handle, f.address.endpoint_id, f.id);
  auto old_id = f.id;
  CHECK(ask(old_gateway).has_value());

  service.revoke_and_regrant();
  run();
  CHECK(contender.revokes == 1);
  CHECK(contender.grants == 2);
  REQUIRE(f.notifications == 3); // vacant, then the new leader
  CHECK(f.id != old_id);
  CHECK_FALSE(election->has_leadership(old_id));

  auto stale = ask(old_gateway);
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().code == errc::fencing_token_mismatch);
  CHECK(stale.error().message.find(old_id.to_string()) != std::string::npos);
  CHECK(ask(gateway(f.address.handle, f.address.endpoint_id, f.id)).has_value());
  CHECK(*executed == 2);
  election->stop();
  retrieval->stop();
}

TEST_CASE("a second contender leads only when the first steps down") {
  embedded_leader_service service(1);
  struct recording : leader_contender {
    std::vector<fencing_token> grants;
    void grant_leadership(const fencing_token& id) override { grants.push_back(id); }
    void revoke_leadership() override {}
    std::string description() const override { return "c"; }
  } a, b;
  auto ea = service.create_election_service();
  auto eb = service.create_election_service();
  ea->start(a);
  eb->start(b);
  REQUIRE(a.grants.size() == 1);
  CHECK(b.grants.empty());
  ea->confirm_leadership(a.grants[0], {"a", {}, {}, 0});
  CHECK(service.current_session_id() == a.grants[0]);
  ea->stop();
  REQUIRE(b.grants.size() == 1);
  CHECK(b.grants[0] != a.grants[0]);
  // A confirmation of a session that is no longer granted is ignored.
  ea->confirm_leadership(a.grants[0], {"a", {}, {}, 0});
  CHECK(service.current_session_id().is_nil());
  eb->stop();
}

TEST_CASE(
  "stopping a retrieval waits for a notification under way: a stopped listener is never called") {
  embedded_leader_service service(1);
  struct recording : leader_contender {
    std::vector<fencing_token> grants;
    void grant_leadership(const fencing_token& id) override { grants.push_back(id); }
    void revoke_leadership() override {}
    std::string description() const override { return "c"; }
  } contender;
  // Its first notification blocks until released, as a slow listener on another thread would.
  struct slow_listener : leader_retrieval_listener {
    std::promise<void> entered;
    std::shared_future<void> release;
    std::atomic<bool> in_callback{false};
    void notify_leader_address(const leader_address&, const fencing_token&) override {
      in_callback = true;
      entered.set_value();
      release.wait();
      in_callback = false;
    }
  } listener;
  std::promise<void> release;
  listener.release = release.get_future().share();
  auto election = service.create_election_service();
  election->start(contender);
  REQUIRE(contender.grants.size() == 1);
  auto retrieval = service.create_retrieval_service();
  retrieval->start(listener);
  std::thread notifier([&] {
    election->confirm_leadership(contender.grants[0], {"leader", {}, {}, 0});
  });
  listener.entered.get_future().wait();
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    retrieval->stop();
    // The callback under way must have returned before stop() does.
    CHECK_FALSE(listener.in_callback.load());
    stopped = true;
  });
  // stop() cannot return while the callback runs (a stopped listener is about to be destroyed).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(stopped.load());
  release.set_value();
  stopper.join();
  notifier.join();
  CHECK(stopped.load());
  election->stop();
}

TEST_CASE("standalone services use the fixed leader id and address") {
  standalone_leader_election_service election;
  struct recording : leader_contender {
    fencing_token granted;
    bool revoked = false;
    void grant_leadership(const fencing_token& id) override { granted = id; }
    void revoke_leadership() override { revoked = true; }
    std::string description() const override { return "rm"; }
  } c;
  election.start(c);
  CHECK(c.granted == standalone_leader_id());
  CHECK(election.has_leadership(standalone_leader_id()));
  election.stop();
  CHECK(c.revoked);
  standalone_leader_retrieval_service retrieval({"resource_manager", {}, "10.0.0.1", 6123});
  follower f;
  retrieval.start(f);
  CHECK(f.id == standalone_leader_id());
  CHECK(f.address.host == "10.0.0.1");
  CHECK(f.address.port == 6123);
}

// -- resolving retrieval --------------------------------------------------------------------------

namespace {

/// A retrieval source the test drives by hand.
struct manual_source : leader_retrieval_service {
  leader_retrieval_listener* listener = nullptr;
  void start(leader_retrieval_listener& l) override { listener = &l; }
  void stop() override {}
};

/// Records each notification (the endpoint id, empty for "no leader"), from the resolving thread.
struct recording_follower : leader_retrieval_listener {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::string> seen;
  void notify_leader_address(const leader_address& a, const fencing_token&) override {
    {
      std::lock_guard<std::mutex> guard(mtx);
      seen.push_back(a.endpoint_id);
    }
    cv.notify_all();
  }
  /// Whether `n` notifications came within `bound`.
  bool await(std::size_t n, std::chrono::milliseconds bound) {
    std::unique_lock<std::mutex> lock(mtx);
    return cv.wait_for(lock, bound, [&] { return seen.size() >= n; });
  }
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> guard(mtx);
    return seen;
  }
};

} // namespace

TEST_CASE_FIXTURE(test_fixture,
                  "the death of a replaced leader's endpoint is not taken for the current "
                  "leader's (a deposed JobMaster stopping cannot close the new one's connections)") {
  using namespace std::chrono_literals;
  endpoint_directory directory;
  auto old_leader = spawn<fake_endpoint>(context("job_master/old"));
  auto new_leader = spawn<fake_endpoint>(context("job_master/new"));
  run();
  directory.put("job_master/old", old_leader);
  directory.put("job_master/new", new_leader);
  auto source = std::make_unique<manual_source>();
  auto* src = source.get();
  resolving_retrieval_config cfg;
  cfg.retry_interval = 10ms;
  cfg.local_host = "127.0.0.1";
  cfg.local_port = 6123;
  cfg.directory = &directory;
  resolving_leader_retrieval retrieval(sys, std::move(source), cfg);
  recording_follower follower;
  retrieval.start(follower);
  REQUIRE(src->listener != nullptr);
  src->listener->notify_leader_address({"job_master/old", {}, "127.0.0.1", 6123},
                                       fencing_token{1, 1});
  REQUIRE(follower.await(1, 10s));
  src->listener->notify_leader_address({"job_master/new", {}, "127.0.0.1", 6123},
                                       fencing_token{2, 2});
  REQUIRE(follower.await(2, 10s));
  // The deposed leader's endpoint stops long after it was replaced; its death callbacks run here.
  directory.remove("job_master/old");
  caf::anon_send_exit(old_leader, caf::exit_reason::user_shutdown);
  run();
  // Only silence can be awaited: a wrong "no leader" follows the callback within microseconds.
  CHECK_FALSE(follower.await(3, 500ms));
  CHECK(follower.snapshot() == std::vector<std::string>{"job_master/old", "job_master/new"});
  // The current leader's own end is reported.
  directory.remove("job_master/new");
  caf::anon_send_exit(new_leader, caf::exit_reason::user_shutdown);
  run();
  REQUIRE(follower.await(3, 10s));
  CHECK(follower.snapshot()[2].empty());
  retrieval.stop();
}
