#include "runtime/network/record_serializer.hpp"

#include <cassert>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace flint::network {

void record_serializer::set_record(std::span<const char> record, bool timestamped) {
  if (timestamped) {
    if (record.size() < timestamp_size)
      throw std::invalid_argument("record_serializer: a timestamped record is shorter than its timestamp");
    set_stamped_record(record.subspan(timestamp_size), read_timestamp(record.data()));
    return;
  }
  if (has_pending())
    throw std::logic_error("record_serializer: the previous record is not complete");
  if (record.size() > max_length)
    throw std::length_error("record_serializer: a record is limited to 1 GiB (the length's top bit tags timestamps)");
  header_pending_ = true;
  stamped_ = false;
  rest_ = record;
  kept_.clear();
}

void record_serializer::set_stamped_record(std::span<const char> payload, std::int64_t timestamp) {
  if (has_pending())
    throw std::logic_error("record_serializer: the previous record is not complete");
  if (payload.size() > max_length - max_stamp_size)
    throw std::length_error("record_serializer: a record is limited to 1 GiB (the length's top bit tags timestamps)");
  header_pending_ = true;
  stamped_ = true;
  timestamp_ = timestamp;
  rest_ = payload;
  kept_.clear();
}

void record_serializer::encode_header(buffer_builder& target) {
  // The record starts in `target` only if a byte of it goes there: a full builder is reset by
  // the partition before a record is copied, and claims leave a byte free; a record coded
  // against a buffer it does not start in would decode against the next buffer's base.
  assert(target.writable() > 0);
  header_pending_ = false;
  header_position_ = 0;
  if (!stamped_) {
    write_header(static_cast<std::uint32_t>(rest_.size()), header_.data());
    header_size_ = 4;
    return;
  }
  auto code = stamp_code(timestamp_, target.timestamp_base());
  target.set_timestamp_base(timestamp_);
  auto n = stamp_size(code);
  write_header(static_cast<std::uint32_t>(rest_.size() + n) | timestamp_flag, header_.data());
  write_stamp(code, header_.data() + 4);
  header_size_ = 4 + n;
}

serialization_result record_serializer::copy_to(buffer_builder& target) {
  // The record starts in `target`: a timestamp is coded against this buffer's base.
  if (header_pending_)
    encode_header(target);
  if (header_position_ == 0 && target.writable() >= header_size_ + rest_.size()) {
    // The common case: the whole frame fits. One claim, a short header copy, one memcpy.
    char* at = target.claim(header_size_ + rest_.size());
    std::memcpy(at, header_.data(), header_size_);
    if (!rest_.empty())
      std::memcpy(at + header_size_, rest_.data(), rest_.size());
    header_position_ = header_size_;
    rest_ = {};
    return target.is_full() ? serialization_result::full_record_buffer_full
                            : serialization_result::full_record;
  }
  if (header_position_ < header_size_)
    header_position_ += target.append(
      std::span<const char>{header_.data() + header_position_, header_size_ - header_position_});
  if (header_position_ == header_size_ && !rest_.empty())
    rest_ = rest_.subspan(target.append(rest_));
  if (has_pending())
    return serialization_result::partial_record_buffer_full;
  return target.is_full() ? serialization_result::full_record_buffer_full
                          : serialization_result::full_record;
}

void record_serializer::keep_remaining() {
  if (rest_.empty()
      || (!kept_.empty() && rest_.data() >= kept_.data()
          && rest_.data() < kept_.data() + kept_.size()))
    return;
  std::vector<char> copy(rest_.begin(), rest_.end());
  kept_.swap(copy);
  rest_ = std::span<const char>{kept_};
}

} // namespace flint::network
