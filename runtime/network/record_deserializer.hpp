#pragma once
/// Reassembles records from a sequence of buffers (Flink's SpillingAdaptiveSpanningRecordDeserializer).

#include "runtime/network/buffer.hpp"

#include <array>
#include <cstdint>
#include <cstddef>
#include <span>
#include <vector>

namespace flint::network {

/// What next_record found.
enum class deserialization_result {
  /// `record` views a complete record.
  record,
  /// The current buffer is used up (and released); give the next one with set_next_buffer.
  need_more_data,
  /// The next record's length is over max_record_size: the channel's bytes cannot be trusted
  /// (a corrupt or hostile peer). The buffer and any partial record are dropped;
  /// oversized_length() says how long the record claimed to be.
  record_too_large,
  /// A record's frame contradicts itself (a timestamped record whose timestamp varint runs past
  /// its end or over 64 bits): the channel's bytes cannot be trusted. The buffer and any partial
  /// record are dropped; malformed_reason() says what was wrong.
  malformed_record,
};

/// Reads length-prefixed records. A record inside one buffer is viewed in place (no copy); a
/// record that spans buffers is gathered into an internal array. The buffer is released as soon as
/// its last record has been consumed, which returns its credit to the producer.
class record_deserializer {
public:
  /// The largest record a task accepts (128 MiB): records larger than any sane one come only
  /// from a corrupt or hostile sender, and gathering them would take the memory first.
  static constexpr std::size_t default_max_record_size = std::size_t{128} << 20;

  explicit record_deserializer(std::size_t max_record_size = default_max_record_size)
    : max_record_size_(max_record_size) {}
  /// Hands over the next data buffer of the channel; the previous one must be used up.
  void set_next_buffer(buffer next);
  /// The next complete record, viewed until the next call on this deserializer.
  deserialization_result next_record(std::span<const char>& record) {
    // The common case inline (a task reads hundreds of records per buffer): an untimestamped
    // record that lies whole in the current buffer, no record being gathered across buffers.
    if (!spanning_returned_ && length_have_ == 0 && current_) {
      std::size_t remaining = current_.size() - position_;
      if (remaining >= 4) {
        const char* data = current_.data() + position_;
        auto word = (static_cast<std::uint32_t>(static_cast<unsigned char>(data[0])) << 24)
                    | (static_cast<std::uint32_t>(static_cast<unsigned char>(data[1])) << 16)
                    | (static_cast<std::uint32_t>(static_cast<unsigned char>(data[2])) << 8)
                    | static_cast<std::uint32_t>(static_cast<unsigned char>(data[3]));
        // The top bit tags a timestamped record (record_serializer::timestamp_flag): slow path.
        if (word < 0x80000000u && word <= max_record_size_ && remaining - 4 >= word) {
          tagged_ = false;
          has_timestamp_ = false;
          record = std::span<const char>{data + 4, word};
          position_ += 4 + word;
          return deserialization_result::record;
        }
      }
    }
    return next_record_framed(record);
  }
  /// True while part of a record has arrived and the rest has not.
  bool has_unfinished_data() const noexcept;
  /// True while a buffer is held (not yet consumed).
  bool has_buffer() const noexcept { return static_cast<bool>(current_); }
  /// Drops the current buffer and any partial record (on channel release).
  void clear();
  /// The length that made next_record answer record_too_large.
  std::size_t oversized_length() const noexcept { return record_length_; }
  std::size_t max_record_size() const noexcept { return max_record_size_; }
  /// What made next_record answer malformed_record.
  const char* malformed_reason() const noexcept { return malformed_reason_; }
  /// Whether the record last returned carried an event timestamp, and which (its leading varint,
  /// stripped from the record's view; see record_serializer for the coding).
  bool has_timestamp() const noexcept { return has_timestamp_; }
  std::int64_t timestamp() const noexcept { return timestamp_; }

private:
  /// next_record for every case (the inline one above included).
  deserialization_result next_record_framed(std::span<const char>& record);
  deserialization_result refuse_oversized();
  deserialization_result refuse_malformed();
  /// Strips the timestamp of a tagged record from `record`, coded against `base`; false (with
  /// malformed_reason_ set) when its varint is cut short or too long.
  bool take_timestamp(std::span<const char>& record, std::int64_t base);

  buffer current_;
  std::size_t position_ = 0;
  /// Spanning state: length bytes gathered so far, then the record's bytes.
  std::array<char, 4> length_bytes_{};
  std::size_t length_have_ = 0;
  std::size_t record_length_ = 0;
  std::vector<char> spanning_;
  /// The last record returned was the spanning one; reset before reading on.
  bool spanning_returned_ = false;
  std::size_t max_record_size_;
  /// The length's tag of the record being read, and what the last returned record carried.
  bool tagged_ = false;
  bool has_timestamp_ = false;
  std::int64_t timestamp_ = 0;
  /// The timestamp the next timestamped record starting in the current buffer is coded against
  /// (0 at a buffer's start), and the base of the record being gathered across buffers.
  std::int64_t timestamp_base_ = 0;
  std::int64_t spanning_base_ = 0;
  const char* malformed_reason_ = "";
};

} // namespace flint::network
