#pragma once
/// Shared helpers of the network tests: deterministic record contents and small pools.

#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/result_partition.hpp"

#include <cstddef>
#include <filesystem>
#include <system_error>
#include <unistd.h>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace flint::network::test {

/// A fresh path under the system temp directory (not created), removed with everything in it.
struct temp_path {
  std::filesystem::path path;
  explicit temp_path(const std::string& name)
    : path(std::filesystem::temp_directory_path()
           / ("flint_net_" + std::to_string(::getpid()) + "_" + name)) {
    std::filesystem::remove_all(path);
  }
  ~temp_path() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// A record whose bytes depend on its number and position, so a swapped, shifted, lost or
/// duplicated byte shows.
inline std::string make_record(std::size_t number, std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    out[i] = static_cast<char>((number * 131 + i * 7 + (i >> 8)) & 0xff);
  return out;
}

/// A partition id for tests.
inline result_partition_id partition_id(std::uint64_t data_set, std::int32_t number) {
  return result_partition_id{graph::intermediate_data_set_id{0, data_set}, number};
}

/// A small deterministic generator (xorshift) for record sizes.
struct rng {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  std::uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  std::size_t below(std::size_t bound) { return static_cast<std::size_t>(next() % bound); }
};

} // namespace flint::network::test
