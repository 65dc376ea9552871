#include "network_test_util.hpp"

#include "runtime/network/input_gate.hpp"
#include "runtime/network/local_input_channel.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/result_partition_manager.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>

using namespace flint;
using namespace flint::network;

TEST_CASE("the partition manager hands out views of registered partitions") {
  auto global = network_buffer_pool::make(16, 64);
  result_partition_manager manager;
  auto id = test::partition_id(3, 1);
  auto partition = std::make_shared<result_partition>(id, 2, *global->create_buffer_pool(3, 6));
  REQUIRE(manager.register_partition(partition));
  CHECK(manager.num_partitions() == 1);

  auto view = manager.create_subpartition_view(id, 1, [] {});
  REQUIRE(view);
  CHECK((*view)->subpartition_index() == 1);

  auto again = manager.register_partition(partition);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == errc::illegal_state);
  CHECK(again.error().message.find("already registered") != std::string::npos);

  REQUIRE(manager.release_partition(id));
  CHECK(partition->is_released());
  CHECK(manager.num_partitions() == 0);
  CHECK(global->required_segments() == 0);
}

TEST_CASE("unknown partition ids give clear errors") {
  auto global = network_buffer_pool::make(16, 64);
  result_partition_manager manager;
  auto known = test::partition_id(3, 0);
  REQUIRE(manager.register_partition(
    std::make_shared<result_partition>(known, 2, *global->create_buffer_pool(3, 6))));
  auto unknown = test::partition_id(4, 2);

  auto view = manager.create_subpartition_view(unknown, 0, [] {});
  REQUIRE_FALSE(view);
  CHECK(view.error().code == errc::not_found);
  CHECK(view.error().message == "result partition " + unknown.result.to_string() + "#2 not found");

  auto wrong_number = manager.create_subpartition_view(test::partition_id(3, 1), 0, [] {});
  REQUIRE_FALSE(wrong_number);
  CHECK(wrong_number.error().code == errc::not_found);

  auto bad_index = manager.create_subpartition_view(known, 5, [] {});
  REQUIRE_FALSE(bad_index);
  CHECK(bad_index.error().code == errc::invalid_argument);
  CHECK(bad_index.error().message.find("has 2 subpartitions, no index 5") != std::string::npos);

  auto release = manager.release_partition(unknown);
  REQUIRE_FALSE(release);
  CHECK(release.error().code == errc::not_found);

  // A local channel asking for it fails its gate's request with the same cause and the channel.
  input_gate gate{4, nullptr};
  gate.add_channel(std::make_unique<local_input_channel>(0, unknown, 0, manager));
  auto requested = gate.request_partitions();
  REQUIRE_FALSE(requested);
  CHECK(requested.error().code == errc::not_found);
  CHECK(requested.error().message.find("gate 4 channel 0: result partition") != std::string::npos);
  CHECK(requested.error().message.find("not found") != std::string::npos);
}

TEST_CASE("release_all releases every partition") {
  auto global = network_buffer_pool::make(16, 64);
  result_partition_manager manager;
  auto a = std::make_shared<result_partition>(test::partition_id(1, 0), 1,
                                              *global->create_buffer_pool(2, 4));
  auto b = std::make_shared<result_partition>(test::partition_id(1, 1), 1,
                                              *global->create_buffer_pool(2, 4));
  REQUIRE(manager.register_partition(a));
  REQUIRE(manager.register_partition(b));
  manager.release_all();
  CHECK(a->is_released());
  CHECK(b->is_released());
  CHECK(manager.num_partitions() == 0);
}
