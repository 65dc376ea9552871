#include "runtime/network/network_config.hpp"

#include "runtime/config/file_path.hpp"

#include <cctype>
#include <cstdint>
#include <string_view>
#include <utility>

namespace flint::network {
namespace {

/// Splits "64 mb" into 64 and "mb" (lower-case, spaces dropped).
bool split_number(std::string_view text, std::uint64_t& number, std::string& unit) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
    ++i;
  std::size_t digits = 0;
  number = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
    if (number > (UINT64_MAX - 9) / 10)
      return false;
    number = number * 10 + static_cast<std::uint64_t>(text[i] - '0');
  }
  if (digits == 0)
    return false;
  unit.clear();
  for (; i < text.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(text[i])))
      unit.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text[i]))));
  return true;
}

/// Flink's MemorySize syntax: bytes by default, b/k/kb/m/mb/g/gb (binary multiples).
expected<std::size_t> parse_memory(const std::string& key, const std::string& text) {
  std::uint64_t number = 0;
  std::string unit;
  if (split_number(text, number, unit)) {
    std::uint64_t factor = 0;
    if (unit.empty() || unit == "b" || unit == "bytes")
      factor = 1;
    else if (unit == "k" || unit == "kb" || unit == "kibibytes")
      factor = 1024;
    else if (unit == "m" || unit == "mb" || unit == "mebibytes")
      factor = 1024 * 1024;
    else if (unit == "g" || unit == "gb" || unit == "gibibytes")
      factor = 1024ULL * 1024 * 1024;
    if (factor != 0)
      return static_cast<std::size_t>(number * factor);
  }
  return make_error(errc::invalid_argument, key + ": not a memory size: '" + text + "'");
}

/// Flink's Duration syntax: milliseconds by default, ms/s/min.
expected<std::chrono::milliseconds> parse_duration(const std::string& key,
                                                   const std::string& text) {
  std::uint64_t number = 0;
  std::string unit;
  if (split_number(text, number, unit)) {
    if (unit.empty() || unit == "ms" || unit == "milli" || unit == "millis")
      return std::chrono::milliseconds(number);
    if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds")
      return std::chrono::milliseconds(number * 1000);
    if (unit == "min" || unit == "m" || unit == "minute" || unit == "minutes")
      return std::chrono::milliseconds(number * 60 * 1000);
  }
  return make_error(errc::invalid_argument, key + ": not a duration: '" + text + "'");
}

expected<std::size_t> parse_count(const std::string& key, const std::string& text) {
  std::uint64_t number = 0;
  std::string unit;
  if (split_number(text, number, unit) && unit.empty())
    return static_cast<std::size_t>(number);
  return make_error(errc::invalid_argument, key + ": not a count: '" + text + "'");
}

} // namespace

expected<network_config> network_config::from_map(
  const std::map<std::string, std::string>& values) {
  network_config config;
  auto find = [&](const char* key) -> const std::string* {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  };
  if (auto* text = find("taskmanager.memory.segment-size")) {
    auto size = parse_memory("taskmanager.memory.segment-size", *text);
    if (!size)
      return size.error();
    // The length prefix of a record must fit into one buffer.
    if (*size < 64)
      return make_error(errc::invalid_argument,
                        "taskmanager.memory.segment-size must be at least 64 bytes");
    config.segment_size = *size;
  }
  if (auto* text = find("taskmanager.memory.network.max")) {
    auto size = parse_memory("taskmanager.memory.network.max", *text);
    if (!size)
      return size.error();
    config.network_memory = *size;
  }
  if (auto* text = find("taskmanager.network.memory.buffers-per-channel")) {
    auto count = parse_count("taskmanager.network.memory.buffers-per-channel", *text);
    if (!count)
      return count.error();
    config.buffers_per_channel = *count;
  }
  if (auto* text = find("taskmanager.network.memory.floating-buffers-per-gate")) {
    auto count = parse_count("taskmanager.network.memory.floating-buffers-per-gate", *text);
    if (!count)
      return count.error();
    config.floating_buffers_per_gate = *count;
  }
  if (auto* text = find("execution.buffer-timeout")) {
    auto timeout = parse_duration("execution.buffer-timeout", *text);
    if (!timeout)
      return timeout.error();
    config.buffer_timeout = *timeout;
  }
  for (auto [key, field] :
       {std::pair{"taskmanager.network.request-backoff.initial", &config.request_backoff_initial},
        std::pair{"taskmanager.network.request-backoff.max", &config.request_backoff_max}}) {
    if (auto* text = find(key)) {
      auto delay = parse_duration(key, *text);
      if (!delay)
        return delay.error();
      *field = *delay;
    }
  }
  if (auto* text = find("io.tmp.dirs")) {
    auto dirs = config::parse_path_list(*text);
    if (!dirs)
      return make_error(errc::invalid_argument, "io.tmp.dirs: " + dirs.error().message);
    config.tmp_dirs.clear();
    for (const auto& dir : *dirs)
      config.tmp_dirs.push_back(dir.string());
  }
  if (auto* text = find("taskmanager.network.blocking-shuffle.memory-budget")) {
    auto size = parse_memory("taskmanager.network.blocking-shuffle.memory-budget", *text);
    if (!size)
      return size.error();
    config.blocking_shuffle_memory = *size;
  }
  if (config.request_backoff_max < config.request_backoff_initial)
    return make_error(
      errc::invalid_argument,
      "taskmanager.network.request-backoff.max is below taskmanager.network.request-backoff.initial");
  if (config.num_segments() == 0)
    return make_error(
      errc::invalid_argument,
      "taskmanager.memory.network.max is smaller than one segment of taskmanager.memory.segment-size");
  return config;
}

} // namespace flint::network
