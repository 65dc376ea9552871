#pragma once
/// Flink's key-group formulas (KeyGroupRangeAssignment, MathUtils.murmurHash); the ranges of
/// subtasks are in runtime/state/key_group_range.hpp.

#include "runtime/state/key_group_range.hpp"

#include <algorithm>
#include <cstdint>

namespace flint::streaming {

/// Flink's MathUtils.murmurHash(int): one MurmurHash3 round and finalizer, made non-negative.
inline std::int32_t murmur_hash(std::int32_t code) {
  auto rotl = [](std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  auto h = static_cast<std::uint32_t>(code);
  h *= 0xcc9e2d51u;
  h = rotl(h, 15);
  h *= 0x1b873593u;
  h = rotl(h, 13);
  h = h * 5 + 0xe6546b64u;
  h ^= 4;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  auto s = static_cast<std::int32_t>(h);
  if (s >= 0)
    return s;
  if (s != INT32_MIN)
    return -s;
  return 0;
}

/// key_group = murmur(hash(key)) % max_parallelism.
inline int assign_to_key_group(std::int32_t key_hash, int max_parallelism) {
  auto h = murmur_hash(key_hash); // non-negative
  // The default max parallelism is a power of two: a mask instead of a division per record.
  if ((max_parallelism & (max_parallelism - 1)) == 0)
    return h & (max_parallelism - 1);
  return h % max_parallelism;
}

// The range formulas live with the state that is split by them.
using ::flint::state::key_group_range;
using ::flint::state::key_group_range_for_operator;
using ::flint::state::operator_index_for_key_group;

/// Flink's computeDefaultMaxParallelism: min(max(round_up_pow2(p + p/2), 128), 32768).
inline int default_max_parallelism(int parallelism) {
  std::int64_t x = parallelism + parallelism / 2;
  std::int64_t pow2 = 1;
  while (pow2 < x)
    pow2 <<= 1;
  return static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(pow2, 128), 32768));
}

} // namespace flint::streaming
