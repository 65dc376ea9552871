// The HA stores' ZooKeeper versions against a real server: the shared contracts
// (ha_store_contracts.hpp), the layout of nodes and files, corrupt data, racing counters and the
// two kinds of shutdown. One server for the whole suite; every case works under its own cluster
// path. No waits: every operation here is synchronous.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "runtime/common/logging.hpp"
#include "runtime/ha/ha_stores.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/ha/zookeeper_paths.hpp"
#include "test/runtime/ha/ha_store_contracts.hpp"
#include "test/support/zookeeper_server.hpp"

using namespace std::chrono_literals;
using flint::errc;
using flint::graph::job_id;
using flint::graph::job_status;
using namespace flint::ha;
using flint::test::temporary_directory;
using flint::test::zookeeper_server;

namespace {

/// Started by the first case that needs it, stopped (killed by pid) at exit.
zookeeper_server& server() {
  static zookeeper_server zk;
  return zk;
}

std::shared_ptr<zookeeper_client> connected_client() {
  auto client = std::make_shared<zookeeper_client>(flint::make_endpoint_logger("zookeeper"));
  auto r = client->connect(server().connect_string(), 4s);
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  return client;
}

bool exists(zookeeper_client& client, const std::string& path) {
  auto stat = client.exists(path);
  REQUIRE_MESSAGE(stat.has_value(), stat.error().to_string());
  return stat->has_value();
}

std::vector<std::string> sorted_children(zookeeper_client& client, const std::string& path) {
  auto names = client.children(path);
  REQUIRE_MESSAGE(names.has_value(), names.error().to_string());
  std::sort(names->begin(), names->end());
  return *names;
}

void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A client as a Flint process with `high-availability.zookeeper.client.acl: creator` has it.
std::shared_ptr<zookeeper_client> creator_client(const std::string& digest = "flint:s3cret") {
  auto client = std::make_shared<zookeeper_client>(flint::make_endpoint_logger("zookeeper"));
  auto r = client->connect(server().connect_string(), 4s, 10s, {zookeeper_acl::creator, digest});
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  return client;
}

void check_not_authorised(const flint::error& e) {
  CHECK(e.code == errc::rejected);
  CHECK_MESSAGE(e.message.find("not authorised") != std::string::npos, e.message);
}

} // namespace

TEST_CASE("the zookeeper job graph store keeps graphs in files and pointers in znodes") {
  auto client = connected_client();
  temporary_directory tmp;
  zookeeper_job_graph_store store(client, "/graphs-contract/jobgraphs", tmp.path(),
                                  flint::make_endpoint_logger("ha"));
  flint::test::check_job_graph_store(store);

  // Left by the contract: job b.
  job_id b{3, 4};
  auto file = tmp.path() / "job_graphs" / b.to_string();
  CHECK(store.file_of(b) == file);
  CHECK(std::filesystem::exists(file));
  auto node = client->get("/graphs-contract/jobgraphs/" + b.to_string());
  REQUIRE(node.has_value());
  CHECK(node->data == file.string());
  // The removed job's file is gone with its node, and no temporary file is left.
  CHECK(sorted_children(*client, "/graphs-contract/jobgraphs") == std::vector{b.to_string()});
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& f :
       std::filesystem::directory_iterator(tmp.path() / "job_graphs"))
    ++files;
  CHECK(files == 1);

  // Pointers are absolute paths, whatever the storage directory was given as.
  zookeeper_job_graph_store relative(client, "/graphs-contract/jobgraphs", "relative/dir");
  CHECK(relative.file_of(b).is_absolute());
  CHECK(relative.file_of(b)
        == std::filesystem::current_path() / "relative/dir/job_graphs" / b.to_string());

  // A new leader (another client, another store instance) recovers the graph.
  auto other = connected_client();
  zookeeper_job_graph_store recovered(other, "/graphs-contract/jobgraphs", tmp.path());
  CHECK(*recovered.job_ids() == std::vector{b});
  CHECK(*recovered.recover(b) == flint::test::sample_job_graph(b));
}

TEST_CASE("a corrupt or missing job graph file fails recover naming the job and the file") {
  auto client = connected_client();
  temporary_directory tmp;
  zookeeper_job_graph_store store(client, "/graphs-corrupt/jobgraphs", tmp.path(),
                                  flint::make_endpoint_logger("ha"));
  job_id good{1, 1};
  job_id corrupt{2, 2};
  job_id gone{3, 3};
  for (auto id : {good, corrupt, gone})
    REQUIRE(store.put(flint::test::sample_job_graph(id)).has_value());

  write_text(store.file_of(corrupt), "definitely not a capnp message");
  std::filesystem::remove(store.file_of(gone));

  auto bad = store.recover(corrupt);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == errc::malformed_message);
  CHECK(bad.error().message.find(corrupt.to_string()) != std::string::npos);
  CHECK(bad.error().message.find(store.file_of(corrupt).string()) != std::string::npos);

  auto missing = store.recover(gone);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().message.find(gone.to_string()) != std::string::npos);
  CHECK(missing.error().message.find(store.file_of(gone).string()) != std::string::npos);

  // The others still recover, and every job is still listed.
  CHECK(*store.recover(good) == flint::test::sample_job_graph(good));
  CHECK(flint::test::sorted(*store.job_ids()) == std::vector{good, corrupt, gone});

  // A graph file holding another job's graph is refused too.
  std::filesystem::copy_file(store.file_of(good), store.file_of(corrupt),
                             std::filesystem::copy_options::overwrite_existing);
  auto swapped = store.recover(corrupt);
  REQUIRE_FALSE(swapped.has_value());
  CHECK(swapped.error().message.find(good.to_string()) != std::string::npos);

  // A node that is not a job id is skipped by job_ids().
  REQUIRE(client->create("/graphs-corrupt/jobgraphs/not-a-job", "x").has_value());
  CHECK(flint::test::sorted(*store.job_ids()) == std::vector{good, corrupt, gone});

  // Removing a job whose file is already gone is fine.
  REQUIRE(store.remove(gone).has_value());
  CHECK(flint::test::sorted(*store.job_ids()) == std::vector{good, corrupt});
}

TEST_CASE("the zookeeper checkpoint id counter counts in a znode from 1") {
  auto client = connected_client();
  const std::string path = "/counter-contract/jobs/j/checkpoint_id_counter";
  zookeeper_checkpoint_id_counter counter(client, path);
  flint::test::check_checkpoint_id_counter(counter);
  auto node = client->get(path);
  REQUIRE(node.has_value());
  CHECK(node->data == "44");

  // A later leader continues where this one stopped; a suspended shutdown keeps the count.
  REQUIRE(counter.shutdown(false).has_value());
  zookeeper_checkpoint_id_counter next(connected_client(), path);
  CHECK(*next.get_and_increment() == 44);

  // Garbage in the node is an error, not a silent reset.
  REQUIRE(client->set(path, "forty-five").has_value());
  auto garbage = next.get();
  REQUIRE_FALSE(garbage.has_value());
  CHECK(garbage.error().code == errc::malformed_message);
  CHECK(garbage.error().message.find(path) != std::string::npos);
  REQUIRE(next.set_count(45).has_value());
  CHECK(*next.get() == 45);

  // Globally terminal: the node and the (now empty) job node go.
  REQUIRE(next.shutdown(true).has_value());
  CHECK_FALSE(exists(*client, path));
  CHECK_FALSE(exists(*client, "/counter-contract/jobs/j"));
  CHECK(exists(*client, "/counter-contract/jobs"));
  REQUIRE(next.shutdown(true).has_value()); // again: nothing to remove
}

TEST_CASE("two zookeeper counters on one path from two clients never return the same id") {
  const std::string path = "/counter-race/jobs/j/checkpoint_id_counter";
  constexpr int per_thread = 300;
  zookeeper_checkpoint_id_counter a(connected_client(), path);
  zookeeper_checkpoint_id_counter b(connected_client(), path);
  std::vector<std::int64_t> ids_a, ids_b;
  std::vector<std::string> errors_a, errors_b;
  auto run = [](zookeeper_checkpoint_id_counter& c, std::vector<std::int64_t>& ids,
                std::vector<std::string>& errors) {
    for (int i = 0; i < per_thread; ++i) {
      auto id = c.get_and_increment();
      if (id)
        ids.push_back(*id);
      else
        errors.push_back(id.error().to_string());
    }
  };
  std::thread ta(run, std::ref(a), std::ref(ids_a), std::ref(errors_a));
  std::thread tb(run, std::ref(b), std::ref(ids_b), std::ref(errors_b));
  ta.join();
  tb.join();
  CHECK(errors_a.empty());
  CHECK(errors_b.empty());
  // Each counter's own ids increase.
  CHECK(std::is_sorted(ids_a.begin(), ids_a.end()));
  CHECK(std::is_sorted(ids_b.begin(), ids_b.end()));
  std::vector<std::int64_t> all = ids_a;
  all.insert(all.end(), ids_b.begin(), ids_b.end());
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  REQUIRE(all.size() == 2 * per_thread);
  CHECK(all.front() == 1);
  CHECK(all.back() == 2 * per_thread);
  CHECK(*a.get() == 2 * per_thread + 1);
}

TEST_CASE("the zookeeper completed checkpoint store names children by 19-digit ids") {
  auto client = connected_client();
  temporary_directory tmp;
  const std::string path = "/checkpoints-contract/jobs/j/checkpoints";
  zookeeper_completed_checkpoint_store store(client, path, tmp.path(),
                                             flint::make_endpoint_logger("ha"));
  flint::test::check_completed_checkpoint_store(store);
  CHECK(zookeeper_completed_checkpoint_store::checkpoint_id_to_name(42) == "0000000000000000042");
  CHECK(sorted_children(*client, path)
        == std::vector<std::string>{"0000000000000000001", "0000000000000000010",
                                    "0000000000000000100"});
  // The node names a file in the storage directory; the file holds the metadata path.
  CHECK(store.file_of(10) == tmp.path() / "0000000000000000010");
  CHECK(client->get(path + "/0000000000000000010")->data == store.file_of(10).string());
  CHECK(read_text(store.file_of(10)) == "/other/chk-10/_metadata");

  // A new JobMaster (another client) sees the same checkpoints.
  zookeeper_completed_checkpoint_store again(connected_client(), path, tmp.path(),
                                             flint::make_endpoint_logger("ha"));
  CHECK(*again.checkpoints() == *store.checkpoints());
}

TEST_CASE("children with empty or garbage data or names are skipped by checkpoints") {
  auto client = connected_client();
  temporary_directory tmp;
  const std::string path = "/checkpoints-garbage/jobs/j/checkpoints";
  zookeeper_completed_checkpoint_store store(client, path, tmp.path(),
                                             flint::make_endpoint_logger("ha"));
  REQUIRE(store.add({7, "/ckpt/chk-7/_metadata"}).has_value());
  REQUIRE(client->create(path + "/0000000000000000008", "").has_value());
  REQUIRE(client->create(path + "/0000000000000000009", std::string("\0\x01\xff", 3)).has_value());
  REQUIRE(client->create(path + "/not-a-checkpoint", "/x").has_value());
  REQUIRE(client->create(path + "/12", (tmp.path() / "12").string()).has_value());
  REQUIRE(store.add({11, "/ckpt/chk-11/_metadata"}).has_value());
  auto all = store.checkpoints();
  REQUIRE_MESSAGE(all.has_value(), all.error().to_string());
  CHECK(*all
        == std::vector<checkpoint_pointer>{{7, "/ckpt/chk-7/_metadata"},
                                           {11, "/ckpt/chk-11/_metadata"}});
  // A terminal shutdown removes the garbage too.
  REQUIRE(store.shutdown(true).has_value());
  CHECK_FALSE(exists(*client, path));
  CHECK_FALSE(exists(*client, "/checkpoints-garbage/jobs/j"));
}

TEST_CASE("a suspended shutdown keeps checkpoints and counter and a terminal one removes the job") {
  auto client = connected_client();
  temporary_directory tmp;
  const std::string job = "/checkpoints-shutdown/jobs/j";
  zookeeper_completed_checkpoint_store store(client, job + "/checkpoints", tmp.path() / "j",
                                             flint::make_endpoint_logger("ha"));
  zookeeper_checkpoint_id_counter counter(client, job + "/checkpoint_id_counter");
  for (std::int64_t id : std::initializer_list<std::int64_t>{1, 2, 3}) {
    CHECK(*counter.get_and_increment() == id);
    REQUIRE(store.add({id, "/ckpt/chk-" + std::to_string(id) + "/_metadata"}).has_value());
  }
  REQUIRE(store.shutdown(false).has_value());
  REQUIRE(counter.shutdown(false).has_value());
  CHECK(store.checkpoints()->size() == 3);
  CHECK(sorted_children(*client, job)
        == std::vector<std::string>{"checkpoint_id_counter", "checkpoints"});

  // The store goes first: the job's node stays while the counter is there.
  REQUIRE(store.shutdown(true).has_value());
  CHECK_FALSE(exists(*client, job + "/checkpoints"));
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "j"));
  CHECK(exists(*client, job));
  CHECK(store.checkpoints()->empty());
  REQUIRE(counter.shutdown(true).has_value());
  CHECK_FALSE(exists(*client, job));
}

TEST_CASE("the zookeeper factory lays out nodes and files under the cluster") {
  auto client = connected_client();
  temporary_directory tmp;
  auto stores = make_zookeeper_ha_stores(client, {"factory-root//", "c1", tmp.path()},
                                         flint::make_endpoint_logger("ha"));
  job_id job{0xab, 0xcd};
  const std::string cluster = "/factory-root/c1";

  REQUIRE(stores->job_graphs().put(flint::test::sample_job_graph(job)).has_value());
  auto pointer = client->get(cluster + "/jobgraphs/" + job.to_string());
  REQUIRE(pointer.has_value());
  CHECK(pointer->data == (tmp.path() / "c1" / "job_graphs" / job.to_string()).string());
  CHECK(std::filesystem::exists(tmp.path() / "c1" / "job_graphs" / job.to_string()));

  REQUIRE(
    stores->job_results().create_dirty_result({job, job_status::failed, "boom", 3}).has_value());
  CHECK(std::filesystem::exists(tmp.path() / "job-result-store" / "c1"
                                / (job.to_string() + "_DIRTY.json")));
  REQUIRE(stores->job_results().mark_result_as_clean(job).has_value());
  CHECK(
    std::filesystem::exists(tmp.path() / "job-result-store" / "c1" / (job.to_string() + ".json")));

  auto counter = stores->checkpoint_id_counter(job);
  CHECK(*counter->get_and_increment() == 1);
  CHECK(client->get(cluster + "/jobs/" + job.to_string() + "/checkpoint_id_counter")->data == "2");
  auto checkpoints = stores->completed_checkpoints(job);
  REQUIRE(checkpoints->add({1, "/ckpt/chk-1/_metadata"}).has_value());
  auto checkpoint_file =
    tmp.path() / "c1" / "completed_checkpoints" / job.to_string() / "0000000000000000001";
  CHECK(client->get(cluster + "/jobs/" + job.to_string() + "/checkpoints/0000000000000000001")->data
        == checkpoint_file.string());
  CHECK(read_text(checkpoint_file) == "/ckpt/chk-1/_metadata");

  // The same cluster through a second factory (a new leader) sees it all.
  auto next = make_zookeeper_ha_stores(connected_client(), {"/factory-root", "c1", tmp.path()},
                                       flint::make_endpoint_logger("ha"));
  CHECK(*next->job_graphs().recover(job) == flint::test::sample_job_graph(job));
  CHECK(*next->job_results().has_job_result_entry(job));
  CHECK(*next->checkpoint_id_counter(job)->get() == 2);
  CHECK(next->completed_checkpoints(job)->checkpoints()->size() == 1);

  // A globally terminal job: everything of it goes.
  REQUIRE(checkpoints->shutdown(true).has_value());
  REQUIRE(counter->shutdown(true).has_value());
  REQUIRE(stores->job_graphs().remove(job).has_value());
  CHECK(sorted_children(*client, cluster + "/jobs").empty());
  CHECK(sorted_children(*client, cluster + "/jobgraphs").empty());
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "c1" / "job_graphs" / job.to_string()));
  CHECK_FALSE(std::filesystem::exists(checkpoint_file));
}

TEST_CASE("with the creator ACL a client without the digest can neither change nor delete "
          "Flint's nodes, and Flint's own sessions still can") {
  temporary_directory tmp;
  auto stores = make_zookeeper_ha_stores(creator_client(), {"/acl-root", "c1", tmp.path()},
                                         flint::make_endpoint_logger("ha"));
  job_id job{0x77, 0x77};
  REQUIRE(stores->job_graphs().put(flint::test::sample_job_graph(job)).has_value());
  auto counter = stores->checkpoint_id_counter(job);
  REQUIRE(*counter->get_and_increment() == 1);
  auto checkpoints = stores->completed_checkpoints(job);
  REQUIRE(checkpoints->add({1, "/ckpt/chk-1/_metadata"}).has_value());
  const std::string cluster = "/acl-root/c1";
  const std::string graph_node = cluster + "/jobgraphs/" + job.to_string();
  const std::string job_node = cluster + "/jobs/" + job.to_string();
  const std::string checkpoint_node = job_node + "/checkpoints/0000000000000000001";
  const std::string counter_node = job_node + "/checkpoint_id_counter";

  for (auto stranger : {connected_client(), creator_client("mallory:guess")}) {
    for (const auto& node : {std::string("/acl-root"), cluster, graph_node, checkpoint_node,
                             counter_node}) {
      CAPTURE(node);
      auto set = stranger->set(node, "/etc/passwd");
      REQUIRE_FALSE(set.has_value());
      check_not_authorised(set.error());
    }
    for (const auto& node : {graph_node, checkpoint_node, counter_node}) {
      CAPTURE(node);
      auto removed = stranger->remove(node);
      REQUIRE_FALSE(removed.has_value());
      check_not_authorised(removed.error());
    }
    auto planted = stranger->create(cluster + "/jobgraphs/" + job_id{1, 2}.to_string(), "/x");
    REQUIRE_FALSE(planted.has_value());
    check_not_authorised(planted.error());
    // Not even readable: the pointers name files in the storage directory.
    auto read = stranger->get(graph_node);
    REQUIRE_FALSE(read.has_value());
    check_not_authorised(read.error());
  }

  // Another session with the same digest (a new leader) reads, writes and removes as before.
  auto next = make_zookeeper_ha_stores(creator_client(), {"/acl-root", "c1", tmp.path()},
                                       flint::make_endpoint_logger("ha"));
  CHECK(*next->job_graphs().recover(job) == flint::test::sample_job_graph(job));
  CHECK(*next->checkpoint_id_counter(job)->get() == 2);
  auto recovered = next->completed_checkpoints(job)->checkpoints();
  REQUIRE_MESSAGE(recovered.has_value(), recovered.error().to_string());
  CHECK(*recovered == std::vector<checkpoint_pointer>{{1, "/ckpt/chk-1/_metadata"}});
  REQUIRE(next->completed_checkpoints(job)->shutdown(true).has_value());
  REQUIRE(next->checkpoint_id_counter(job)->shutdown(true).has_value());
  REQUIRE(next->job_graphs().remove(job).has_value());
  CHECK(next->job_graphs().job_ids()->empty());
}

TEST_CASE("a job graph pointer outside the storage directory is refused and its file is neither "
          "read nor deleted") {
  auto client = connected_client();
  temporary_directory tmp;
  const auto storage = tmp.path() / "ha";
  zookeeper_job_graph_store store(client, "/graphs-outside/jobgraphs", storage,
                                  flint::make_endpoint_logger("ha"));
  job_id job{0x55, 0x55};
  REQUIRE(store.put(flint::test::sample_job_graph(job)).has_value());
  // Files an attacker with write access to ZooKeeper would like the JobManager to read or
  // delete; each even holds a valid graph of this very job.
  const auto victim = tmp.path() / "victim";
  const auto sibling = tmp.path() / "ha-other" / "victim";
  std::filesystem::create_directories(sibling.parent_path());
  std::filesystem::copy_file(store.file_of(job), victim);
  std::filesystem::copy_file(store.file_of(job), sibling);
  const auto content = read_text(victim);
  const auto node = store.node_of(job);

  for (const auto& pointer : {victim.string(), "file://" + victim.string(),
                              "file://localhost" + victim.string(), "file:" + victim.string(),
                              (storage / ".." / "victim").string(),
                              "file://" + (storage / "job_graphs" / ".." / ".." / "victim").string(),
                              sibling.string(), std::string("victim"), storage.string(),
                              std::string("/etc/passwd")}) {
    CAPTURE(pointer);
    REQUIRE(client->set(node, pointer).has_value());
    auto recovered = store.recover(job);
    REQUIRE_FALSE(recovered.has_value());
    CHECK(recovered.error().code == errc::rejected);
    CHECK(recovered.error().message.find(pointer) != std::string::npos);
    CHECK(recovered.error().message.find(job.to_string()) != std::string::npos);
    CHECK((recovered.error().message.find("outside") != std::string::npos
           || recovered.error().message.find("not a path") != std::string::npos));
  }

  // Inside the storage directory a file: URI is as good as a plain path.
  REQUIRE(client->set(node, "file://" + store.file_of(job).string()).has_value());
  CHECK(*store.recover(job) == flint::test::sample_job_graph(job));

  // Removing the job removes its node and its own file, never the file pointed to.
  REQUIRE(client->set(node, "file://" + (storage / ".." / "victim").string()).has_value());
  REQUIRE(store.remove(job).has_value());
  CHECK_FALSE(exists(*client, node));
  CHECK_FALSE(std::filesystem::exists(store.file_of(job)));
  CHECK(read_text(victim) == content);
  CHECK(read_text(sibling) == content);
}

TEST_CASE("a checkpoint pointer outside the storage directory fails the listing and its file is "
          "neither read nor deleted") {
  auto client = connected_client();
  temporary_directory tmp;
  const auto storage = tmp.path() / "ha" / "j";
  const std::string path = "/checkpoints-outside/jobs/j/checkpoints";
  zookeeper_completed_checkpoint_store store(client, path, storage,
                                             flint::make_endpoint_logger("ha"));
  REQUIRE(store.add({1, "/ckpt/chk-1/_metadata"}).has_value());
  REQUIRE(store.add({2, "/ckpt/chk-2/_metadata"}).has_value());
  // Holds a metadata path, as the store's own files do: read, it would restore from there.
  const auto victim = tmp.path() / "victim";
  write_text(victim, "/attacker/chk-99/_metadata");
  const auto node = path + "/" + zookeeper_completed_checkpoint_store::checkpoint_id_to_name(2);

  for (const auto& pointer : {victim.string(), "file://" + victim.string(),
                              (storage / ".." / ".." / "victim").string()}) {
    CAPTURE(pointer);
    REQUIRE(client->set(node, pointer).has_value());
    auto listed = store.checkpoints();
    // Not skipped: that would silently restore the older checkpoint 1.
    REQUIRE_FALSE(listed.has_value());
    CHECK(listed.error().code == errc::rejected);
    CHECK(listed.error().message.find(pointer) != std::string::npos);
  }

  REQUIRE(store.remove(2).has_value());
  CHECK_FALSE(exists(*client, node));
  CHECK_FALSE(std::filesystem::exists(store.file_of(2)));
  CHECK(read_text(victim) == "/attacker/chk-99/_metadata");
  CHECK(*store.checkpoints() == std::vector<checkpoint_pointer>{{1, "/ckpt/chk-1/_metadata"}});

  REQUIRE(client->set(path + "/0000000000000000001", victim.string()).has_value());
  REQUIRE(store.shutdown(true).has_value());
  CHECK_FALSE(exists(*client, path));
  CHECK(read_text(victim) == "/attacker/chk-99/_metadata");
}
