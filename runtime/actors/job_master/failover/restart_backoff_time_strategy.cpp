#include "runtime/actors/job_master/failover/restart_backoff_time_strategy.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <random>
#include <string_view>

namespace flint::job_master::failover {

namespace {

using std::chrono::milliseconds;

std::int64_t to_ms(std::chrono::nanoseconds t) {
  return std::chrono::duration_cast<milliseconds>(t).count();
}

/// Java's Double.toString for the values a configuration holds: "2.0", "1.5", "0.1".
std::string java_double(double v) {
  std::array<char, 64> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  std::string out(buf.data(), end);
  if (out.find_first_of(".en") == std::string::npos)
    out += ".0";
  return out;
}

} // namespace

// -- none ----------------------------------------------------------------------------------------

bool no_restart_backoff_time_strategy::notify_failure(std::chrono::nanoseconds) {
  return true;
}

bool no_restart_backoff_time_strategy::can_restart() const {
  return false;
}

milliseconds no_restart_backoff_time_strategy::backoff_time() const {
  return milliseconds{0};
}

std::string no_restart_backoff_time_strategy::description() const {
  return "NoRestartBackoffTimeStrategy";
}

// -- fixed delay ---------------------------------------------------------------------------------

fixed_delay_restart_backoff_time_strategy::fixed_delay_restart_backoff_time_strategy(
  std::int32_t max_attempts, milliseconds backoff)
  : max_attempts_(max_attempts),
    backoff_(backoff) {}

bool fixed_delay_restart_backoff_time_strategy::notify_failure(std::chrono::nanoseconds) {
  ++attempt_;
  return true;
}

bool fixed_delay_restart_backoff_time_strategy::can_restart() const {
  return attempt_ <= max_attempts_;
}

milliseconds fixed_delay_restart_backoff_time_strategy::backoff_time() const {
  return backoff_;
}

std::string fixed_delay_restart_backoff_time_strategy::description() const {
  return "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts="
    + std::to_string(max_attempts_) + ", backoffTimeMS=" + std::to_string(backoff_.count()) + ")";
}

// -- failure rate --------------------------------------------------------------------------------

failure_rate_restart_backoff_time_strategy::failure_rate_restart_backoff_time_strategy(
  std::int32_t max_failures_per_interval, milliseconds failures_interval, milliseconds backoff)
  : max_failures_(max_failures_per_interval),
    interval_(failures_interval),
    backoff_(backoff) {}

bool failure_rate_restart_backoff_time_strategy::notify_failure(std::chrono::nanoseconds now) {
  now_ = to_ms(now);
  // One more than the limit is kept: the oldest of them tells whether the limit was exceeded
  // within one interval (FLINK-20752 fixed the off-by-one of keeping only the limit).
  if (failures_.size() > static_cast<std::size_t>(max_failures_))
    failures_.pop_front();
  failures_.push_back(now_);
  return true;
}

bool failure_rate_restart_backoff_time_strategy::can_restart() const {
  if (failures_.size() <= static_cast<std::size_t>(max_failures_))
    return true;
  return now_ - failures_.front() > interval_.count();
}

milliseconds failure_rate_restart_backoff_time_strategy::backoff_time() const {
  return backoff_;
}

std::string failure_rate_restart_backoff_time_strategy::description() const {
  // Flink repeats the class name inside the parentheses; that slip is not kept.
  return "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS="
    + std::to_string(interval_.count()) + ",backoffTimeMS=" + std::to_string(backoff_.count())
    + ",maxFailuresPerInterval=" + std::to_string(max_failures_) + ")";
}

// -- exponential delay ---------------------------------------------------------------------------

exponential_delay_restart_backoff_time_strategy::exponential_delay_restart_backoff_time_strategy(
  exponential_delay_options options, random_source random)
  : options_(options),
    random_(std::move(random)) {
  if (!random_) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    random_ = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }
}

bool exponential_delay_restart_backoff_time_strategy::notify_failure(std::chrono::nanoseconds now) {
  now_ = to_ms(now);
  // Tasks failing together (a lost TaskManager) make one attempt, not one per task.
  if (next_restart_ && now_ <= *next_restart_)
    return false;
  if (!next_restart_ || now_ - *next_restart_ >= options_.reset_backoff_threshold.count())
    attempt_ = 0;
  next_restart_ = now_ + next_backoff_ms();
  ++attempt_;
  return true;
}

bool exponential_delay_restart_backoff_time_strategy::can_restart() const {
  return attempt_ <= options_.attempts_before_reset_backoff;
}

milliseconds exponential_delay_restart_backoff_time_strategy::backoff_time() const {
  if (!next_restart_)
    return milliseconds{0};
  return milliseconds{std::max<std::int64_t>(0, *next_restart_ - now_)};
}

std::int64_t exponential_delay_restart_backoff_time_strategy::next_backoff_ms() {
  const auto initial = options_.initial_backoff.count();
  const auto max = options_.max_backoff.count();
  // Bounded so that the jitter range below cannot overflow; far beyond any max_backoff, so the
  // result is the same as Flink's unbounded value.
  constexpr double limit = static_cast<double>(std::int64_t{1} << 60);
  double grown = static_cast<double>(initial) * std::pow(options_.backoff_multiplier, attempt_);
  auto current = static_cast<std::int64_t>(std::min(grown, limit));
  std::int64_t jitter = 0;
  if (options_.jitter_factor != 0) {
    // Uniform over [-offset, offset], as Flink's nextLong(-offset, offset + 1).
    auto offset = static_cast<std::int64_t>(static_cast<double>(current) * options_.jitter_factor);
    auto span = static_cast<double>(2 * offset + 1);
    auto step = static_cast<std::int64_t>(std::floor(random_() * span));
    jitter = std::clamp<std::int64_t>(step, 0, 2 * offset) - offset;
  }
  return std::max(initial, std::min(current + jitter, max));
}

std::string exponential_delay_restart_backoff_time_strategy::description() const {
  // Flink prints Integer.MIN_VALUE before the first failure.
  auto next = next_restart_ ? *next_restart_ : std::numeric_limits<std::int32_t>::min();
  return "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS="
    + std::to_string(options_.initial_backoff.count())
    + ", maxBackoffMS=" + std::to_string(options_.max_backoff.count())
    + ", backoffMultiplier=" + java_double(options_.backoff_multiplier)
    + ", resetBackoffThresholdMS=" + std::to_string(options_.reset_backoff_threshold.count())
    + ", jitterFactor=" + java_double(options_.jitter_factor) + ", attemptsBeforeResetBackoff="
    + std::to_string(options_.attempts_before_reset_backoff) + ", currentRestartAttempt="
    + std::to_string(attempt_) + ", nextRestartTimestamp=" + std::to_string(next) + ")";
}

// -- loader --------------------------------------------------------------------------------------

namespace {

// Flink's RestartStrategyOptions keys.
constexpr std::string_view type_key = "restart-strategy.type";
constexpr std::string_view legacy_type_key = "restart-strategy";
constexpr std::string_view fixed_delay_attempts_key = "restart-strategy.fixed-delay.attempts";
constexpr std::string_view fixed_delay_delay_key = "restart-strategy.fixed-delay.delay";
constexpr std::string_view failure_rate_max_failures_key =
  "restart-strategy.failure-rate.max-failures-per-interval";
constexpr std::string_view failure_rate_interval_key =
  "restart-strategy.failure-rate.failure-rate-interval";
constexpr std::string_view failure_rate_delay_key = "restart-strategy.failure-rate.delay";
constexpr std::string_view exponential_initial_key =
  "restart-strategy.exponential-delay.initial-backoff";
constexpr std::string_view exponential_max_key = "restart-strategy.exponential-delay.max-backoff";
constexpr std::string_view exponential_multiplier_key =
  "restart-strategy.exponential-delay.backoff-multiplier";
constexpr std::string_view exponential_threshold_key =
  "restart-strategy.exponential-delay.reset-backoff-threshold";
constexpr std::string_view exponential_jitter_key =
  "restart-strategy.exponential-delay.jitter-factor";
constexpr std::string_view exponential_attempts_key =
  "restart-strategy.exponential-delay.attempts-before-reset-backoff";

using strategy_ptr = std::unique_ptr<restart_backoff_time_strategy>;

using config::lower;
using config::trim;

/// Worded as configuration's own errors, for the checks it cannot express.
error invalid(const config::configuration& config, std::string_view key, std::string_view value,
              std::string_view problem) {
  std::string message =
    "invalid value '" + std::string(value) + "' for configuration key '" + std::string(key) + "'";
  if (auto from = config.origin(key); !from.empty())
    message += " (set in " + from + ")";
  message += ": ";
  message += problem;
  return make_error(errc::invalid_argument, std::move(message));
}

/// Flink's int options are 32-bit.
expected<std::int32_t> read_int(const config::configuration& config, std::string_view key,
                                std::int32_t fallback, std::int32_t minimum) {
  auto raw = config.get_raw(key);
  if (!raw)
    return fallback;
  auto parsed = config::parse_int(*raw);
  if (!parsed)
    return invalid(config, key, *raw, parsed.error().message);
  if (*parsed > std::numeric_limits<std::int32_t>::max()
      || *parsed < std::numeric_limits<std::int32_t>::min())
    return invalid(config, key, *raw, "the number does not fit 32 bits");
  if (*parsed < minimum)
    return invalid(config, key, *raw, "must be at least " + std::to_string(minimum));
  return static_cast<std::int32_t>(*parsed);
}

/// Truncated to milliseconds, as Flink's Duration.toMillis().
expected<milliseconds> read_duration(const config::configuration& config, std::string_view key,
                                     milliseconds fallback, milliseconds minimum) {
  auto raw = config.get_raw(key);
  if (!raw)
    return fallback;
  auto parsed = config.get_duration(key);
  if (!parsed)
    return parsed.error();
  auto ms = std::chrono::duration_cast<milliseconds>(*parsed);
  if (ms < minimum)
    return invalid(config, key, *raw, "must be at least " + config::format_duration(minimum));
  return ms;
}

/// Java's Double.parseDouble for plain numbers; NaN and infinities are refused.
expected<double> read_double(const config::configuration& config, std::string_view key,
                             double fallback) {
  auto raw = config.get_raw(key);
  if (!raw)
    return fallback;
  auto s = trim(*raw);
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v))
    return invalid(config, key, *raw, "expected a number such as '1.5'");
  return v;
}

expected<strategy_ptr> make_fixed_delay(const config::configuration& config) {
  auto attempts = read_int(config, fixed_delay_attempts_key, 1, 0);
  if (!attempts)
    return attempts.error();
  auto delay = read_duration(config, fixed_delay_delay_key, milliseconds{1000}, milliseconds{0});
  if (!delay)
    return delay.error();
  return strategy_ptr{
    std::make_unique<fixed_delay_restart_backoff_time_strategy>(*attempts, *delay)};
}

expected<strategy_ptr> make_failure_rate(const config::configuration& config) {
  auto max_failures = read_int(config, failure_rate_max_failures_key, 1, 1);
  if (!max_failures)
    return max_failures.error();
  auto interval =
    read_duration(config, failure_rate_interval_key, milliseconds{60'000}, milliseconds{1});
  if (!interval)
    return interval.error();
  auto delay = read_duration(config, failure_rate_delay_key, milliseconds{1000}, milliseconds{0});
  if (!delay)
    return delay.error();
  return strategy_ptr{
    std::make_unique<failure_rate_restart_backoff_time_strategy>(*max_failures, *interval, *delay)};
}

expected<strategy_ptr> make_exponential_delay(const config::configuration& config,
                                              std::function<double()> random) {
  const exponential_delay_options defaults;
  exponential_delay_options o;
  auto initial =
    read_duration(config, exponential_initial_key, defaults.initial_backoff, milliseconds{1});
  if (!initial)
    return initial.error();
  o.initial_backoff = *initial;
  auto max = read_duration(config, exponential_max_key, defaults.max_backoff, milliseconds{1});
  if (!max)
    return max.error();
  o.max_backoff = *max;
  if (o.initial_backoff > o.max_backoff)
    return make_error(errc::invalid_argument,
                      std::string(exponential_initial_key) + " ("
                        + config::format_duration(o.initial_backoff) + ") must not exceed "
                        + std::string(exponential_max_key) + " ("
                        + config::format_duration(o.max_backoff) + ")");
  auto multiplier = read_double(config, exponential_multiplier_key, defaults.backoff_multiplier);
  if (!multiplier)
    return multiplier.error();
  if (!(*multiplier > 1))
    return invalid(config, exponential_multiplier_key, *config.get_raw(exponential_multiplier_key),
                   "the backoff multiplier must be greater than 1");
  o.backoff_multiplier = *multiplier;
  auto threshold = read_duration(config, exponential_threshold_key,
                                 defaults.reset_backoff_threshold, milliseconds{1});
  if (!threshold)
    return threshold.error();
  o.reset_backoff_threshold = *threshold;
  auto jitter = read_double(config, exponential_jitter_key, defaults.jitter_factor);
  if (!jitter)
    return jitter.error();
  if (*jitter < 0 || *jitter > 1)
    return invalid(config, exponential_jitter_key, *config.get_raw(exponential_jitter_key),
                   "the jitter factor must be between 0 and 1");
  o.jitter_factor = *jitter;
  auto attempts =
    read_int(config, exponential_attempts_key, defaults.attempts_before_reset_backoff, 1);
  if (!attempts)
    return attempts.error();
  o.attempts_before_reset_backoff = *attempts;
  return strategy_ptr{
    std::make_unique<exponential_delay_restart_backoff_time_strategy>(o, std::move(random))};
}

} // namespace

expected<std::unique_ptr<restart_backoff_time_strategy>> make_restart_backoff_time_strategy(
  const config::configuration& config, bool checkpointing_enabled, std::function<double()> random) {
  // Flink reads the older key only when the new one is unset (withDeprecatedKeys).
  std::string_view key = type_key;
  auto raw = config.get_raw(type_key);
  if (!raw) {
    key = legacy_type_key;
    raw = config.get_raw(legacy_type_key);
  }
  if (!raw) {
    // Flink 1.19 defaults to exponential-delay here; Flint keeps the earlier fixed-delay default.
    if (checkpointing_enabled)
      return strategy_ptr{std::make_unique<fixed_delay_restart_backoff_time_strategy>(
        std::numeric_limits<std::int32_t>::max(), milliseconds{1000})};
    return strategy_ptr{std::make_unique<no_restart_backoff_time_strategy>()};
  }
  auto type = lower(trim(*raw));
  if (type == "none" || type == "off" || type == "disable")
    return strategy_ptr{std::make_unique<no_restart_backoff_time_strategy>()};
  if (type == "fixed-delay" || type == "fixeddelay")
    return make_fixed_delay(config);
  if (type == "failure-rate" || type == "failurerate")
    return make_failure_rate(config);
  if (type == "exponential-delay" || type == "exponentialdelay")
    return make_exponential_delay(config, std::move(random));
  std::string message = "Unknown restart strategy '" + *raw + "' in " + std::string(key);
  if (auto from = config.origin(key); !from.empty())
    message += " (set in " + from + ")";
  message +=
    "; use none, off, disable, fixed-delay, fixeddelay, failure-rate, failurerate, "
    "exponential-delay or exponentialdelay";
  return make_error(errc::invalid_argument, std::move(message));
}

} // namespace flint::job_master::failover
