#include "runtime/network/record_deserializer.hpp"

#include "runtime/network/record_serializer.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace flint::network {
namespace {

/// A length read from the wire is trusted for reservation only up to this; beyond, the array grows
/// with the bytes that actually arrive, so a corrupt length cannot allocate gigabytes at once.
constexpr std::size_t max_reserve = 4 * 1024 * 1024;

/// The raw length word: the top bit tags a record that starts with its timestamp.
std::uint32_t read_length_word(const char* bytes) {
  auto b = [&](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

} // namespace

bool record_deserializer::take_timestamp(std::span<const char>& record, std::int64_t base) {
  has_timestamp_ = tagged_;
  if (!tagged_)
    return true;
  const auto* bytes = reinterpret_cast<const unsigned char*>(record.data());
  const std::size_t size = record.size();
  if (size > 0 && bytes[0] < 0x80) {
    // The common case: a one-byte difference.
    timestamp_ = record_serializer::stamp_decode(bytes[0], base);
    record = record.subspan(1);
    return true;
  }
  std::uint64_t code = 0;
  for (std::size_t i = 0; i < record_serializer::max_stamp_size; ++i) {
    if (i == size) {
      malformed_reason_ = "a timestamped record ends inside its timestamp";
      return false;
    }
    auto b = bytes[i];
    // The tenth byte holds the 64th bit only.
    if (i == record_serializer::max_stamp_size - 1 && b > 1) {
      malformed_reason_ = "a record's timestamp is longer than 64 bits";
      return false;
    }
    code |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if (b < 0x80) {
      timestamp_ = record_serializer::stamp_decode(code, base);
      record = record.subspan(i + 1);
      return true;
    }
  }
  malformed_reason_ = "a record's timestamp is longer than 64 bits";
  return false;
}

deserialization_result record_deserializer::refuse_malformed() {
  current_.release();
  position_ = 0;
  length_have_ = 0;
  spanning_.clear();
  spanning_returned_ = false;
  return deserialization_result::malformed_record;
}

deserialization_result record_deserializer::refuse_oversized() {
  // Nothing after a corrupt length can be framed: the buffer and any partial record go.
  current_.release();
  position_ = 0;
  length_have_ = 0;
  spanning_.clear();
  return deserialization_result::record_too_large;
}

void record_deserializer::set_next_buffer(buffer next) {
  if (current_ && position_ < current_.size())
    throw std::logic_error("record_deserializer: the previous buffer is not used up");
  if (!next.is_data())
    throw std::logic_error("record_deserializer: events carry no records");
  current_ = std::move(next);
  position_ = 0;
  timestamp_base_ = 0;
}

bool record_deserializer::has_unfinished_data() const noexcept {
  return (length_have_ > 0 && !spanning_returned_) || (current_ && position_ < current_.size());
}

void record_deserializer::clear() {
  current_.release();
  position_ = 0;
  length_have_ = 0;
  record_length_ = 0;
  spanning_.clear();
  spanning_returned_ = false;
  timestamp_base_ = 0;
}

deserialization_result record_deserializer::next_record_framed(std::span<const char>& record) {
  if (spanning_returned_) {
    spanning_returned_ = false;
    length_have_ = 0;
    record_length_ = 0;
    spanning_.clear();
  }
  std::size_t remaining = current_ ? current_.size() - position_ : 0;
  const char* data = current_ ? current_.data() + position_ : nullptr;

  if (length_have_ == 0) {
    if (remaining >= 4) {
      auto word = read_length_word(data);
      tagged_ = (word & record_serializer::timestamp_flag) != 0;
      std::size_t length = word & ~record_serializer::timestamp_flag;
      if (length > max_record_size_) {
        record_length_ = length;
        return refuse_oversized();
      }
      if (remaining - 4 >= length) {
        // The common case: the whole record lies in this buffer.
        record = std::span<const char>{data + 4, length};
        position_ += 4 + length;
        if (!take_timestamp(record, timestamp_base_))
          return refuse_malformed();
        if (tagged_)
          timestamp_base_ = timestamp_;
        return deserialization_result::record;
      }
      // The record starts here and ends in a later buffer: coded against this buffer's base.
      spanning_base_ = timestamp_base_;
      record_length_ = length;
      length_have_ = 4;
      spanning_.reserve(std::min(length, max_reserve));
      spanning_.assign(data + 4, data + remaining);
      position_ += remaining;
    } else if (remaining > 0) {
      spanning_base_ = timestamp_base_;
      std::copy(data, data + remaining, length_bytes_.begin());
      length_have_ = remaining;
      position_ += remaining;
    }
    current_.release();
    return deserialization_result::need_more_data;
  }

  // Continue a record that started in an earlier buffer.
  if (length_have_ < 4) {
    auto n = std::min(4 - length_have_, remaining);
    std::copy(data, data + n, length_bytes_.begin() + static_cast<std::ptrdiff_t>(length_have_));
    length_have_ += n;
    position_ += n;
    data += n;
    remaining -= n;
    if (length_have_ < 4) {
      current_.release();
      return deserialization_result::need_more_data;
    }
    auto word = read_length_word(length_bytes_.data());
    tagged_ = (word & record_serializer::timestamp_flag) != 0;
    record_length_ = word & ~record_serializer::timestamp_flag;
    if (record_length_ > max_record_size_)
      return refuse_oversized();
    spanning_.clear();
    spanning_.reserve(std::min(record_length_, max_reserve));
  }
  auto n = std::min(record_length_ - spanning_.size(), remaining);
  spanning_.insert(spanning_.end(), data, data + n);
  position_ += n;
  if (spanning_.size() == record_length_) {
    record = std::span<const char>{spanning_.data(), spanning_.size()};
    spanning_returned_ = true;
    // The base of the buffer it started in; the current buffer's base stays (the producer
    // coded the next record starting here against this buffer's own base).
    if (!take_timestamp(record, spanning_base_))
      return refuse_malformed();
    // TODO(perf): release the buffer here already when the record ended exactly at its end.
    // TODO(memory): Flink spills spanning records above 5 MiB to disk; here they stay in memory.
    return deserialization_result::record;
  }
  current_.release();
  return deserialization_result::need_more_data;
}

} // namespace flint::network
