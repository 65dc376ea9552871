#pragma once
/// A checkpoint barrier (Flink's CheckpointBarrier): an event in the buffers' stream that splits
/// the records before checkpoint n from those after it. It travels as a buffer of kind
/// `checkpoint_barrier` whose 16 payload bytes are its id and timestamp (little-endian).

#include <cstdint>
#include <optional>

#include "runtime/network/buffer.hpp"

namespace flint::network {

struct checkpoint_barrier {
  std::int64_t id = 0;
  /// When the coordinator triggered it (ms on the JobMaster's clock).
  std::int64_t timestamp = 0;
  friend bool operator==(const checkpoint_barrier&, const checkpoint_barrier&) = default;
};

/// The barrier as an unpooled event buffer.
buffer to_event(const checkpoint_barrier& barrier);

/// The barrier an event buffer carries; nullopt for other kinds or a payload that is not 16
/// bytes (a broken peer).
std::optional<checkpoint_barrier> barrier_of(const buffer& event);

} // namespace flint::network
