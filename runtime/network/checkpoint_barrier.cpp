#include "runtime/network/checkpoint_barrier.hpp"

#include <array>

namespace flint::network {

namespace {

void put(char* at, std::int64_t v) {
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i)
    at[i] = static_cast<char>((u >> (8 * i)) & 0xff);
}

std::int64_t get(const char* at) {
  std::uint64_t u = 0;
  for (int i = 0; i < 8; ++i)
    u |= static_cast<std::uint64_t>(static_cast<unsigned char>(at[i])) << (8 * i);
  return static_cast<std::int64_t>(u);
}

} // namespace

buffer to_event(const checkpoint_barrier& barrier) {
  std::array<char, 16> bytes{};
  put(bytes.data(), barrier.id);
  put(bytes.data() + 8, barrier.timestamp);
  return buffer::unpooled_copy(bytes, buffer_kind::checkpoint_barrier);
}

std::optional<checkpoint_barrier> barrier_of(const buffer& event) {
  if (event.kind() != buffer_kind::checkpoint_barrier || event.size() != 16)
    return std::nullopt;
  return checkpoint_barrier{get(event.data()), get(event.data() + 8)};
}

} // namespace flint::network
