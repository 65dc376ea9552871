#pragma once
/// A task's input watermark over all its input channels (Flink's StatusWatermarkValve): the
/// minimum of the watermarks of its active channels. An idle channel does not hold the watermark
/// back; when it turns active again it counts once its watermark caught up with the output (it
/// must not pull an emitted watermark back). When every channel is idle, the task's input is idle.
/// An ended channel counts as having reached the maximum watermark.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace flint::streaming {

class status_watermark_valve {
public:
  /// What an input event changed: a new input watermark and/or a new input status.
  struct output {
    std::optional<std::int64_t> watermark;
    /// true: the input went idle; false: it went active again.
    std::optional<bool> idle;
  };

  explicit status_watermark_valve(std::size_t channels);

  output on_watermark(std::size_t channel, std::int64_t watermark);
  output on_watermark_status(std::size_t channel, bool idle);
  /// The channel ended: its event time is over.
  output on_channel_ended(std::size_t channel);

  /// The last watermark the valve emitted (Flink's currentInputWatermark of the task).
  std::int64_t input_watermark() const noexcept { return last_output_; }
  bool idle() const noexcept { return all_idle_; }
  std::size_t num_channels() const noexcept { return channels_.size(); }
  /// The channel holding the watermark back: the aligned active channel with the smallest
  /// watermark (to explain a stuck window); none when every channel is idle.
  std::optional<std::size_t> holding_back() const;
  std::int64_t channel_watermark(std::size_t channel) const { return channels_.at(channel).watermark; }
  bool channel_idle(std::size_t channel) const { return channels_.at(channel).idle; }

private:
  struct channel_state {
    std::int64_t watermark;
    bool idle = false;
    /// Active and caught up with the output: it takes part in the minimum.
    bool aligned = true;
  };
  std::optional<std::int64_t> advance_to_min_of_aligned();
  std::optional<std::int64_t> advance_to_max_of_all();
  bool every_channel_idle() const;

  std::vector<channel_state> channels_;
  std::int64_t last_output_;
  bool all_idle_ = false;
};

} // namespace flint::streaming
