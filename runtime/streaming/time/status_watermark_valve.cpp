#include "runtime/streaming/time/status_watermark_valve.hpp"

#include "runtime/streaming/time/element_time.hpp"

#include <algorithm>

namespace flint::streaming {

status_watermark_valve::status_watermark_valve(std::size_t channels)
  : channels_(channels, channel_state{min_watermark}),
    last_output_(min_watermark) {}

bool status_watermark_valve::every_channel_idle() const {
  return std::all_of(channels_.begin(), channels_.end(), [](const auto& c) { return c.idle; });
}

std::optional<std::int64_t> status_watermark_valve::advance_to_min_of_aligned() {
  bool any = false;
  std::int64_t min = max_watermark;
  for (const auto& c : channels_)
    if (c.aligned) {
      any = true;
      min = std::min(min, c.watermark);
    }
  if (!any || min <= last_output_)
    return std::nullopt;
  last_output_ = min;
  return min;
}

std::optional<std::int64_t> status_watermark_valve::advance_to_max_of_all() {
  // Every channel went idle: what they all reached is safe to emit (Flink flushes it so windows
  // of an idle job still fire up to there).
  std::int64_t max = min_watermark;
  for (const auto& c : channels_)
    max = std::max(max, c.watermark);
  if (max <= last_output_)
    return std::nullopt;
  last_output_ = max;
  return max;
}

status_watermark_valve::output status_watermark_valve::on_watermark(std::size_t channel,
                                                                    std::int64_t watermark) {
  auto& c = channels_.at(channel);
  output out;
  if (c.idle || watermark <= c.watermark)
    return out;
  c.watermark = watermark;
  if (!c.aligned && watermark >= last_output_)
    c.aligned = true;
  out.watermark = advance_to_min_of_aligned();
  return out;
}

status_watermark_valve::output status_watermark_valve::on_watermark_status(std::size_t channel,
                                                                           bool idle) {
  auto& c = channels_.at(channel);
  output out;
  if (idle == c.idle)
    return out;
  if (idle) {
    c.idle = true;
    c.aligned = false;
    if (every_channel_idle()) {
      out.watermark = advance_to_max_of_all();
      all_idle_ = true;
      out.idle = true;
    } else {
      // It may have been the one holding the rest back.
      out.watermark = advance_to_min_of_aligned();
    }
    return out;
  }
  c.idle = false;
  c.aligned = c.watermark >= last_output_;
  if (all_idle_) {
    all_idle_ = false;
    out.idle = false;
  }
  return out;
}

status_watermark_valve::output status_watermark_valve::on_channel_ended(std::size_t channel) {
  auto& c = channels_.at(channel);
  output out;
  bool was_idle = c.idle;
  c.idle = false;
  c.watermark = max_watermark;
  c.aligned = true;
  if (all_idle_ && was_idle) {
    all_idle_ = false;
    out.idle = false;
  }
  out.watermark = advance_to_min_of_aligned();
  return out;
}

std::optional<std::size_t> status_watermark_valve::holding_back() const {
  std::optional<std::size_t> at;
  for (std::size_t i = 0; i < channels_.size(); ++i)
    if (channels_[i].aligned && (!at || channels_[i].watermark < channels_[*at].watermark))
      at = i;
  return at;
}

} // namespace flint::streaming
