// The HA stores' in-memory (standalone) versions and the file-system job result store: the
// shared contracts (ha_store_contracts.hpp) plus what only files do (survive a new instance,
// corrupt files named). No ZooKeeper here: zookeeper_ha_stores_test.cpp has those.
#include <doctest/doctest.h>

#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "runtime/ha/durable_file.hpp"
#include "runtime/ha/ha_stores.hpp"
#include "runtime/ha/zookeeper_paths.hpp"
#include "test/runtime/ha/ha_store_contracts.hpp"

using flint::errc;
using flint::graph::job_id;
using flint::graph::job_status;
using namespace flint::ha;
using flint::test::temporary_directory;

namespace {

void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

} // namespace

TEST_CASE("cluster paths normalise the root like Flink's ZooKeeperUtils") {
  CHECK(cluster_path("/flink", "c1") == "/flink/c1");
  CHECK(cluster_path("/flink/", "c1") == "/flink/c1");
  CHECK(cluster_path("flink", "c1") == "/flink/c1");
  CHECK(cluster_path("flink//", "c1") == "/flink/c1");
  CHECK(cluster_path("/a/b", "c1") == "/a/b/c1");
  CHECK(cluster_path("", "c1") == "/c1");
  CHECK(cluster_path("/", "c1") == "/c1");
  CHECK(job_graphs_path("/flink/c1") == "/flink/c1/jobgraphs");
  CHECK(job_path("/flink/c1", job_id{0, 1}) == "/flink/c1/jobs/00000000000000000000000000000001");
  CHECK(parent_path("/a/b/c") == "/a/b");
}

TEST_CASE("the standalone job graph store puts recovers replaces and removes") {
  standalone_job_graph_store store;
  flint::test::check_job_graph_store(store);
}

TEST_CASE("the standalone job result store goes from dirty to clean") {
  standalone_job_result_store store;
  flint::test::check_job_result_store(store);
}

TEST_CASE("the standalone checkpoint id counter starts at 1 and never repeats across threads") {
  standalone_checkpoint_id_counter counter;
  flint::test::check_checkpoint_id_counter(counter);

  standalone_checkpoint_id_counter shared;
  std::vector<std::int64_t> a, b;
  std::thread ta([&] {
    for (int i = 0; i < 1000; ++i)
      a.push_back(*shared.get_and_increment());
  });
  std::thread tb([&] {
    for (int i = 0; i < 1000; ++i)
      b.push_back(*shared.get_and_increment());
  });
  ta.join();
  tb.join();
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  CHECK(std::adjacent_find(a.begin(), a.end()) == a.end());
  CHECK(a.front() == 1);
  CHECK(a.back() == 2000);
  CHECK(shared.shutdown(true).has_value());
}

TEST_CASE(
  "the standalone completed checkpoint store keeps ascending ids until a terminal shutdown") {
  standalone_completed_checkpoint_store store;
  flint::test::check_completed_checkpoint_store(store);
  REQUIRE(store.shutdown(false).has_value());
  CHECK(store.checkpoints()->size() == 3);
  REQUIRE(store.shutdown(true).has_value());
  CHECK(store.checkpoints()->empty());
}

TEST_CASE("the standalone factory shares the job stores and makes fresh per-job stores") {
  auto stores = make_standalone_ha_stores();
  job_id job{7, 7};
  REQUIRE(stores->job_graphs().put(flint::test::sample_job_graph(job)).has_value());
  CHECK(*stores->job_graphs().job_ids() == std::vector{job});
  REQUIRE(
    stores->job_results().create_dirty_result({job, job_status::finished, "", 1}).has_value());
  CHECK(*stores->job_results().has_job_result_entry(job));
  auto counter = stores->checkpoint_id_counter(job);
  CHECK(*counter->get_and_increment() == 1);
  auto checkpoints = stores->completed_checkpoints(job);
  CHECK(checkpoints->checkpoints()->empty());
}

TEST_CASE("the file system job result store goes from dirty to clean in Flink's file layout") {
  temporary_directory tmp;
  auto dir = tmp.path() / "job-result-store" / "cluster";
  file_system_job_result_store store(dir);
  flint::test::check_job_result_store(store);

  job_id a{10, 1};
  job_id b{10, 2};
  CHECK(std::filesystem::exists(dir / (a.to_string() + ".json")));
  CHECK_FALSE(std::filesystem::exists(dir / (a.to_string() + "_DIRTY.json")));
  CHECK(std::filesystem::exists(dir / (b.to_string() + "_DIRTY.json")));
  // No temporary file is left behind.
  std::size_t files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    ++files;
    CHECK(f.path().extension() == ".json");
  }
  CHECK(files == 3);

  // Flink's field names.
  auto text = read_whole_file(dir / (b.to_string() + "_DIRTY.json"));
  REQUIRE(text.has_value());
  auto json = nlohmann::json::parse(*text);
  CHECK(json["version"] == 1);
  CHECK(json["result"]["id"] == b.to_string());
  CHECK(json["result"]["application-status"] == "FAILED");
  CHECK(json["result"]["job-status"] == "FAILED");
  CHECK(json["result"]["net-runtime"] == 5);
  CHECK(json["result"]["failure-cause"] == "java.lang.RuntimeException: boom\n\tat x");
}

TEST_CASE("the file system job result store survives a new instance on the same directory") {
  temporary_directory tmp;
  job_id a{20, 1};
  job_id b{20, 2};
  {
    file_system_job_result_store store(tmp.path());
    REQUIRE(store.create_dirty_result({a, job_status::finished, "", 10}).has_value());
    REQUIRE(store.create_dirty_result({b, job_status::canceled, "", 20}).has_value());
    REQUIRE(store.mark_result_as_clean(a).has_value());
  }
  file_system_job_result_store again(tmp.path());
  CHECK(*again.has_job_result_entry(a));
  CHECK(*again.has_job_result_entry(b));
  CHECK_FALSE(*again.has_job_result_entry(job_id{20, 3}));
  auto dirty = again.dirty_results();
  REQUIRE(dirty.has_value());
  CHECK(*dirty == std::vector<job_result_entry>{{b, job_status::canceled, "", 20}});
  REQUIRE(again.mark_result_as_clean(b).has_value());
  CHECK(file_system_job_result_store(tmp.path()).dirty_results()->empty());
}

TEST_CASE("a missing result directory means no results") {
  temporary_directory tmp;
  file_system_job_result_store store(tmp.path() / "not-yet");
  CHECK(store.dirty_results()->empty());
  CHECK_FALSE(*store.has_job_result_entry(job_id{1, 1}));
}

TEST_CASE("a corrupt job result file gives an error naming the file") {
  temporary_directory tmp;
  file_system_job_result_store store(tmp.path());
  job_id a{30, 1};
  job_id b{30, 2};
  REQUIRE(store.create_dirty_result({a, job_status::finished, "", 1}).has_value());

  auto bad = tmp.path() / (b.to_string() + "_DIRTY.json");
  for (std::string text :
       {std::string("{\"result\": {\"id\": "), std::string("[1, 2]"),
        std::string("{\"version\": 1}"),
        std::string("{\"version\": 1, \"result\": {\"id\": \"zz\", "
                    "\"application-status\": \"FAILED\"}}"),
        std::string("{\"version\": 1, \"result\": {\"id\": \"") + b.to_string()
          + "\", \"application-status\": \"WEIRD\"}}",
        // A valid entry, but of another job than its file name says.
        file_system_job_result_store::to_json({a, job_status::failed, "x", 2})}) {
    CAPTURE(text);
    write_text(bad, text);
    auto dirty = store.dirty_results();
    REQUIRE_FALSE(dirty.has_value());
    CHECK(dirty.error().code == errc::malformed_message);
    CHECK(dirty.error().message.find(bad.string()) != std::string::npos);
  }
  // Flink's own files carry only the application status: still read.
  write_text(bad, "{\"version\": 1, \"result\": {\"id\": \"" + b.to_string()
                    + "\", \"application-status\": \"SUCCEEDED\", \"accumulator-results\": {}, "
                      "\"net-runtime\": 77}}");
  auto dirty = store.dirty_results();
  REQUIRE_MESSAGE(dirty.has_value(), dirty.error().to_string());
  CHECK(dirty->size() == 2);
}

TEST_CASE("the job result entry JSON round-trips") {
  for (const auto& e :
       {job_result_entry{job_id{1, 2}, job_status::finished, "", 0},
        job_result_entry{job_id{~0ULL, 0}, job_status::failed, "why\n\"quoted\"", -1},
        job_result_entry{job_id{5, 5}, job_status::canceled, "", 1LL << 40}}) {
    auto back = file_system_job_result_store::from_json(file_system_job_result_store::to_json(e));
    REQUIRE_MESSAGE(back.has_value(), back.error().to_string());
    CHECK(*back == e);
  }
}
