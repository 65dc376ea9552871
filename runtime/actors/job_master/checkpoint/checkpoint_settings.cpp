#include "runtime/actors/job_master/checkpoint/checkpoint_settings.hpp"

#include <algorithm>
#include <cctype>

namespace flint::job_master::checkpoint {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
    return c == '-' ? '_' : static_cast<char>(std::toupper(c));
  });
  return s;
}

error bad(std::string_view key, const std::string& why) {
  return make_error(errc::invalid_argument, std::string(key) + ": " + why);
}

/// A duration key, or `fallback` when unset; must be at least `least`.
expected<milliseconds> read_duration(const config::configuration& config, std::string_view key,
                                     milliseconds fallback, milliseconds least) {
  if (!config.get_raw(key))
    return fallback;
  auto parsed = config.get_duration(key);
  if (!parsed)
    return parsed.error();
  auto ms = duration_cast<milliseconds>(*parsed);
  if (ms < least)
    return bad(key, "must be at least " + std::to_string(least.count()) + " ms");
  return ms;
}

expected<std::int32_t> read_int(const config::configuration& config, std::string_view key,
                                std::int32_t fallback, std::int32_t least) {
  if (!config.get_raw(key))
    return fallback;
  auto parsed = config.get_int(key);
  if (!parsed)
    return parsed.error();
  if (*parsed < least || *parsed > INT32_MAX)
    return bad(key, "must be at least " + std::to_string(least));
  return static_cast<std::int32_t>(*parsed);
}

} // namespace

const char* to_string(checkpointing_mode m) {
  return m == checkpointing_mode::exactly_once ? "EXACTLY_ONCE" : "AT_LEAST_ONCE";
}

const char* to_string(externalized_retention r) {
  switch (r) {
    case externalized_retention::no_externalized_checkpoints: return "NO_EXTERNALIZED_CHECKPOINTS";
    case externalized_retention::delete_on_cancellation: return "DELETE_ON_CANCELLATION";
    case externalized_retention::retain_on_cancellation: return "RETAIN_ON_CANCELLATION";
  }
  return "?";
}

expected<checkpoint_settings> make_checkpoint_settings(const config::configuration& config,
                                                       std::int64_t interval_ms) {
  checkpoint_settings s;
  if (interval_ms > 0) {
    s.interval = milliseconds(interval_ms);
  } else {
    auto interval =
      read_duration(config, "execution.checkpointing.interval", milliseconds(0), milliseconds(0));
    if (!interval)
      return interval.error();
    s.interval = *interval;
  }
  // Flink refuses intervals and time-outs under its minimal checkpoint time (10 ms).
  constexpr milliseconds minimal(10);
  if (s.interval.count() != 0 && s.interval < minimal)
    return bad("execution.checkpointing.interval", "must be at least 10 ms");
  auto timeout = read_duration(config, "execution.checkpointing.timeout", s.timeout, minimal);
  if (!timeout)
    return timeout.error();
  s.timeout = *timeout;
  auto pause =
    read_duration(config, "execution.checkpointing.min-pause", s.min_pause, milliseconds(0));
  if (!pause)
    return pause.error();
  s.min_pause = *pause;
  auto concurrent =
    read_int(config, "execution.checkpointing.max-concurrent-checkpoints", s.max_concurrent, 1);
  if (!concurrent)
    return concurrent.error();
  s.max_concurrent = *concurrent;
  auto tolerable = read_int(config, "execution.checkpointing.tolerable-failed-checkpoints",
                            s.tolerable_failures, 0);
  if (!tolerable)
    return tolerable.error();
  s.tolerable_failures = *tolerable;
  auto retained = read_int(config, "state.checkpoints.num-retained", s.num_retained, 1);
  if (!retained)
    return retained.error();
  s.num_retained = *retained;
  if (auto mode = config.get_raw("execution.checkpointing.mode")) {
    auto m = upper(*mode);
    if (m == "EXACTLY_ONCE")
      s.mode = checkpointing_mode::exactly_once;
    else if (m == "AT_LEAST_ONCE")
      s.mode = checkpointing_mode::at_least_once;
    else
      return bad("execution.checkpointing.mode",
                 "'" + *mode + "' is neither EXACTLY_ONCE nor AT_LEAST_ONCE");
  }
  if (auto retention =
        config.get_raw("execution.checkpointing.externalized-checkpoint-retention")) {
    auto r = upper(*retention);
    if (r == "NO_EXTERNALIZED_CHECKPOINTS")
      s.retention = externalized_retention::no_externalized_checkpoints;
    else if (r == "DELETE_ON_CANCELLATION")
      s.retention = externalized_retention::delete_on_cancellation;
    else if (r == "RETAIN_ON_CANCELLATION")
      s.retention = externalized_retention::retain_on_cancellation;
    else
      return bad("execution.checkpointing.externalized-checkpoint-retention",
                 "'" + *retention
                   + "' is none of NO_EXTERNALIZED_CHECKPOINTS, DELETE_ON_CANCELLATION, "
                     "RETAIN_ON_CANCELLATION");
  }
  return s;
}

} // namespace flint::job_master::checkpoint
