#include "runtime/network/record_serializer.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

namespace flint::network {

void record_serializer::set_record(std::span<const char> record, bool timestamped) {
  if (has_pending())
    throw std::logic_error("record_serializer: the previous record is not complete");
  if (record.size() > std::numeric_limits<std::int32_t>::max() >> 1)
    throw std::length_error("record_serializer: a record is limited to 1 GiB (the length's top bit tags timestamps)");
  auto size = static_cast<std::uint32_t>(record.size()) | (timestamped ? timestamp_flag : 0u);
  header_[0] = static_cast<char>((size >> 24) & 0xff);
  header_[1] = static_cast<char>((size >> 16) & 0xff);
  header_[2] = static_cast<char>((size >> 8) & 0xff);
  header_[3] = static_cast<char>(size & 0xff);
  header_position_ = 0;
  rest_ = record;
  kept_.clear();
}

serialization_result record_serializer::copy_to(buffer_builder& target) {
  if (header_position_ == 0 && target.writable() >= header_.size() + rest_.size()) {
    // The common case: the whole frame fits. One claim, a fixed-size header copy, one memcpy.
    char* at = target.claim(header_.size() + rest_.size());
    std::memcpy(at, header_.data(), 4);
    if (!rest_.empty())
      std::memcpy(at + 4, rest_.data(), rest_.size());
    header_position_ = header_.size();
    rest_ = {};
    return target.is_full() ? serialization_result::full_record_buffer_full
                            : serialization_result::full_record;
  }
  if (header_position_ < header_.size())
    header_position_ += target.append(std::span<const char>{header_}.subspan(header_position_));
  if (header_position_ == header_.size() && !rest_.empty())
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
