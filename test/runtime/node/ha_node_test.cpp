// ZooKeeper HA with JobManager and TaskManager nodes in one process (each its own actor system,
// over loopback as processes are) and a real ZooKeeper server (test/support/zookeeper_server):
// leadership handover with fencing, a TaskManager following the new leader, the job graph and job
// result stores across JobManager restarts, and bad input. Real sockets: the tests wait on
// conditions with deadlines, never on fixed sleeps.

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>

#include <caf/all.hpp>
#include <unistd.h>

#include "api/api.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"
#include "apps/examples/wordcount/words.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/leader/zookeeper_leader_services.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/ha/ha_stores.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/ha/zookeeper_paths.hpp"
#include "runtime/node/job_manager_node.hpp"
#include "runtime/node/task_manager_node.hpp"
#include "runtime/streaming/streaming_environment.hpp"
#include "test/runtime/node/ha_test_task_manager.hpp"
#include "test/runtime/node/node_test_util.hpp"
#include "test/support/word_counts.hpp"
#include "test/support/zookeeper_server.hpp"

using namespace flint;
using namespace std::chrono_literals;

namespace {

using test::eventually;
using test::graphs_of;
using test::program;

/// A fresh, created directory, removed on destruction.
struct temp_dir : test::temp_path {
  explicit temp_dir(const std::string& name) : test::temp_path("ha_" + name) {
    std::filesystem::create_directories(path);
  }
};

program wordcount(const std::filesystem::path& input, const std::filesystem::path& output) {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  examples::build_wordcount(env, {input.string(), output.string()});
  return graphs_of(env);
}

/// A cluster's HA settings on `zk`, with a short session so a lost leader is noticed soon.
node::high_availability_settings ha_settings(const test::zookeeper_server& zk,
                                             const std::filesystem::path& storage,
                                             const std::string& cluster_id) {
  node::high_availability_settings h;
  h.zookeeper = true;
  h.quorum = zk.connect_string();
  h.cluster_id = cluster_id;
  h.storage_dir = storage;
  h.session_timeout = 2000ms;
  h.connection_timeout = 5000ms;
  h.retry_wait = 100ms;
  h.max_retry_attempts = 2;
  return h;
}

std::unique_ptr<node::job_manager_node> start_jm(const node::high_availability_settings& h,
                                                 const std::filesystem::path& blobs) {
  node::job_manager_settings js;
  js.rpc_address = "127.0.0.1";
  js.bind_host = "127.0.0.1";
  js.rpc_port = 0;
  js.heartbeat.interval = 500ms;
  js.heartbeat.timeout = 10s;
  js.blob_storage_directory = blobs;
  js.high_availability = h;
  auto jm = std::make_unique<node::job_manager_node>(js);
  auto started = jm->start();
  REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
  return jm;
}

std::unique_ptr<node::task_manager_node> start_tm(const node::high_availability_settings& h,
                                                  const std::string& id) {
  return test::start_ha_task_manager(h, id, 2);
}

rpc::client_identity who(node::job_manager_node& jm, std::chrono::nanoseconds timeout = 10s) {
  return rpc::client_identity{"ha_node_test", &jm.recorder(), timeout};
}

bool leads(node::job_manager_node& jm) {
  return !jm.leader_id("dispatcher").is_nil() && !jm.leader_id("resource_manager").is_nil();
}

std::int32_t registered_task_managers(node::job_manager_node& jm) {
  caf::scoped_actor self{jm.system(), true};
  auto o = jm.resource_manager_gateway().ask_blocking<resource_manager::request_resource_overview>(
    *self, who(jm), rpc::ack{});
  return o ? o->number_task_managers : -1;
}

expected<unit> submit(node::job_manager_node& jm, const graph::job_graph& job) {
  caf::scoped_actor self{jm.system(), true};
  auto r = jm.dispatcher_gateway().ask_blocking<dispatcher::submit_job>(
    *self, who(jm), dispatcher::submit_job_request{job});
  if (!r)
    return r.error();
  return unit{};
}

expected<dispatcher::job_result> result(node::job_manager_node& jm, const graph::job_id& id,
                                        std::chrono::nanoseconds timeout = 60s) {
  caf::scoped_actor self{jm.system(), true};
  return jm.dispatcher_gateway().ask_blocking<dispatcher::request_job_result>(
    *self, who(jm, timeout), dispatcher::job_id_request{id});
}

std::shared_ptr<ha::zookeeper_client> connect(const test::zookeeper_server& zk) {
  auto client = std::make_shared<ha::zookeeper_client>(make_endpoint_logger("test_zookeeper"));
  auto ok = client->connect(zk.connect_string(), 4000ms);
  REQUIRE_MESSAGE(ok.has_value(), ok.error().to_string());
  return client;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

/// A checkpointed exactly-once WordCount (committed part files) at parallelism 2 whose lines
/// are paced (about 100 µs each), so that the job lasts seconds however fast the machine is: a
/// test that must cut something off mid-run does not race the job's end.
program paced_checkpointed_wordcount(const std::filesystem::path& input,
                                     const std::filesystem::path& output,
                                     const std::filesystem::path& checkpoints) {
  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", "2"},
                       {"execution.checkpointing.interval", "100 ms"},
                       {"state.checkpoints.dir", checkpoints.string()},
                       {"restart-strategy.type", "fixed-delay"},
                       {"restart-strategy.fixed-delay.attempts", "10"},
                       {"restart-strategy.fixed-delay.delay", "100 ms"}});
  env.read_text_file(input.string())
    .map([](const std::string& line) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      return line;
    })
    .uid("pace")
    .flat_map<std::string>(
      [word = std::string()](const std::string& line, api::collector<std::string>& out) mutable {
        examples::for_each_word(line, word, [&](const std::string& w) { out.collect_ref(w); });
      })
    .uid("flatMap-1")
    .map([](const std::string& word) { return std::tuple<std::string, std::int64_t>(word, 1); })
    .uid("map-1")
    .key_by<0>()
    .sum<1>()
    .write_as_text(output.string());
  return graphs_of(env);
}

/// Exactly once: the committed files hold one `(word,n)` line per input word and no line twice,
/// so each word has exactly the updates 1..its count.
void check_exactly_once(const std::string& text, const std::filesystem::path& output) {
  auto expected = test::plain_count(text);
  std::int64_t words = 0;
  std::map<std::string, std::vector<bool>> seen;
  for (const auto& [w, n] : expected) {
    words += n;
    seen[w].resize(static_cast<std::size_t>(n) + 1, false);
  }
  std::int64_t updates = 0, twice = 0, unexpected = 0, malformed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(output)) {
    if (!entry.path().filename().string().starts_with("part-"))
      continue; // in-progress files of a stopped attempt are hidden, not output
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      auto comma = line.rfind(',');
      if (line.size() < 4 || line.front() != '(' || line.back() != ')'
          || comma == std::string::npos) {
        ++malformed;
        continue;
      }
      auto word = line.substr(1, comma - 1);
      auto n = std::stoll(line.substr(comma + 1, line.size() - comma - 2));
      ++updates;
      auto it = seen.find(word);
      if (it == seen.end() || n < 1 || static_cast<std::size_t>(n) >= it->second.size()) {
        ++unexpected;
        continue;
      }
      if (it->second[static_cast<std::size_t>(n)])
        ++twice;
      it->second[static_cast<std::size_t>(n)] = true;
    }
  }
  CHECK(malformed == 0);
  CHECK(unexpected == 0);
  CHECK(twice == 0);
  CHECK(updates == words);
}

bool refused_as_not_leader(node::job_manager_node& jm, const rpc::fencing_token& id) {
  caf::scoped_actor self{jm.system(), true};
  rpc::gateway old(jm.dispatcher(), dispatcher::endpoint_name, id);
  auto r = old.ask_blocking<dispatcher::list_jobs>(*self, who(jm, 2s), rpc::ack{});
  return !r && r.error().code == errc::fencing_token_mismatch;
}

} // namespace

TEST_CASE(
  "a standby JobManager takes over with a new leader id and a TaskManager follows it, and "
  "a call with the old id is refused and traced") {
  test::zookeeper_server zk;
  temp_dir dir("handover");
  auto h = ha_settings(zk, dir.path / "ha", "handover");
  auto jm1 = start_jm(h, dir.path / "blobs1");
  REQUIRE(eventually([&] { return leads(*jm1); }, 20s));
  auto jm2 = start_jm(h, dir.path / "blobs2");
  auto tm = start_tm(h, "tm-ha");
  REQUIRE(eventually([&] { return registered_task_managers(*jm1) == 1; }, 20s));
  // One leader at a time: the standby holds no leader id while the first one runs.
  CHECK_FALSE(leads(*jm2));
  auto old_id = jm1->leader_id("dispatcher");

  jm1->shutdown();
  REQUIRE(eventually([&] { return leads(*jm2); }, 20s));
  auto new_id = jm2->leader_id("dispatcher");
  CHECK(new_id != old_id);
  // The TaskManager's ResourceManager retrieval followed ZooKeeper to the new leader.
  REQUIRE(eventually([&] { return registered_task_managers(*jm2) == 1; }, 20s));

  // A call fenced with the old leader's id, arriving after the handover.
  caf::scoped_actor self{jm2->system(), true};
  rpc::gateway stale(jm2->dispatcher(), dispatcher::endpoint_name, old_id);
  auto refused = stale.ask_blocking<dispatcher::list_jobs>(*self, who(*jm2), rpc::ack{});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::fencing_token_mismatch);
  bool traced = false;
  for (const auto& r : jm2->recorder().snapshot())
    if (r.dir == trace::direction::receive && r.method == "list_jobs"
        && r.result == trace::outcome::rejected && r.token == old_id)
      traced = r.detail.find("Fencing token mismatch") != std::string::npos;
  CHECK(traced);
  tm.reset();
}

TEST_CASE("a finished job is not run again when every JobManager restarts") {
  test::zookeeper_server zk;
  temp_dir dir("finished");
  auto h = ha_settings(zk, dir.path / "ha", "finished");
  const auto text = test::sample_text(64 * 1024);
  write_text(dir.path / "input.txt", text);
  auto p = wordcount(dir.path / "input.txt", dir.path / "output");
  auto jm = start_jm(h, dir.path / "blobs");
  REQUIRE(eventually([&] { return leads(*jm); }, 20s));
  auto tm = start_tm(h, "tm-finished");
  tm->streaming().add_program(p.stream, p.job);
  REQUIRE(eventually([&] { return registered_task_managers(*jm) == 1; }, 20s));
  auto submitted = submit(*jm, *p.job);
  REQUIRE_MESSAGE(submitted.has_value(), submitted.error().to_string());
  auto r = result(*jm, p.job->job_id);
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  CHECK(r->status == graph::job_status::finished);

  auto client = connect(zk);
  auto stores = ha::make_zookeeper_ha_stores(client, {"/flink", "finished", h.storage_dir},
                                             make_endpoint_logger("test_stores"));
  auto entry = stores->job_results().has_job_result_entry(p.job->job_id);
  REQUIRE(entry.has_value());
  CHECK(*entry);
  auto ids = stores->job_graphs().job_ids();
  REQUIRE(ids.has_value());
  CHECK(ids->empty());

  // Every JobManager restarts: the job is not recovered, and submitting it again is refused.
  jm.reset();
  jm = start_jm(h, dir.path / "blobs");
  REQUIRE(eventually([&] { return leads(*jm); }, 20s));
  caf::scoped_actor self{jm->system(), true};
  auto list =
    jm->dispatcher_gateway().ask_blocking<dispatcher::list_jobs>(*self, who(*jm), rpc::ack{});
  REQUIRE_MESSAGE(list.has_value(), list.error().to_string());
  CHECK(list->jobs.empty());
  auto again = submit(*jm, *p.job);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message.find("globally terminal") != std::string::npos);
  tm.reset();
}

TEST_CASE("a corrupt entry in the job graph store fails that job alone and the others recover") {
  test::zookeeper_server zk;
  temp_dir dir("corrupt");
  auto h = ha_settings(zk, dir.path / "ha", "corrupt");
  const auto text = test::sample_text(32 * 1024);
  write_text(dir.path / "input.txt", text);
  auto good = wordcount(dir.path / "input.txt", dir.path / "output-good");
  auto bad = wordcount(dir.path / "input.txt", dir.path / "output-bad");
  {
    // Jobs left behind by an earlier leader: one graph readable, the other's file damaged.
    auto client = connect(zk);
    auto stores = ha::make_zookeeper_ha_stores(client, {"/flink", "corrupt", h.storage_dir},
                                               make_endpoint_logger("test_stores"));
    REQUIRE(stores->job_graphs().put(*good.job).has_value());
    REQUIRE(stores->job_graphs().put(*bad.job).has_value());
    write_text(h.storage_dir / "corrupt" / "job_graphs" / bad.job->job_id.to_string(),
               "not a job graph");
  }
  auto tm = start_tm(h, "tm-corrupt");
  tm->streaming().add_program(good.stream, good.job);
  auto jm = start_jm(h, dir.path / "blobs");
  REQUIRE(eventually([&] { return leads(*jm); }, 20s));
  auto failed = result(*jm, bad.job->job_id, 10s);
  REQUIRE_MESSAGE(failed.has_value(), failed.error().to_string());
  CHECK(failed->status == graph::job_status::failed);
  CHECK(failed->failure_cause.find(bad.job->job_id.to_string()) != std::string::npos);
  auto finished = result(*jm, good.job->job_id);
  REQUIRE_MESSAGE(finished.has_value(), finished.error().to_string());
  CHECK(finished->status == graph::job_status::finished);
  tm.reset();
}

TEST_CASE(
  "a JobManager whose ZooKeeper is unreachable fails to start with a clear error after "
  "the configured attempts") {
  temp_dir dir("unreachable");
  node::high_availability_settings h;
  h.zookeeper = true;
  h.quorum = "127.0.0.1:1"; // nothing listens on port 1
  h.storage_dir = dir.path / "ha";
  h.connection_timeout = 300ms;
  h.retry_wait = 50ms;
  h.max_retry_attempts = 2;
  node::job_manager_settings js;
  js.rpc_address = "127.0.0.1";
  js.bind_host = "127.0.0.1";
  js.rpc_port = 0;
  js.blob_storage_directory = dir.path / "blobs";
  js.high_availability = h;
  node::job_manager_node jm(js);
  auto started = jm.start();
  REQUIRE_FALSE(started.has_value());
  CHECK(started.error().message.find("Could not connect to ZooKeeper quorum 127.0.0.1:1")
        != std::string::npos);
  CHECK(started.error().message.find("after 2 attempt(s)") != std::string::npos);
  CHECK_FALSE(jm.running());
}

TEST_CASE(
  "a short ZooKeeper connection loss (suspended, not lost) costs no leadership and "
  "deletes nothing") {
  test::zookeeper_server zk(3);
  temp_dir dir("suspended");
  auto h = ha_settings(zk, dir.path / "ha", "suspended");
  h.session_timeout = 6000ms;
  h.quorum = zk.connect_string();
  auto jm = start_jm(h, dir.path / "blobs");
  REQUIRE(eventually([&] { return leads(*jm); }, 20s));
  auto id = jm->leader_id("dispatcher");
  // A job graph in the store, as a running job's is.
  const auto text = test::sample_text(16 * 1024);
  write_text(dir.path / "input.txt", text);
  auto p = wordcount(dir.path / "input.txt", dir.path / "output");
  auto client = connect(zk);
  auto stores = ha::make_zookeeper_ha_stores(client, {"/flink", "suspended", h.storage_dir},
                                             make_endpoint_logger("test_stores"));
  REQUIRE(stores->job_graphs().put(*p.job).has_value());
  // Every server goes down for a moment, one at a time: the JobManager's client loses its
  // server and reconnects to another within its session.
  for (std::size_t i = 0; i < zk.size(); ++i) {
    zk.stop(i);
    zk.restart(i);
  }
  REQUIRE(eventually([&] { return leads(*jm); }, 20s));
  CHECK(jm->leader_id("dispatcher") == id);
  CHECK_FALSE(refused_as_not_leader(*jm, id));
  auto ids = stores->job_graphs().job_ids();
  REQUIRE(ids.has_value());
  CHECK(ids->size() == 1);
}

TEST_CASE(
  "quorum loss: the cut-off leader gives up leadership and stops its JobMasters, and the "
  "job resumes from its latest checkpoint with every update committed once") {
  test::zookeeper_server zk(3);
  temp_dir dir("quorum");
  auto h = ha_settings(zk, dir.path / "ha", "quorum");
  // Paced so that the job runs for seconds (about 80,000 lines of 100 µs, two subtasks) on any
  // machine: it must still run when leadership is lost, the session timeout after the cut.
  // (Unpaced, 64 MB ended a second after the cut on a fast machine, before leadership went.)
  const auto text = test::sample_text(4 * 1024 * 1024);
  write_text(dir.path / "input.txt", text);
  auto p = paced_checkpointed_wordcount(dir.path / "input.txt", dir.path / "output",
                                        dir.path / "checkpoints");
  auto jm1 = start_jm(h, dir.path / "blobs1");
  REQUIRE(eventually([&] { return leads(*jm1); }, 20s));
  auto jm2 = start_jm(h, dir.path / "blobs2");
  auto tm1 = start_tm(h, "tm-q1");
  auto tm2 = start_tm(h, "tm-q2");
  tm1->streaming().add_program(p.stream, p.job);
  tm2->streaming().add_program(p.stream, p.job);
  REQUIRE(eventually([&] { return registered_task_managers(*jm1) == 2; }, 20s));
  auto old_id = jm1->leader_id("dispatcher");
  auto submitted = submit(*jm1, *p.job);
  REQUIRE_MESSAGE(submitted.has_value(), submitted.error().to_string());

  {
    auto client = connect(zk);
    auto stores = ha::make_zookeeper_ha_stores(client, {"/flink", "quorum", h.storage_dir},
                                               make_endpoint_logger("test_stores"));
    auto checkpoints = stores->completed_checkpoints(p.job->job_id);
    REQUIRE(eventually(
      [&] {
        auto c = checkpoints->checkpoints();
        return c && !c->empty();
      },
      60s));
  }
  // Two of three servers go: no quorum, no session can be served.
  zk.kill(1);
  zk.kill(2);
  auto cut_at = std::chrono::steady_clock::now();
  REQUIRE(eventually([&] { return refused_as_not_leader(*jm1, old_id); }, 30s));
  auto lost_after = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::steady_clock::now() - cut_at);
  MESSAGE("leadership given up " << lost_after.count() << " ms after the quorum was lost "
                                 << "(session timeout " << h.session_timeout.count() << " ms)");
  zk.restart(1);
  zk.restart(2);
  node::job_manager_node* leader = nullptr;
  REQUIRE(eventually(
    [&] {
      for (auto* jm : {jm1.get(), jm2.get()})
        if (leads(*jm))
          leader = jm;
      return leader != nullptr;
    },
    30s));
  CHECK(leader->leader_id("dispatcher") != old_id);
  auto r = result(*leader, p.job->job_id, std::chrono::seconds(60));
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  REQUIRE_MESSAGE(r->status == graph::job_status::finished, r->failure_cause);
  check_exactly_once(text, dir.path / "output");
  tm1.reset();
  tm2.reset();
}

TEST_CASE("high-availability.zookeeper.client.acl creator without a digest file is a start-up "
          "error naming both keys") {
  config::configuration cfg;
  cfg.set("high-availability.type", "zookeeper");
  cfg.set("high-availability.zookeeper.quorum", "127.0.0.1:2181");
  cfg.set("high-availability.storageDir", "/tmp/flint-ha");
  cfg.set("high-availability.zookeeper.client.acl", "creator");
  auto refused = node::read_high_availability_settings(cfg);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::invalid_argument);
  CHECK(refused.error().message.find("high-availability.zookeeper.client.acl")
        != std::string::npos);
  CHECK(refused.error().message.find("high-availability.zookeeper.client.digest-file")
        != std::string::npos);
  CHECK_FALSE(node::read_job_manager_settings(cfg).has_value());

  cfg.set("high-availability.zookeeper.client.digest-file", "/etc/flint/zk-digest");
  auto read = node::read_high_availability_settings(cfg);
  REQUIRE_MESSAGE(read.has_value(), read.error().to_string());
  CHECK(read->acl == ha::zookeeper_acl::creator);
  CHECK(read->digest_file == "/etc/flint/zk-digest");
  cfg.set("high-availability.zookeeper.client.acl", "world");
  CHECK_FALSE(node::read_high_availability_settings(cfg).has_value());
  // Flink's default stays open, and needs no digest.
  config::configuration plain;
  plain.set("high-availability.type", "zookeeper");
  plain.set("high-availability.zookeeper.quorum", "127.0.0.1:2181");
  CHECK(node::read_high_availability_settings(plain)->acl == ha::zookeeper_acl::open);
}

TEST_CASE("a cluster with the creator ACL elects, registers and runs a job while a client "
          "without its digest cannot change its leader nodes") {
  test::zookeeper_server zk;
  temp_dir dir("creator");
  auto h = ha_settings(zk, dir.path / "ha", "creator");
  h.acl = ha::zookeeper_acl::creator;
  h.digest_file = dir.path / "zk-digest";
  write_text(h.digest_file, "flint:correct-horse\n");
  std::filesystem::permissions(h.digest_file, std::filesystem::perms::owner_read
                                                | std::filesystem::perms::owner_write);
  const auto text = test::sample_text(16 * 1024);
  write_text(dir.path / "input.txt", text);
  auto p = wordcount(dir.path / "input.txt", dir.path / "output");
  auto jm = start_jm(h, dir.path / "blobs");
  REQUIRE(eventually([&] { return leads(*jm); }, 20s));
  auto tm = start_tm(h, "tm-creator");
  tm->streaming().add_program(p.stream, p.job);
  REQUIRE(eventually([&] { return registered_task_managers(*jm) == 1; }, 20s));
  auto submitted = submit(*jm, *p.job);
  REQUIRE_MESSAGE(submitted.has_value(), submitted.error().to_string());
  auto r = result(*jm, p.job->job_id);
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  CHECK(r->status == graph::job_status::finished);

  auto stranger = connect(zk);
  const std::string info = "/flink/creator/leader/dispatcher/connection_info";
  auto hijack = stranger->set(info, "evil\n127.0.0.1\n1\n" + std::string(32, '0'));
  REQUIRE_FALSE(hijack.has_value());
  CHECK(hijack.error().message.find("not authorised") != std::string::npos);
  auto removed = stranger->remove(info);
  REQUIRE_FALSE(removed.has_value());
  CHECK(removed.error().message.find("not authorised") != std::string::npos);
  CHECK(leads(*jm));
  tm.reset();
}

TEST_CASE("a JobManager cut off from ZooKeeper gives up leadership after the session timeout "
          "the server granted, not the one it asked for") {
  // The test servers run with tickTime=500, so they grant at most 20 ticks (10 s): Flink's
  // default of 60 s is asked for and 10 s is what the session gets. A leader that waited the
  // configured 60 s would still act as leader long after the servers expired its session and
  // another JobManager took over.
  test::zookeeper_server zk;
  temp_dir dir("negotiated");
  auto h = ha_settings(zk, dir.path / "ha", "negotiated");
  h.session_timeout = 60s;
  auto jm = start_jm(h, dir.path / "blobs");
  REQUIRE(eventually([&] { return leads(*jm); }, 20s));
  auto id = jm->leader_id("dispatcher");
  zk.stop(0);
  auto cut_at = std::chrono::steady_clock::now();
  REQUIRE(eventually([&] { return refused_as_not_leader(*jm, id); }, 30s));
  auto lost_after = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::steady_clock::now() - cut_at);
  MESSAGE("leadership given up " << lost_after.count() << " ms after ZooKeeper stopped");
  CHECK(lost_after >= 9s);
}
