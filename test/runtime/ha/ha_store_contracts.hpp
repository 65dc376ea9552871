#pragma once
// What every version of each HA store must do, written once and run against the standalone and
// the ZooKeeper/file versions (ha_stores_test.cpp, zookeeper_ha_stores_test.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "runtime/graph/job_graph.hpp"
#include "runtime/ha/checkpoint_id_counter.hpp"
#include "runtime/ha/completed_checkpoint_store.hpp"
#include "runtime/ha/job_graph_store.hpp"
#include "runtime/ha/job_result_store.hpp"

namespace flint::test {

/// A fresh directory under the system's temporary directory, removed with everything in it.
class temporary_directory {
public:
  temporary_directory() {
    auto pattern = (std::filesystem::temp_directory_path() / "flint-ha-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~temporary_directory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

/// A small job graph whose content depends on `version`, so a replaced graph is told apart.
inline graph::job_graph sample_job_graph(graph::job_id id, int version = 0) {
  graph::job_graph g;
  g.job_id = id;
  g.name = "job-" + id.to_string().substr(28) + "-v" + std::to_string(version);
  g.execution_config.job_configuration["restart-strategy.type"] = "fixed-delay";
  g.execution_config.job_configuration["version"] = std::to_string(version);
  g.checkpointing.interval = 1000 + version;
  return g;
}

inline std::vector<graph::job_id> sorted(std::vector<graph::job_id> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

/// put/recover/replace/remove/job_ids.
inline void check_job_graph_store(ha::job_graph_store& store) {
  graph::job_id a{1, 2};
  graph::job_id b{3, 4};
  auto empty = store.job_ids();
  REQUIRE_MESSAGE(empty.has_value(), empty.error().to_string());
  CHECK(empty->empty());

  auto missing = store.recover(a);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().message.find(a.to_string()) != std::string::npos);

  REQUIRE(store.put(sample_job_graph(a)).has_value());
  REQUIRE(store.put(sample_job_graph(b)).has_value());
  CHECK(sorted(*store.job_ids()) == std::vector{a, b});
  auto recovered = store.recover(a);
  REQUIRE_MESSAGE(recovered.has_value(), recovered.error().to_string());
  CHECK(*recovered == sample_job_graph(a));

  // Replace.
  REQUIRE(store.put(sample_job_graph(a, 1)).has_value());
  CHECK(*store.recover(a) == sample_job_graph(a, 1));
  CHECK(*store.recover(b) == sample_job_graph(b));
  CHECK(store.job_ids()->size() == 2);

  // Remove, twice (missing is fine).
  REQUIRE(store.remove(a).has_value());
  REQUIRE(store.remove(a).has_value());
  CHECK(*store.job_ids() == std::vector{b});
  CHECK(store.recover(a).error().code == errc::not_found);
  CHECK(*store.recover(b) == sample_job_graph(b));
}

/// dirty -> clean, has_job_result_entry, dirty_results, refusals.
inline void check_job_result_store(ha::job_result_store& store) {
  graph::job_id a{10, 1};
  graph::job_id b{10, 2};
  graph::job_id c{10, 3};
  CHECK_FALSE(*store.has_job_result_entry(a));
  CHECK(store.dirty_results()->empty());

  ha::job_result_entry ea{a, graph::job_status::finished, "", 1234};
  ha::job_result_entry eb{b, graph::job_status::failed, "java.lang.RuntimeException: boom\n\tat x",
                          5};
  ha::job_result_entry ec{c, graph::job_status::canceled, "", 0};
  REQUIRE(store.create_dirty_result(ea).has_value());
  REQUIRE(store.create_dirty_result(eb).has_value());
  REQUIRE(store.create_dirty_result(ec).has_value());
  CHECK(*store.has_job_result_entry(a));

  auto again = store.create_dirty_result(ea);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == errc::illegal_state);
  CHECK(again.error().message.find(a.to_string()) != std::string::npos);

  auto running =
    store.create_dirty_result({graph::job_id{10, 9}, graph::job_status::running, "", 0});
  REQUIRE_FALSE(running.has_value());
  CHECK(running.error().code == errc::invalid_argument);

  auto dirty = store.dirty_results();
  REQUIRE_MESSAGE(dirty.has_value(), dirty.error().to_string());
  std::sort(dirty->begin(), dirty->end(), [](auto& x, auto& y) { return x.job < y.job; });
  CHECK(*dirty == std::vector{ea, eb, ec});

  REQUIRE(store.mark_result_as_clean(a).has_value());
  REQUIRE(store.mark_result_as_clean(a).has_value()); // already clean is fine
  CHECK(*store.has_job_result_entry(a));
  dirty = store.dirty_results();
  std::sort(dirty->begin(), dirty->end(), [](auto& x, auto& y) { return x.job < y.job; });
  CHECK(*dirty == std::vector{eb, ec});
  // Clean entries still count: a clean job is never created again.
  CHECK(store.create_dirty_result(ea).error().code == errc::illegal_state);

  auto unknown = store.mark_result_as_clean(graph::job_id{10, 42});
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == errc::not_found);
}

/// Starts at 1, increments, get, set_count.
inline void check_checkpoint_id_counter(ha::checkpoint_id_counter& counter) {
  CHECK(*counter.get() == 1);
  CHECK(*counter.get_and_increment() == 1);
  CHECK(*counter.get_and_increment() == 2);
  CHECK(*counter.get() == 3);
  CHECK(*counter.get() == 3);
  REQUIRE(counter.set_count(42).has_value());
  CHECK(*counter.get() == 42);
  CHECK(*counter.get_and_increment() == 42);
  CHECK(*counter.get_and_increment() == 43);
  CHECK(counter.set_count(0).error().code == errc::invalid_argument);
  CHECK(*counter.get() == 44);
}

/// Ascending order over ids of different digit counts, replace, remove, refusals.
inline void check_completed_checkpoint_store(ha::completed_checkpoint_store& store) {
  CHECK(store.checkpoints()->empty());
  for (std::int64_t id : std::initializer_list<std::int64_t>{100, 9, 10, 1, 1'000'000'000'000})
    REQUIRE(store.add({id, "/ckpt/chk-" + std::to_string(id) + "/_metadata"}).has_value());
  auto all = store.checkpoints();
  REQUIRE_MESSAGE(all.has_value(), all.error().to_string());
  std::vector<std::int64_t> ids;
  for (const auto& p : *all) {
    ids.push_back(p.checkpoint_id);
    CHECK(p.metadata_path == "/ckpt/chk-" + std::to_string(p.checkpoint_id) + "/_metadata");
  }
  CHECK(ids == std::vector<std::int64_t>{1, 9, 10, 100, 1'000'000'000'000LL});

  REQUIRE(store.add({10, "/other/chk-10/_metadata"}).has_value());
  REQUIRE(store.remove(9).has_value());
  REQUIRE(store.remove(9).has_value()); // missing is fine
  REQUIRE(store.remove(1'000'000'000'000LL).has_value());
  CHECK(*store.checkpoints()
        == std::vector<ha::checkpoint_pointer>{{1, "/ckpt/chk-1/_metadata"},
                                               {10, "/other/chk-10/_metadata"},
                                               {100, "/ckpt/chk-100/_metadata"}});

  CHECK(store.add({-1, "/x"}).error().code == errc::invalid_argument);
  CHECK(store.add({5, ""}).error().code == errc::invalid_argument);
}

} // namespace flint::test
