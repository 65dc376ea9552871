#include "runtime/actors/heartbeat/heartbeat_config.hpp"

#include <charconv>

namespace flint::heartbeat {

namespace {

std::string ms(std::chrono::milliseconds d) {
  return std::to_string(d.count()) + " ms";
}

expected<long long> parse_integer(const std::string& key, const std::string& text) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size())
    return make_error(errc::invalid_argument, key + ": '" + text + "' is not an integer");
  return value;
}

} // namespace

expected<unit> heartbeat_config::validate() const {
  if (interval.count() <= 0)
    return make_error(errc::invalid_argument,
                      std::string(interval_key) + " must be positive, got " + ms(interval));
  if (timeout.count() <= 0)
    return make_error(errc::invalid_argument,
                      std::string(timeout_key) + " must be positive, got " + ms(timeout));
  if (timeout <= interval)
    return make_error(errc::invalid_argument,
                      std::string(timeout_key) + " (" + ms(timeout) + ") must be larger than "
                        + interval_key + " (" + ms(interval) + ")");
  if (rpc_failure_threshold <= 0 && rpc_failure_threshold != -1)
    return make_error(errc::invalid_argument,
                      std::string(rpc_failure_threshold_key)
                        + " must be positive or -1 (disabled), got "
                        + std::to_string(rpc_failure_threshold));
  return unit{};
}

expected<heartbeat_config> heartbeat_config::from_settings(
  const std::map<std::string, std::string>& settings) {
  heartbeat_config config;
  if (auto i = settings.find(interval_key); i != settings.end()) {
    auto v = parse_integer(i->first, i->second);
    if (!v)
      return v.error();
    config.interval = std::chrono::milliseconds(*v);
  }
  if (auto i = settings.find(timeout_key); i != settings.end()) {
    auto v = parse_integer(i->first, i->second);
    if (!v)
      return v.error();
    config.timeout = std::chrono::milliseconds(*v);
  }
  if (auto i = settings.find(rpc_failure_threshold_key); i != settings.end()) {
    auto v = parse_integer(i->first, i->second);
    if (!v)
      return v.error();
    if (*v < -1 || *v > 1'000'000)
      return make_error(errc::invalid_argument,
                        std::string(rpc_failure_threshold_key) + " out of range: " + i->second);
    config.rpc_failure_threshold = static_cast<int>(*v);
  }
  if (auto ok = config.validate(); !ok)
    return ok.error();
  return config;
}

} // namespace flint::heartbeat
