#pragma once
/// The time an ask's deadline counts from (rpc_endpoint::expire_ask_after), read cheaply.
///
/// CAF's real clock reads steady_clock on every ask: a vDSO call of ~22 ns on this project's VMs,
/// on the caller's path. A deadline (seconds away) needs no better than milliseconds, so for CAF's
/// real clock and a wait of at least `coarse_from` the coarse monotonic clock is read instead (the
/// same clock as steady_clock, advanced once per kernel tick; a few ns), plus four ticks, so a
/// deadline is at most four ticks (16 ms at HZ 250) later than asked. The coarse clock can lag more
/// than that when the timekeeping CPU is descheduled (a VM's steal time), so a deadline could come
/// a few ms early: harmless for a wait of a second or more (Flink's ask timeouts are seconds), and
/// a shorter wait reads the exact clock. Any other clock (the test coordinator's manual one) is
/// asked as before, so tests keep exact deadlines.

#include <chrono>

#include <caf/actor_clock.hpp>

namespace flint::rpc::detail {

struct ask_clock_reading {
  /// Never earlier than `clock.now()` at the call.
  caf::actor_clock::time_point now;
  /// How much earlier than `now` the clock's now() may have been (0 when read exactly): a timer
  /// armed for `deadline - now + lag` from the call does not fire before the deadline.
  std::chrono::nanoseconds lag{0};
};

/// Asks waiting less than this read the exact clock.
inline constexpr std::chrono::seconds coarse_from{1};

ask_clock_reading read_ask_clock(const caf::actor_clock& clock, std::chrono::nanoseconds wait);

} // namespace flint::rpc::detail
