#pragma once
/// What the fuzz targets share: the input as bytes, and the framing of inputs that carry several
/// pieces (buffers, arguments). The corpus generator writes the same framing.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace flint::fuzz {

/// libFuzzer's input as the decoders take it.
inline std::span<const char> as_chars(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Splits `bytes` into pieces framed as a 1-byte length and that many bytes; a last piece
/// shorter than its length keeps what there is.
inline std::vector<std::span<const char>> split_pieces(std::span<const char> bytes) {
  std::vector<std::span<const char>> pieces;
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::size_t length = static_cast<unsigned char>(bytes[at++]);
    length = std::min(length, bytes.size() - at);
    pieces.push_back(bytes.subspan(at, length));
    at += length;
  }
  return pieces;
}

/// Appends `piece` framed for split_pieces, cut into pieces of at most `max_piece` (<= 255) bytes.
inline void append_pieces(std::vector<char>& out, std::span<const char> piece,
                          std::size_t max_piece = 255) {
  do {
    auto n = std::min(piece.size(), max_piece);
    out.push_back(static_cast<char>(n));
    out.insert(out.end(), piece.begin(), piece.begin() + static_cast<std::ptrdiff_t>(n));
    piece = piece.subspan(n);
  } while (!piece.empty());
}

} // namespace flint::fuzz
