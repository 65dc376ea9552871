#pragma once
/// Writes records into buffers as a length and the bytes (Flink's SpanningRecordSerializer).

#include "runtime/network/buffer_builder.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
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
///
/// A record with an event timestamp (the length's top bit set, as Flink's StreamElementSerializer
/// tags a StreamRecord with a timestamp) carries it in front of its bytes as a zig-zag varint of
/// the difference to the timestamp of the previous timestamped record that started in the same
/// buffer; the first one starting in a buffer carries its timestamp against 0. The length counts
/// the varint. So every buffer decodes on its own (a reader needs no state from earlier buffers
/// but the record that spans into it), and a WordCount record's timestamp takes 1 byte, not 8.
class record_serializer {
public:
  /// Starts the next record. The bytes are read in place: keep them alive until the record is
  /// complete, or call keep_remaining() first.
  /// `timestamped`: the record's first 8 bytes are its event timestamp (little-endian, as
  /// write_timestamp puts it); they go out as the varint described above.
  void set_record(std::span<const char> record, bool timestamped = false);
  /// Starts the next record, `payload`, stamped with `timestamp`.
  void set_stamped_record(std::span<const char> payload, std::int64_t timestamp);
  /// Copies as much of the current record as fits into `target`.
  serialization_result copy_to(buffer_builder& target);
  /// True while part of the current record has not been copied yet.
  bool has_pending() const noexcept {
    return header_pending_ || header_position_ < header_size_ || !rest_.empty();
  }
  /// Copies the part not yet written into the serializer, so the caller's record may go away
  /// while the writer waits for a buffer.
  void keep_remaining();

  /// Bytes a record of `size` bytes takes in buffers (without a timestamp).
  static constexpr std::size_t framed_size(std::size_t size) noexcept { return size + 4; }
  /// The length's top bit: the record starts with its event timestamp (a varint, see above).
  static constexpr std::uint32_t timestamp_flag = 0x80000000u;
  /// The largest record length (the length's top bit tags timestamps).
  static constexpr std::size_t max_length = std::numeric_limits<std::int32_t>::max() >> 1;
  /// Bytes of the timestamp in front of a timestamped record handed to set_record or emitted
  /// by an operator (in memory; on the wire it is a varint).
  static constexpr std::size_t timestamp_size = 8;
  /// The longest varint of a timestamp difference.
  static constexpr std::size_t max_stamp_size = 10;
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
  /// The zig-zag code of `timestamp - base` (wrapping): small differences of either sign are
  /// small numbers.
  static std::uint64_t stamp_code(std::int64_t timestamp, std::int64_t base) noexcept {
    auto d = static_cast<std::uint64_t>(timestamp) - static_cast<std::uint64_t>(base);
    return (d << 1) ^ (0 - (d >> 63));
  }
  /// The timestamp whose stamp_code against `base` is `code`.
  static std::int64_t stamp_decode(std::uint64_t code, std::int64_t base) noexcept {
    auto d = (code >> 1) ^ (0 - (code & 1));
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(base) + d);
  }
  /// Bytes of the varint of `code` (1..10).
  static std::size_t stamp_size(std::uint64_t code) noexcept {
    std::size_t n = 1;
    while (code >= 0x80) {
      code >>= 7;
      ++n;
    }
    return n;
  }
  /// Writes the varint of `code` at `at` (stamp_size(code) bytes).
  static void write_stamp(std::uint64_t code, char* at) noexcept {
    while (code >= 0x80) {
      *at++ = static_cast<char>((code & 0x7f) | 0x80);
      code >>= 7;
    }
    *at = static_cast<char>(code);
  }
  /// Writes the 4-byte big-endian length word `size` (with its tag) at `at`.
  static void write_header(std::uint32_t size, char* at) noexcept {
    at[0] = static_cast<char>((size >> 24) & 0xff);
    at[1] = static_cast<char>((size >> 16) & 0xff);
    at[2] = static_cast<char>((size >> 8) & 0xff);
    at[3] = static_cast<char>(size & 0xff);
  }

private:
  /// Frames the record started last against `target`'s timestamp base (and moves the base).
  void encode_header(buffer_builder& target);

  std::array<char, 4 + max_stamp_size> header_{};
  std::size_t header_size_ = 0;
  std::size_t header_position_ = 0;
  /// A record was set and its header is not encoded yet: a timestamped record's varint depends
  /// on the buffer it starts in, known at the first copy_to.
  bool header_pending_ = false;
  bool stamped_ = false;
  std::int64_t timestamp_ = 0;
  std::span<const char> rest_;
  std::vector<char> kept_;
};

} // namespace flint::network
