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
  /// `timestamped`: the record's first 8 bytes are its event timestamp (the length's top bit
  /// says so, as Flink's StreamElementSerializer tags a StreamRecord with a timestamp).
  void set_record(std::span<const char> record, bool timestamped = false);
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
  /// The length's top bit: the record starts with its 8-byte event timestamp.
  static constexpr std::uint32_t timestamp_flag = 0x80000000u;
  /// Bytes of the timestamp in front of a timestamped record.
  static constexpr std::size_t timestamp_size = 8;
  /// Writes `timestamp` (little-endian) at `at`.
  static void write_timestamp(std::int64_t timestamp, char* at) noexcept {
    auto u = static_cast<std::uint64_t>(timestamp);
    for (int i = 0; i < 8; ++i)
      at[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  }
  static std::int64_t read_timestamp(const char* at) noexcept {
    std::uint64_t u = 0;
    for (int i = 0; i < 8; ++i)
      u |= static_cast<std::uint64_t>(static_cast<unsigned char>(at[i])) << (8 * i);
    return static_cast<std::int64_t>(u);
  }
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
