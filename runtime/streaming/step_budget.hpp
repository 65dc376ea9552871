#pragma once
/// How long one mailbox step of a task may process records (Flink's mailbox gives mail a turn
/// between records). A step ends after a bounded count of records and after about `budget` of
/// time, whichever comes first, so a checkpoint trigger, a timer or a watermark waits about the
/// budget plus the records processed before the clock is next read: one record's processing while
/// records are dear, up to `max_stride` records' when cheap records turn dear at once (the stride
/// falls to 1 at the first slow interval; 64 records of 5 ms each would hold a 1 ms step 320 ms).
///
/// Reading the clock for every record would cost WordCount's cheapest records a fifth of their
/// time, so it is read every `stride` records: the stride doubles while checks come quickly (up to
/// 64: a sudden change from cheap to dear records is noticed within 64 of them; at 16 the clock
/// still took 2-3% of a WordCount record's CPU) and drops to 1 as soon as one interval took long,
/// so dear records are checked one by one.

#include <chrono>
#include <cstdint>

namespace flint::streaming {

class step_budget {
public:
  using clock = std::chrono::steady_clock;
  using clock_fn = clock::time_point (*)();

  /// The default budget: about a millisecond, as Flink's mailbox batches.
  static constexpr std::chrono::microseconds default_budget{1000};

  explicit step_budget(std::chrono::nanoseconds budget = default_budget,
                       clock_fn now = &clock::now) noexcept
    : budget_(budget),
      now_(now) {}

  /// A step begins.
  void start() noexcept {
    last_check_ = now_();
    deadline_ = last_check_ + budget_;
    countdown_ = stride_;
    expired_ = false;
  }

  /// Whether the step has used its time; called once per record.
  bool expired() noexcept {
    if (expired_)
      return true;
    if (--countdown_ > 0)
      return false;
    auto now = now_();
    auto since = now - last_check_;
    last_check_ = now;
    if (since < quick && stride_ < max_stride)
      stride_ *= 2;
    else if (since > slow)
      stride_ = 1;
    countdown_ = stride_;
    return expired_ = now >= deadline_;
  }

  std::uint32_t stride() const noexcept { return stride_; }

private:
  static constexpr std::chrono::microseconds quick{5};
  static constexpr std::chrono::microseconds slow{50};
  static constexpr std::uint32_t max_stride = 64;

  std::chrono::nanoseconds budget_;
  clock_fn now_;
  clock::time_point deadline_{};
  clock::time_point last_check_{};
  std::uint32_t stride_ = 1;
  std::uint32_t countdown_ = 1;
  bool expired_ = false;
};

} // namespace flint::streaming
