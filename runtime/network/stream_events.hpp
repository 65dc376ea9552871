#pragma once
/// The stream's time events (Flink's Watermark and WatermarkStatus as StreamElements): they
/// travel in the buffers' stream behind the records before them, as buffers of kind `watermark`
/// (8 payload bytes: the timestamp, little-endian) and `watermark_status` (1 byte: 1 idle,
/// 0 active).

#include "runtime/network/buffer.hpp"

#include <cstdint>
#include <optional>

namespace flint::network {

/// The watermark as an unpooled event buffer.
buffer to_watermark_event(std::int64_t watermark);
/// The watermark an event buffer carries; nullopt for another kind or a payload of another size
/// (a broken peer).
std::optional<std::int64_t> watermark_of(const buffer& event);

/// The status as an unpooled event buffer.
buffer to_watermark_status_event(bool idle);
/// Whether an event buffer says idle (true) or active (false); nullopt for another kind or size.
std::optional<bool> watermark_status_of(const buffer& event);

/// The end of a producer's data (Flink's EndOfData): `drained` false when it stopped with a
/// savepoint without draining, so its consumers must not run event time to the end.
buffer to_end_of_data_event(bool drained);
/// Whether an end-of-data event says drained; nullopt for another kind or size.
std::optional<bool> end_of_data_of(const buffer& event);

} // namespace flint::network
