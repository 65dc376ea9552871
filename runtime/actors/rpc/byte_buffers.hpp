#pragma once
/// Byte vectors reused from call to call on a thread: a call's bytes (its request, its answer)
/// are made into a vector whose buffer an earlier call left behind, instead of a new allocation.
///
/// A call's bytes travel in a CAF message, which hands the vector to the receiving handler: the
/// receiver gives it back here once read (the callee the request, the caller the answer), and
/// the next call on that thread writes into it. An ask in one process then allocates no byte
/// buffer at all once warm (the request's buffer carries the answer of the next call, and so on).

#include <cstddef>
#include <utility>
#include <vector>

namespace flint::rpc::detail {

/// What a thread keeps: two buffers (the request and the answer of the call in flight), each at
/// most 64 KiB (a larger one is freed, as one call's burst should not stay).
class byte_buffers {
public:
  static constexpr std::size_t kept = 2;
  static constexpr std::size_t max_capacity = 64 * 1024;

  /// An empty vector, with a kept buffer's capacity when there is one.
  std::vector<char> take() {
    if (count_ == 0)
      return {};
    return std::move(free_[--count_]);
  }

  /// Keeps `bytes`'s buffer for a later take (its contents are dropped).
  void give(std::vector<char>&& bytes) {
    if (count_ == kept || bytes.capacity() == 0 || bytes.capacity() > max_capacity)
      return;
    bytes.clear();
    free_[count_++] = std::move(bytes);
  }

  std::size_t size() const noexcept { return count_; }

private:
  std::vector<char> free_[kept];
  std::size_t count_ = 0;
};

/// The calling thread's buffers.
inline byte_buffers& thread_byte_buffers() {
  thread_local byte_buffers buffers;
  return buffers;
}

} // namespace flint::rpc::detail
