#pragma once
/// MurmurHash3 x64 128-bit with seed 0, fed incrementally like Guava's `Hashing.murmur3_128()`.
///
/// Flink derives JobVertex ids from this hash (StreamGraphHasherV2); using the same function and
/// the same byte feed gives Flint the ids Flink would print for the same program.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace flint::graph::detail {

/// Streaming MurmurHash3_x64_128; `hash()` may be called once.
class murmur3_128 {
public:
  /// Appends `value` as four little-endian bytes (Guava's `putInt`).
  void put_int(std::int32_t value);
  /// Appends the bytes of `text` (Guava's `putString(s, UTF_8)`).
  void put_string(std::string_view text);
  /// Finishes and returns h1 then h2, each little-endian (Guava's `asBytes()`).
  std::array<std::uint8_t, 16> hash();

private:
  void put_byte(std::uint8_t b);
  void mix_block();

  std::uint64_t h1_ = 0;
  std::uint64_t h2_ = 0;
  std::uint64_t length_ = 0;
  std::array<std::uint8_t, 16> block_{};
  std::size_t fill_ = 0;
};

/// MurmurHash3_x64_128 of a whole byte string.
std::array<std::uint8_t, 16> murmur3_128_of(std::string_view bytes);

} // namespace flint::graph::detail
