#include "runtime/graph/stream_partitioner.hpp"

#include <algorithm>

namespace flint::graph {

std::string_view to_string(partitioner_kind kind) {
  switch (kind) {
    case partitioner_kind::forward: return "FORWARD";
    case partitioner_kind::rebalance: return "REBALANCE";
    case partitioner_kind::rescale: return "RESCALE";
    case partitioner_kind::shuffle: return "SHUFFLE";
    case partitioner_kind::broadcast: return "BROADCAST";
    case partitioner_kind::global: return "GLOBAL";
    case partitioner_kind::key_group: return "HASH";
  }
  return "?";
}

int compute_default_max_parallelism(int parallelism) {
  long wanted = static_cast<long>(parallelism) + parallelism / 2;
  long pow2 = 1;
  while (pow2 < wanted)
    pow2 <<= 1;
  return static_cast<int>(std::min(std::max(pow2, 128L), 32768L));
}

} // namespace flint::graph
