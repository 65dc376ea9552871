#pragma once
/// A consumer's handle on one subpartition, whatever its kind (Flink's ResultSubpartitionView).

#include "runtime/network/buffer_and_backlog.hpp"

#include <cstddef>
#include <optional>

namespace flint::network {

/// Reads one subpartition in order and keeps it alive while reading. One reader thread calls it
/// (a local input channel or the transport); the listener given when the view was created hears
/// when something can be read again. Implemented by pipelined_subpartition_view (buffers move
/// from the producer's queue) and bounded_blocking_subpartition_reader (copies of what a
/// blocking subpartition holds, from the start, as often as asked).
class result_subpartition_view {
public:
  virtual ~result_subpartition_view() = default;

  /// The next buffer or event with its backlog; nothing when nothing can be read now (then the
  /// listener fires once something can) or the view is released.
  virtual std::optional<buffer_and_backlog> get_next_buffer() = 0;
  /// True when the next buffer can go with `credits` credits (events need none).
  virtual bool is_available(std::size_t credits) const = 0;
  /// Data buffers still to be read.
  virtual std::size_t backlog() const = 0;
  /// Stops reading and gives up what the view holds; the subpartition stays for its owner.
  virtual void release_all_resources() = 0;
  virtual bool is_released() const = 0;
  virtual std::size_t subpartition_index() const = 0;
};

} // namespace flint::network
