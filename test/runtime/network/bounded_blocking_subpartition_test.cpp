// Blocking result partitions: written without waiting for a consumer, kept in memory up to a
// budget and in a spill file beyond it, read from the start by any number of readers, deleted on
// release.

#include "network_test_util.hpp"

#include "runtime/network/bounded_blocking_subpartition.hpp"
#include "runtime/network/bounded_blocking_subpartition_reader.hpp"
#include "runtime/network/credit_based_view.hpp"
#include "runtime/network/file_channel_manager.hpp"
#include "runtime/network/memory_budget.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/result_partition.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using flint::network::test::make_record;

namespace {

/// A fresh directory under the system temp directory, removed with everything in it.
struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(const std::string& name)
    : path(std::filesystem::temp_directory_path()
           / ("flint_net_" + std::to_string(::getpid()) + "_" + name)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// A blocking partition over 64-byte buffers from a pool of `pool_max` segments, keeping up to
/// `memory` bytes on the heap and the rest in files under `dir`.
struct blocking_fixture {
  temp_dir dir;
  std::shared_ptr<network_buffer_pool> global = network_buffer_pool::make(16, 64);
  std::shared_ptr<memory_budget> budget;
  std::vector<std::shared_ptr<bounded_blocking_subpartition>> subpartitions;
  std::shared_ptr<result_partition> partition;

  blocking_fixture(const std::string& name, std::size_t num_subpartitions, std::size_t memory,
                   std::size_t pool_max = 4)
    : dir(name),
      budget(std::make_shared<memory_budget>(memory)) {
    std::vector<std::shared_ptr<result_subpartition>> all;
    for (std::size_t i = 0; i < num_subpartitions; ++i) {
      subpartitions.push_back(std::make_shared<bounded_blocking_subpartition>(
        i, dir.path / ("p1-0." + std::to_string(i) + ".spill"), budget));
      all.push_back(subpartitions.back());
    }
    partition = std::make_shared<result_partition>(
      test::partition_id(1, 0), std::move(all),
      *global->create_buffer_pool(num_subpartitions + 1, pool_max),
      graph::result_partition_type::blocking);
  }
};

/// Reads a view to its end, releasing each buffer once its records are read (as a consuming task
/// does); stops early when the view has nothing now.
std::vector<std::string> read_all(result_subpartition_view& view, bool* ended = nullptr) {
  std::vector<std::string> out;
  record_deserializer deserializer;
  while (auto next = view.get_next_buffer()) {
    if (next->buf.kind() == buffer_kind::end_of_partition) {
      if (ended)
        *ended = true;
      break;
    }
    deserializer.set_next_buffer(std::move(next->buf));
    std::span<const char> record;
    while (deserializer.next_record(record) == deserialization_result::record)
      out.emplace_back(record.begin(), record.end());
  }
  return out;
}

std::vector<std::string> records(std::size_t n, std::size_t size) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(make_record(i, size + i % 7));
  return out;
}

} // namespace

TEST_CASE(
  "a blocking partition takes far more than its pool without blocking and spills beyond its memory budget") {
  blocking_fixture f{"spill", 1, 640};
  auto written = records(2000, 40);
  for (const auto& r : written)
    REQUIRE(f.partition->emit_record(r, 0) == emit_result::written);
  // Each full buffer was copied and recycled at once: only the partly filled one is out.
  CHECK(f.partition->pool()->num_in_use() <= 1);
  auto& sub = *f.subpartitions[0];
  CHECK(sub.buffers_in_memory() == 10); // 640 bytes of 64-byte buffers
  CHECK(f.budget->reserved() == 640);
  CHECK(sub.buffers_in_file() > 1000);
  REQUIRE(std::filesystem::is_regular_file(sub.file()));
  CHECK(std::filesystem::file_size(sub.file()) == sub.file_bytes());
  CHECK(f.partition->failure() == std::nullopt);

  f.partition->finish();
  // The pool went back to the global pool at finish: the consumers may have the memory.
  CHECK(f.partition->pool()->is_destroyed());
  CHECK(f.global->available_segments() == f.global->total_segments());
  auto view = f.partition->create_subpartition_view(0, [] {});
  REQUIRE(view);
  bool ended = false;
  CHECK(read_all(**view, &ended) == written);
  CHECK(ended);
}

TEST_CASE("two readers of a blocking subpartition read the same bytes, each from the start") {
  blocking_fixture f{"two_readers", 2, 64 * 5};
  auto written = records(300, 30);
  for (std::size_t i = 0; i < written.size(); ++i)
    REQUIRE(f.partition->emit_record(written[i], i % 2) == emit_result::written);
  f.partition->finish();
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < written.size(); i += 2)
    expected.push_back(written[i]);

  // One after the other: the first reader's end does not release anything.
  auto first = *f.partition->create_subpartition_view(0, [] {});
  bool ended = false;
  CHECK(read_all(*first, &ended) == expected);
  CHECK(ended);
  first.reset();
  CHECK_FALSE(f.partition->is_released());

  // Two at once, interleaved buffer by buffer.
  auto a = *f.partition->create_subpartition_view(0, [] {});
  auto b = *f.partition->create_subpartition_view(0, [] {});
  CHECK(f.subpartitions[0]->num_readers() == 2);
  CHECK(a->backlog() == f.subpartitions[0]->total_data_buffers());
  std::vector<char> bytes_a;
  std::vector<char> bytes_b;
  bool end_a = false;
  bool end_b = false;
  while (!end_a || !end_b) {
    for (auto [view, bytes, end] :
         {std::tuple{a.get(), &bytes_a, &end_a}, std::tuple{b.get(), &bytes_b, &end_b}}) {
      if (*end)
        continue;
      auto next = view->get_next_buffer();
      REQUIRE(next);
      if (next->buf.kind() == buffer_kind::end_of_partition)
        *end = true;
      else
        bytes->insert(bytes->end(), next->buf.bytes().begin(), next->buf.bytes().end());
    }
  }
  CHECK(bytes_a == bytes_b);
  CHECK_FALSE(bytes_a.empty());
  // The other subpartition is there as well.
  auto other = *f.partition->create_subpartition_view(1, [] {});
  CHECK(read_all(*other).size() == written.size() / 2);
}

TEST_CASE("a blocking reader holds two buffers at most and is woken when one comes back") {
  blocking_fixture f{"read_buffers", 1, 0};
  for (const auto& r : records(50, 60))
    REQUIRE(f.partition->emit_record(r, 0) == emit_result::written);
  f.partition->finish();
  int woken = 0;
  auto view = *f.partition->create_subpartition_view(0, [&] { ++woken; });
  CHECK(woken == 1); // finished already: readable at once

  auto one = view->get_next_buffer();
  REQUIRE(one);
  CHECK(one->is_data_available);
  auto two = view->get_next_buffer();
  REQUIRE(two);
  CHECK_FALSE(two->is_data_available); // both read buffers are out
  CHECK_FALSE(view->is_available(5));
  CHECK_FALSE(view->get_next_buffer());
  CHECK(woken == 1);
  one->buf.release();
  CHECK(woken == 2);
  CHECK(view->is_available(1));
  CHECK_FALSE(view->is_available(0)); // data needs credit
  auto three = view->get_next_buffer();
  REQUIRE(three);
  CHECK(three->backlog == f.subpartitions[0]->total_data_buffers() - 3);
  // Buffers outlive their reader; they are freed when released.
  view.reset();
  two->buf.release();
  three->buf.release();
  CHECK(woken == 2);
}

TEST_CASE("a blocking reader made before finish waits for it") {
  blocking_fixture f{"early_reader", 1, 1024};
  int woken = 0;
  auto view = *f.partition->create_subpartition_view(0, [&] { ++woken; });
  REQUIRE(f.partition->emit_record(make_record(1, 100), 0) == emit_result::written);
  CHECK_FALSE(view->is_available(1));
  CHECK_FALSE(view->get_next_buffer());
  CHECK(woken == 0);
  f.partition->finish();
  CHECK(woken == 1);
  bool ended = false;
  CHECK(read_all(*view, &ended) == std::vector<std::string>{make_record(1, 100)});
  CHECK(ended);
}

TEST_CASE("flushing a blocking partition queues nothing: buffers go out full or at finish") {
  blocking_fixture f{"flush", 1, 1024};
  REQUIRE(f.partition->emit_record(make_record(1, 5), 0) == emit_result::written);
  f.partition->flush_all();
  CHECK(f.subpartitions[0]->total_data_buffers() == 0);
  f.partition->finish();
  CHECK(f.subpartitions[0]->total_data_buffers() == 1);
}

TEST_CASE("releasing a blocking partition deletes its spill files and gives its memory back") {
  blocking_fixture f{"release", 2, 64 * 3};
  for (std::size_t i = 0; i < 400; ++i)
    REQUIRE(f.partition->emit_record(make_record(i, 50), i % 2) == emit_result::written);
  f.partition->finish();
  auto reading = *f.partition->create_subpartition_view(0, [] {});
  REQUIRE(reading->get_next_buffer());
  for (auto& sub : f.subpartitions)
    REQUIRE(std::filesystem::exists(sub->file()));
  CHECK(f.budget->reserved() == 64 * 3);

  f.partition->release();
  for (auto& sub : f.subpartitions)
    CHECK_FALSE(std::filesystem::exists(sub->file()));
  CHECK(std::filesystem::is_empty(f.dir.path));
  CHECK(f.budget->reserved() == 0);
  // A reader in the middle gets nothing more and says why; a new one is refused.
  CHECK_FALSE(reading->get_next_buffer());
  CHECK_FALSE(reading->is_available(10));
  auto* reader = dynamic_cast<bounded_blocking_subpartition_reader*>(reading.get());
  REQUIRE(reader);
  REQUIRE(reader->failure());
  CHECK(reader->failure()->message.find("released") != std::string::npos);
  auto late = f.partition->create_subpartition_view(1, [] {});
  REQUIRE_FALSE(late);
  CHECK(late.error().code == errc::illegal_state);
}

TEST_CASE(
  "a spill file that cannot be created fails the partition with its path, without crashing") {
  blocking_fixture f{"unwritable", 1, 0};
  std::filesystem::remove_all(f.dir.path); // the folder went away under the partition
  for (std::size_t i = 0; i < 20; ++i)
    REQUIRE(f.partition->emit_record(make_record(i, 60), 0) == emit_result::written);
  auto failed = f.partition->failure();
  REQUIRE(failed);
  CHECK(failed->message.find(f.subpartitions[0]->file().string()) != std::string::npos);
  CHECK(failed->message.find("No such file or directory") != std::string::npos);
  // Nothing leaked: refused buffers went back to the pool.
  CHECK(f.partition->pool()->num_in_use() <= 1);
  f.partition->finish();
  auto view = f.partition->create_subpartition_view(0, [] {});
  REQUIRE_FALSE(view);
  CHECK(view.error().message.find(f.subpartitions[0]->file().string()) != std::string::npos);
}

TEST_CASE(
  "a credit-based view sends a blocking subpartition against credit and ends with end-of-partition") {
  blocking_fixture f{"credit", 1, 64 * 2};
  auto written = records(40, 55);
  for (const auto& r : written)
    REQUIRE(f.partition->emit_record(r, 0) == emit_result::written);
  f.partition->finish();
  int woken = 0;
  credit_based_view sender{input_channel_id{0, 0},
                           *f.partition->create_subpartition_view(0, [&] { ++woken; }), 1};
  std::vector<buffer> in_flight;
  std::vector<std::string> received;
  record_deserializer deserializer;
  auto consume = [&] {
    for (auto& b : in_flight) {
      deserializer.set_next_buffer(std::move(b));
      std::span<const char> record;
      while (deserializer.next_record(record) == deserialization_result::record)
        received.emplace_back(record.begin(), record.end());
    }
    in_flight.clear();
  };
  std::size_t responses = 0;
  while (!sender.is_finished()) {
    while (auto response = sender.next_response()) {
      ++responses;
      if (response->buf.is_data())
        in_flight.push_back(std::move(response->buf));
    }
    CHECK(sender.credits() == 0);
    // The consumer frees what it got and grants one credit per freed buffer.
    auto freed = in_flight.size();
    consume();
    sender.add_credit(freed == 0 ? 1 : freed);
  }
  CHECK(received == written);
  CHECK(sender.data_buffers_sent() == f.subpartitions[0]->total_data_buffers());
  CHECK(responses == sender.data_buffers_sent() + 1);
}

TEST_CASE("the spill folders live in io.tmp.dirs, one per manager, and go on close") {
  temp_dir tmp{"channels"};
  file_channel_manager files{{tmp.path.string()}, "flint-netty-shuffle"};
  CHECK(std::filesystem::is_empty(tmp.path)); // nothing before first use
  auto job_a = files.directory("job-a");
  REQUIRE(job_a);
  CHECK(job_a->parent_path() == files.root(0));
  CHECK(files.root(0).parent_path() == tmp.path);
  CHECK(files.root(0).filename().string().rfind(
          "flint-netty-shuffle-" + std::to_string(::getpid()) + "-", 0)
        == 0);
  auto job_b = files.directory("job-b");
  REQUIRE(job_b);
  std::ofstream(*job_a / "x.spill") << "data";
  files.remove("job-a");
  CHECK_FALSE(std::filesystem::exists(*job_a));
  CHECK(std::filesystem::exists(*job_b));
  file_channel_manager other{{tmp.path.string()}, "flint-netty-shuffle"};
  REQUIRE(other.directory("job-a"));
  CHECK(other.root(0) != files.root(0));
  files.close();
  CHECK_FALSE(std::filesystem::exists(files.root(0)));
  CHECK(std::filesystem::exists(other.root(0)));
}

TEST_CASE("a missing or non-directory io.tmp.dirs fails with the path in the message") {
  temp_dir tmp{"bad_tmp"};
  auto missing = tmp.path / "does-not-exist";
  file_channel_manager in_missing{{missing.string()}, "flint-netty-shuffle"};
  auto a = in_missing.directory("job");
  REQUIRE_FALSE(a);
  CHECK(a.error().code == errc::invalid_argument);
  CHECK(a.error().message.find("io.tmp.dirs") != std::string::npos);
  CHECK(a.error().message.find(missing.string()) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(missing));

  auto file = tmp.path / "a-file";
  std::ofstream(file) << "not a directory";
  file_channel_manager in_file{{file.string()}, "flint-netty-shuffle"};
  auto b = in_file.directory("job");
  REQUIRE_FALSE(b);
  CHECK(b.error().message.find(file.string()) != std::string::npos);
  CHECK(b.error().message.find("Not a directory") != std::string::npos);
}

TEST_CASE("io.tmp.dirs and the blocking-shuffle memory budget are read from their keys") {
  auto defaults = network_config{};
  CHECK(defaults.tmp_dirs.empty());
  CHECK(defaults.blocking_shuffle_memory == 32 * 1024 * 1024);
  auto config =
    network_config::from_map({{"io.tmp.dirs", "/data/a, /data/b:/data/c"},
                              {"taskmanager.network.blocking-shuffle.memory-budget", "1 mb"}});
  REQUIRE(config);
  CHECK(config->tmp_dirs == std::vector<std::string>{"/data/a", "/data/b", "/data/c"});
  CHECK(config->blocking_shuffle_memory == 1024 * 1024);
  auto bad =
    network_config::from_map({{"taskmanager.network.blocking-shuffle.memory-budget", "lots"}});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("taskmanager.network.blocking-shuffle.memory-budget")
        != std::string::npos);
}
