#pragma once
/// Order-preserving bytes of signed 64-bit times: big-endian with the sign bit flipped, so that
/// comparing the bytes (RocksDB's key order, a std::string's operator<) compares the numbers,
/// negative ones included. Timer keys and window namespaces are built from them, so the
/// backend's key order is time order.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace flint::streaming {

/// Appends the 8 bytes of `value`.
inline void append_ordered_int64(std::string& out, std::int64_t value) {
  auto bits = static_cast<std::uint64_t>(value) ^ (std::uint64_t{1} << 63);
  // One append of the 8 bytes (the window operator builds a key from two per record).
  char bytes[8];
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((bits >> (56 - 8 * i)) & 0xff);
  out.append(bytes, 8);
}

/// The value of the 8 bytes at `pos` of `in`; the caller checked that they are there.
inline std::int64_t read_ordered_int64(std::string_view in, std::size_t pos) {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < 8; ++i)
    bits = (bits << 8) | static_cast<unsigned char>(in[pos + i]);
  return static_cast<std::int64_t>(bits ^ (std::uint64_t{1} << 63));
}

/// Appends a 4-byte big-endian length, then `bytes` (so that a key cannot run into the next part).
inline void append_length_prefixed(std::string& out, std::string_view bytes) {
  auto n = static_cast<std::uint32_t>(bytes.size());
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(bytes);
}

/// Reads what append_length_prefixed wrote at `pos` into `bytes` and moves `pos` past it; false
/// when `in` is too short.
inline bool read_length_prefixed(std::string_view in, std::size_t& pos, std::string_view& bytes) {
  if (in.size() < pos + 4)
    return false;
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < 4; ++i)
    n = (n << 8) | static_cast<unsigned char>(in[pos + i]);
  if (in.size() - pos - 4 < n)
    return false;
  bytes = in.substr(pos + 4, n);
  pos += 4 + n;
  return true;
}

} // namespace flint::streaming
