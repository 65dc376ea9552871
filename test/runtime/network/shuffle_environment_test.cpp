// The shuffle environment: pools sized from the configuration, gates of local and remote
// channels, and the partition lifecycle (pipelined partitions go once consumed, blocking ones
// stay for any number of readers until the job's partitions are released).

#include "runtime/network/bounded_blocking_subpartition.hpp"
#include "runtime/network/local_input_channel.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/remote_input_channel.hpp"
#include "runtime/network/shuffle_environment.hpp"
#include "test/runtime/network/network_test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace flint;

namespace {

const graph::job_id job{0x1, 0x2};
const graph::job_id other_job{0x3, 0x4};
const network::result_partition_id id{graph::intermediate_data_set_id{7, 8}, 0};

/// An environment whose blocking partitions keep `memory` bytes on the heap and spill the rest
/// under a fresh temp directory.
struct shuffle_fixture {
  network::test::temp_path tmp;
  std::shared_ptr<network::shuffle_environment> shuffle;

  explicit shuffle_fixture(const std::string& name, std::size_t memory = 0)
    : tmp("shuffle_" + name) {
    std::filesystem::create_directories(tmp.path);
    network::network_config config;
    config.segment_size = 1024;
    config.network_memory = 64 * 1024;
    config.tmp_dirs = {tmp.path.string()};
    config.blocking_shuffle_memory = memory;
    shuffle = std::make_shared<network::shuffle_environment>(config);
  }

  /// A finished blocking partition of `job` with `n` records in each of `subpartitions`.
  std::shared_ptr<network::result_partition> write_blocking(const graph::job_id& of,
                                                            const network::result_partition_id& pid,
                                                            std::size_t subpartitions,
                                                            std::size_t n) {
    auto partition =
      shuffle->create_partition(of, pid, subpartitions, graph::result_partition_type::blocking);
    REQUIRE_MESSAGE(partition.has_value(), partition.error().to_string());
    for (std::size_t i = 0; i < n * subpartitions; ++i)
      REQUIRE((*partition)->emit_record(record(i), i % subpartitions)
              == network::emit_result::written);
    (*partition)->finish();
    shuffle->producer_finished(of, pid);
    return *partition;
  }

  static std::string record(std::size_t i) {
    return "record-" + std::to_string(i) + std::string(i % 300, 'x');
  }

  /// What a local input channel of a consumer of `job` reads from `subpartition`.
  std::vector<std::string> read_locally(const graph::job_id& of,
                                        const network::result_partition_id& pid,
                                        std::size_t subpartition) {
    network::local_input_channel channel{0, pid, subpartition, *shuffle->partitions_of(of)};
    int woken = 0;
    channel.set_data_listener([&] { ++woken; });
    auto requested = channel.request_subpartition();
    REQUIRE_MESSAGE(requested.has_value(), requested.error().to_string());
    CHECK(woken == 1);
    std::vector<std::string> out;
    network::record_deserializer deserializer;
    while (auto next = channel.get_next_buffer()) {
      if (next->buf.kind() == network::buffer_kind::end_of_partition)
        break;
      deserializer.set_next_buffer(std::move(next->buf));
      std::span<const char> r;
      while (deserializer.next_record(r) == network::deserialization_result::record)
        out.emplace_back(r.begin(), r.end());
    }
    shuffle->subpartition_consumed(of, pid, subpartition);
    return out;
  }

  std::size_t spill_files() const {
    std::size_t n = 0;
    if (std::filesystem::exists(tmp.path))
      for (const auto& e : std::filesystem::recursive_directory_iterator(tmp.path))
        n += e.is_regular_file() ? 1 : 0;
    return n;
  }
};

network::network_config small_config() {
  network::network_config config;
  config.segment_size = 1024;
  config.network_memory = 64 * 1024; // 64 segments
  return config;
}

std::vector<std::string> expected_records(std::size_t subpartition, std::size_t subpartitions,
                                          std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = subpartition; i < n * subpartitions; i += subpartitions)
    out.push_back(shuffle_fixture::record(i));
  return out;
}

} // namespace

TEST_CASE(
  "a blocking partition outlives its consumers and a restarted consumer reads it again from the start") {
  shuffle_fixture f{"reread"};
  auto partition = f.write_blocking(job, id, 2, 500);
  CHECK(f.spill_files() == 2);
  // Finished and every subpartition consumed: a pipelined partition would be gone now.
  CHECK(f.read_locally(job, id, 0) == expected_records(0, 2, 500));
  CHECK(f.read_locally(job, id, 1) == expected_records(1, 2, 500));
  CHECK(f.shuffle->num_partitions() == 1);
  CHECK(f.read_locally(job, id, 0) == expected_records(0, 2, 500));
  CHECK(f.shuffle->num_partitions() == 1);
  // The producer's pool went back at finish; only the reader's own buffers were used.
  CHECK(f.shuffle->buffer_pool().available_segments() == f.shuffle->buffer_pool().total_segments());
}

TEST_CASE(
  "a pipelined partition is still released once its producer finished and every subpartition was consumed") {
  shuffle_fixture f{"pipelined"};
  auto partition = f.shuffle->create_partition(job, id, 1);
  REQUIRE(partition.has_value());
  REQUIRE((*partition)->emit_record(shuffle_fixture::record(1), 0)
          == network::emit_result::written);
  (*partition)->finish();
  f.shuffle->producer_finished(job, id);
  CHECK(f.read_locally(job, id, 0) == std::vector<std::string>{shuffle_fixture::record(1)});
  CHECK(f.shuffle->num_partitions() == 0);
  CHECK(f.spill_files() == 0);
}

TEST_CASE(
  "release_partitions and release_job release blocking partitions and delete their spill files") {
  shuffle_fixture f{"release"};
  network::result_partition_id second{graph::intermediate_data_set_id{7, 8}, 1};
  f.write_blocking(job, id, 1, 200);
  f.write_blocking(job, second, 1, 200);
  f.write_blocking(other_job, id, 1, 200);
  CHECK(f.shuffle->num_partitions() == 3);
  CHECK(f.spill_files() == 3);

  f.shuffle->release_partitions(
    job, {id, network::result_partition_id{graph::intermediate_data_set_id{9, 9}, 0}});
  CHECK(f.shuffle->num_partitions(job) == 1);
  CHECK(f.spill_files() == 2);
  auto gone = f.shuffle->partitions_of(job)->create_subpartition_view(id, 0, [] {});
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == errc::not_found);

  f.shuffle->release_job(job);
  CHECK(f.shuffle->num_partitions(job) == 0);
  CHECK(f.shuffle->num_partitions(other_job) == 1);
  CHECK(f.spill_files() == 1);
  CHECK_FALSE(
    std::filesystem::exists(f.shuffle->spill_files().root(0) / ("job-" + job.to_string())));
  // The other job reads on.
  CHECK(f.read_locally(other_job, id, 0) == expected_records(0, 1, 200));
}

TEST_CASE("a failed producer's blocking partition is released at once") {
  shuffle_fixture f{"failed"};
  auto partition = f.shuffle->create_partition(job, id, 2, graph::result_partition_type::blocking);
  REQUIRE(partition.has_value());
  for (std::size_t i = 0; i < 400; ++i)
    REQUIRE((*partition)->emit_record(shuffle_fixture::record(i), i % 2)
            == network::emit_result::written);
  CHECK(f.spill_files() == 2);
  f.shuffle->producer_failed(job, id);
  CHECK(f.shuffle->num_partitions() == 0);
  CHECK(f.spill_files() == 0);
  CHECK(f.shuffle->buffer_pool().available_segments() == f.shuffle->buffer_pool().total_segments());
}

TEST_CASE("a new attempt of a blocking producer replaces the partition of the earlier one") {
  shuffle_fixture f{"attempt", 4 * 1024};
  f.write_blocking(job, id, 1, 300);
  CHECK(f.shuffle->blocking_memory().reserved() == 4 * 1024);
  auto again = f.shuffle->create_partition(job, id, 1, graph::result_partition_type::blocking);
  REQUIRE_MESSAGE(again.has_value(), again.error().to_string());
  // The earlier copy went, with its heap and its file.
  CHECK(f.shuffle->num_partitions() == 1);
  CHECK(f.shuffle->blocking_memory().reserved() == 0);
  CHECK(f.spill_files() == 0);
  REQUIRE((*again)->emit_record(std::string{"new"}, 0) == network::emit_result::written);
  (*again)->finish();
  CHECK(f.read_locally(job, id, 0) == std::vector<std::string>{"new"});
}

TEST_CASE(
  "an unusable io.tmp.dirs fails a blocking partition with the path, and pipelined ones never touch it") {
  network::test::temp_path tmp("shuffle_bad_tmp");
  std::filesystem::create_directories(tmp.path);
  auto not_a_dir = tmp.path / "a-file";
  std::ofstream(not_a_dir) << "x";
  for (const auto& dir : {tmp.path / "missing", not_a_dir}) {
    network::network_config config;
    config.tmp_dirs = {dir.string()};
    network::shuffle_environment shuffle{config};
    auto pipelined = shuffle.create_partition(job, id, 1);
    CHECK(pipelined.has_value());
    shuffle.producer_failed(job, id);
    auto blocking = shuffle.create_partition(job, id, 1, graph::result_partition_type::blocking);
    REQUIRE_FALSE(blocking.has_value());
    CHECK(blocking.error().code == errc::invalid_argument);
    CHECK_MESSAGE(blocking.error().message.find(dir.string()) != std::string::npos,
                  blocking.error().message);
    CHECK_MESSAGE(blocking.error().message.find(network::to_string(id)) != std::string::npos,
                  blocking.error().message);
    CHECK(shuffle.num_partitions() == 0);
    CHECK(shuffle.buffer_pool().available_segments() == shuffle.buffer_pool().total_segments());
  }
}

TEST_CASE("destroying the shuffle environment deletes its spill folder") {
  shuffle_fixture f{"shutdown"};
  f.write_blocking(job, id, 3, 100);
  auto root = f.shuffle->spill_files().root(0);
  CHECK(std::filesystem::is_directory(root));
  CHECK(f.spill_files() == 3);
  f.shuffle.reset();
  CHECK_FALSE(std::filesystem::exists(root));
  CHECK(f.spill_files() == 0);
}

TEST_CASE("the environment sizes partition pools from the configuration and registers them") {
  network::shuffle_environment env{small_config()};
  CHECK(env.buffer_pool().total_segments() == 64);
  auto partition = env.create_partition(job, network::test::partition_id(1, 0), 3);
  REQUIRE(partition);
  CHECK((*partition)->pool()->min_segments() == 4);
  CHECK((*partition)->pool()->max_segments() == 3 * 2 + 8);
  CHECK(env.partitions_of(job)->num_partitions() == 1);

  auto again = env.create_partition(job, network::test::partition_id(1, 0), 3);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == errc::illegal_state);
  CHECK(env.buffer_pool().required_segments() == 4); // the refused one gave its minimum back

  auto huge = env.create_partition(job, network::test::partition_id(2, 0), 100);
  REQUIRE_FALSE(huge);
  CHECK(huge.error().code == errc::rejected);
  CHECK(huge.error().message.find("insufficient number of network buffers") != std::string::npos);
}

TEST_CASE("the environment builds gates of local and remote channels") {
  network::shuffle_environment env{small_config()};
  auto producer = *env.create_partition(job, network::test::partition_id(1, 0), 2);
  auto gate = env.create_input_gate(job, 3,
                                    {{network::test::partition_id(1, 0), 1, true},
                                     {network::test::partition_id(9, 0), 0, false},
                                     {network::test::partition_id(9, 1), 0, false}});
  REQUIRE(gate);
  // Two remote channels took two exclusive buffers each; the floating pool has no minimum.
  CHECK(env.buffer_pool().required_segments() == 3 + 4);
  REQUIRE((*gate)->floating_pool());
  CHECK((*gate)->floating_pool()->max_segments() == 8);
  auto* remote = dynamic_cast<network::remote_input_channel*>(&(*gate)->channel(2));
  REQUIRE(remote);
  CHECK(remote->id() == network::input_channel_id{3, 2});
  CHECK(remote->partition_request().partition == network::test::partition_id(9, 1));

  REQUIRE((*gate)->request_partitions());
  auto record = network::test::make_record(1, 3000); // spans three 1 KiB buffers
  REQUIRE(producer->emit_record(record, 1) == network::emit_result::written);
  producer->flush_all();
  network::record_deserializer deserializer;
  std::vector<std::string> got;
  while (auto next = (*gate)->poll_next()) {
    CHECK(next->channel == 0);
    deserializer.set_next_buffer(std::move(next->buf));
    std::span<const char> r;
    while (deserializer.next_record(r) == network::deserialization_result::record)
      got.emplace_back(r.begin(), r.end());
  }
  CHECK(got == std::vector<std::string>{record});

  gate->reset();
  CHECK(env.buffer_pool().required_segments() == 3);
  env.release_all();
  CHECK(producer->is_released());
  CHECK(env.buffer_pool().required_segments() == 0);
  CHECK(env.buffer_pool().available_segments() == 64);
}

TEST_CASE("a gate whose exclusive buffers do not fit fails clearly") {
  auto config = small_config();
  config.buffers_per_channel = 40;
  network::shuffle_environment env{config};
  auto gate = env.create_input_gate(
    job, 0,
    {{network::test::partition_id(1, 0), 0, false}, {network::test::partition_id(1, 1), 0, false}});
  REQUIRE_FALSE(gate);
  CHECK(gate.error().code == errc::rejected);
  CHECK(gate.error().message.find("gate 0 channel 1") != std::string::npos);
  CHECK(env.buffer_pool().required_segments() == 0);
  CHECK(env.buffer_pool().available_segments() == 64);
}
