#include "runtime/network/stream_events.hpp"

#include "runtime/network/record_serializer.hpp"

#include <array>

namespace flint::network {

buffer to_watermark_event(std::int64_t watermark) {
  std::array<char, 8> bytes{};
  record_serializer::write_timestamp(watermark, bytes.data());
  return buffer::unpooled_copy(bytes, buffer_kind::watermark);
}

std::optional<std::int64_t> watermark_of(const buffer& event) {
  if (event.kind() != buffer_kind::watermark || event.size() != 8)
    return std::nullopt;
  return record_serializer::read_timestamp(event.data());
}

buffer to_watermark_status_event(bool idle) {
  std::array<char, 1> bytes{static_cast<char>(idle ? 1 : 0)};
  return buffer::unpooled_copy(bytes, buffer_kind::watermark_status);
}

std::optional<bool> watermark_status_of(const buffer& event) {
  if (event.kind() != buffer_kind::watermark_status || event.size() != 1
      || static_cast<unsigned char>(event.data()[0]) > 1)
    return std::nullopt;
  return event.data()[0] == 1;
}

buffer to_end_of_data_event(bool drained) {
  std::array<char, 1> bytes{static_cast<char>(drained ? 1 : 0)};
  return buffer::unpooled_copy(bytes, buffer_kind::end_of_data);
}

std::optional<bool> end_of_data_of(const buffer& event) {
  if (event.kind() != buffer_kind::end_of_data || event.size() != 1
      || static_cast<unsigned char>(event.data()[0]) > 1)
    return std::nullopt;
  return event.data()[0] == 1;
}

} // namespace flint::network
