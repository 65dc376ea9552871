#pragma once
/// Writes records into buffers as a length and the bytes (Flink's SpanningRecordSerializer).

#include "runtime/network/buffer_builder.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace flint::network {

/// Where copying a record stopped (Flink's SerializationResult).
enum class serialization_result {
  /// The record is complete and the buffer has room left.
  full_record,
  /// The record is complete and the buffer is exactly full.
  full_record_buffer_full,
  /// The buffer is full and part of the record is still to be written into the next one.
  partial_record_buffer_full,
};

/// Frames one record at a time as a 4-byte big-endian length followed by its bytes, and copies
/// the frame into as many buffers as it needs. Records are opaque bytes at this layer.
class record_serializer {
public:
  /// Starts the next record. The bytes are read in place: keep them alive until the record is
  /// complete, or call keep_remaining() first.
  void set_record(std::span<const char> record);
  /// Copies as much of the current record as fits into `target`.
  serialization_result copy_to(buffer_builder& target);
  /// True while part of the current record has not been copied yet.
  bool has_pending() const noexcept { return header_position_ < header_.size() || !rest_.empty(); }
  /// Copies the part not yet written into the serializer, so the caller's record may go away
  /// while the writer waits for a buffer.
  void keep_remaining();

  /// Bytes a record of `size` bytes takes in buffers.
  static constexpr std::size_t framed_size(std::size_t size) noexcept { return size + 4; }
  /// Writes the 4-byte big-endian length of a record of `size` bytes at `at`.
  static void write_header(std::uint32_t size, char* at) noexcept {
    at[0] = static_cast<char>((size >> 24) & 0xff);
    at[1] = static_cast<char>((size >> 16) & 0xff);
    at[2] = static_cast<char>((size >> 8) & 0xff);
    at[3] = static_cast<char>(size & 0xff);
  }

private:
  std::array<char, 4> header_{};
  std::size_t header_position_ = 4;
  std::span<const char> rest_;
  std::vector<char> kept_;
};

} // namespace flint::network
