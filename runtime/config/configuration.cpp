#include "runtime/config/configuration.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <limits>

namespace flint::config {

std::string_view trim(std::string_view s) {
  auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_blank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back()))
    s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

namespace {

error bad(std::string message) {
  return make_error(errc::invalid_argument, std::move(message));
}

/// The leading decimal digits of `s` and the rest (the unit), both trimmed.
struct number_and_unit {
  std::uint64_t number = 0;
  std::string unit;
};

expected<number_and_unit> split_number(std::string_view text, const char* what) {
  auto s = trim(text);
  if (s.empty())
    return bad(std::string("empty ") + what);
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9')
    ++digits;
  if (digits == 0)
    return bad(std::string(what) + " must start with a non-negative whole number");
  number_and_unit out;
  auto [end, ec] = std::from_chars(s.data(), s.data() + digits, out.number);
  if (ec != std::errc{})
    return bad("the number does not fit 64 bits");
  out.unit = lower(trim(s.substr(digits)));
  return out;
}

struct unit_entry {
  const char* label;
  std::uint64_t factor;
};

constexpr std::uint64_t ns_per_us = 1000;
constexpr std::uint64_t ns_per_ms = 1000 * ns_per_us;
constexpr std::uint64_t ns_per_s = 1000 * ns_per_ms;
constexpr std::uint64_t ns_per_min = 60 * ns_per_s;
constexpr std::uint64_t ns_per_h = 60 * ns_per_min;
constexpr std::uint64_t ns_per_d = 24 * ns_per_h;

// Flink's TimeUtils.TimeUnit labels, singular and plural.
constexpr std::array duration_units{
  unit_entry{"d", ns_per_d},
  unit_entry{"day", ns_per_d},
  unit_entry{"days", ns_per_d},
  unit_entry{"h", ns_per_h},
  unit_entry{"hour", ns_per_h},
  unit_entry{"hours", ns_per_h},
  unit_entry{"min", ns_per_min},
  unit_entry{"m", ns_per_min},
  unit_entry{"mins", ns_per_min},
  unit_entry{"minute", ns_per_min},
  unit_entry{"minutes", ns_per_min},
  unit_entry{"s", ns_per_s},
  unit_entry{"sec", ns_per_s},
  unit_entry{"secs", ns_per_s},
  unit_entry{"second", ns_per_s},
  unit_entry{"seconds", ns_per_s},
  unit_entry{"ms", ns_per_ms},
  unit_entry{"milli", ns_per_ms},
  unit_entry{"millis", ns_per_ms},
  unit_entry{"millisecond", ns_per_ms},
  unit_entry{"milliseconds", ns_per_ms},
  unit_entry{"us", ns_per_us},
  unit_entry{"\xc2\xb5s", ns_per_us},
  unit_entry{"micro", ns_per_us},
  unit_entry{"micros", ns_per_us},
  unit_entry{"microsecond", ns_per_us},
  unit_entry{"microseconds", ns_per_us},
  unit_entry{"ns", 1},
  unit_entry{"nano", 1},
  unit_entry{"nanos", 1},
  unit_entry{"nanosecond", 1},
  unit_entry{"nanoseconds", 1},
};

constexpr std::uint64_t kib = 1024;
// Flink's MemorySize.MemoryUnit labels.
constexpr std::array memory_units{
  unit_entry{"b", 1},
  unit_entry{"bytes", 1},
  unit_entry{"k", kib},
  unit_entry{"kb", kib},
  unit_entry{"kibibytes", kib},
  unit_entry{"m", kib* kib},
  unit_entry{"mb", kib* kib},
  unit_entry{"mebibytes", kib* kib},
  unit_entry{"g", kib* kib* kib},
  unit_entry{"gb", kib* kib* kib},
  unit_entry{"gibibytes", kib* kib* kib},
  unit_entry{"t", kib* kib* kib* kib},
  unit_entry{"tb", kib* kib* kib* kib},
  unit_entry{"tebibytes", kib* kib* kib* kib},
};

template <std::size_t N>
std::optional<std::uint64_t> factor_of(const std::array<unit_entry, N>& units,
                                       const std::string& unit) {
  for (const auto& u : units)
    if (unit == u.label)
      return u.factor;
  return std::nullopt;
}

} // namespace

std::string host_port::to_string() const {
  if (host.find(':') != std::string::npos)
    return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

expected<std::int64_t> parse_int(std::string_view text) {
  auto s = trim(text);
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec == std::errc::invalid_argument || end != s.data() + s.size())
    return bad("expected a whole number");
  if (ec == std::errc::result_out_of_range)
    return bad("the number does not fit 64 bits");
  return v;
}

expected<bool> parse_bool(std::string_view text) {
  auto s = lower(trim(text));
  if (s == "true")
    return true;
  if (s == "false")
    return false;
  return bad("expected true or false");
}

expected<duration> parse_duration(std::string_view text) {
  auto parts = split_number(text, "a duration");
  if (!parts)
    return bad(parts.error().message + "; expected a duration such as '10 s', '100 ms' or "
               "'10000' (milliseconds)");
  std::uint64_t factor = ns_per_ms;
  if (!parts->unit.empty()) {
    auto f = factor_of(duration_units, parts->unit);
    if (!f)
      return bad("unknown time unit '" + parts->unit
                 + "'; use d, h, min, s, ms, us or ns (or their long names)");
    factor = *f;
  }
  constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (parts->number > max / factor)
    return bad("the duration is too long to represent");
  return duration(static_cast<std::int64_t>(parts->number * factor));
}

expected<memory_size> parse_memory_size(std::string_view text) {
  auto parts = split_number(text, "a memory size");
  if (!parts)
    return bad(parts.error().message + "; expected a memory size such as '32 kb', '64 mb' or "
               "'1024' (bytes)");
  std::uint64_t factor = 1;
  if (!parts->unit.empty()) {
    auto f = factor_of(memory_units, parts->unit);
    if (!f)
      return bad("unknown memory unit '" + parts->unit + "'; use b, kb, mb, gb or tb");
    factor = *f;
  }
  if (parts->number > std::numeric_limits<std::uint64_t>::max() / factor)
    return bad("the memory size is too large to represent");
  return memory_size{parts->number * factor};
}

expected<host_port> parse_host_port(std::string_view text) {
  auto s = trim(text);
  host_port out;
  std::string_view port;
  if (!s.empty() && s.front() == '[') {
    auto close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return bad("expected [ipv6-address]:port");
    out.host = std::string(s.substr(1, close - 1));
    port = s.substr(close + 2);
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string_view::npos)
      return bad("expected host:port");
    if (s.substr(0, colon).find(':') != std::string_view::npos)
      return bad("an IPv6 host must be in brackets: [address]:port");
    out.host = std::string(s.substr(0, colon));
    port = s.substr(colon + 1);
  }
  if (out.host.empty())
    return bad("the host is empty; expected host:port");
  std::uint32_t p = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || p > 65535)
    return bad("the port must be a number from 0 to 65535");
  out.port = static_cast<std::uint16_t>(p);
  return out;
}

std::string format_duration(duration d) {
  auto ns = d.count();
  if (ns == 0)
    return "0 ms";
  struct unit {
    std::int64_t factor;
    const char* label;
  };
  constexpr std::array<unit, 7> units{{{static_cast<std::int64_t>(ns_per_d), "d"},
                                       {static_cast<std::int64_t>(ns_per_h), "h"},
                                       {static_cast<std::int64_t>(ns_per_min), "min"},
                                       {static_cast<std::int64_t>(ns_per_s), "s"},
                                       {static_cast<std::int64_t>(ns_per_ms), "ms"},
                                       {static_cast<std::int64_t>(ns_per_us), "us"},
                                       {1, "ns"}}};
  for (const auto& u : units)
    if (ns % u.factor == 0)
      return std::to_string(ns / u.factor) + " " + u.label;
  return std::to_string(ns) + " ns";
}

bool is_sensitive_key(std::string_view key) {
  const auto k = lower(key);
  for (const char* word : {"password", "secret", "fs.azure.account.key", "apikey", "api-key",
                           "auth-params", "service-key", "token", "basic-auth", "jaas.config",
                           "http-headers"})
    if (k.find(word) != std::string::npos)
      return true;
  return false;
}

std::string format_memory_size(memory_size m) {
  struct unit {
    std::uint64_t factor;
    const char* label;
  };
  constexpr std::array<unit, 4> units{
    {{kib * kib * kib * kib, "tb"}, {kib * kib * kib, "gb"}, {kib * kib, "mb"}, {kib, "kb"}}};
  if (m.bytes != 0)
    for (const auto& u : units)
      if (m.bytes % u.factor == 0)
        return std::to_string(m.bytes / u.factor) + " " + u.label;
  return std::to_string(m.bytes) + " b";
}

// -- configuration ------------------------------------------------------------------------------

void configuration::set(std::string key, std::string value, std::string origin) {
  entries_.insert_or_assign(std::move(key), entry{std::move(value), std::move(origin)});
}

bool configuration::contains(std::string_view key) const {
  return entries_.find(key) != entries_.end();
}

bool configuration::remove(std::string_view key) {
  auto it = entries_.find(key);
  if (it == entries_.end())
    return false;
  entries_.erase(it);
  return true;
}

std::optional<std::string> configuration::get_raw(std::string_view key) const {
  auto it = entries_.find(key);
  if (it == entries_.end())
    return std::nullopt;
  return it->second.value;
}

std::string configuration::origin(std::string_view key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? std::string() : it->second.origin;
}

error configuration::invalid(std::string_view key, std::string_view value,
                             std::string_view problem) const {
  std::string message =
    "invalid value '" + std::string(value) + "' for configuration key '" + std::string(key) + "'";
  auto from = origin(key);
  if (!from.empty())
    message += " (set in " + from + ")";
  message += ": ";
  message += problem;
  return make_error(errc::invalid_argument, std::move(message));
}

template <class T>
expected<T> configuration::get_typed(std::string_view key) const {
  config_option<T> option{std::string(key), std::nullopt, {}, nullptr};
  return get(option);
}

expected<std::string> configuration::get_string(std::string_view key) const {
  return get_typed<std::string>(key);
}

expected<std::int64_t> configuration::get_int(std::string_view key) const {
  return get_typed<std::int64_t>(key);
}

expected<bool> configuration::get_bool(std::string_view key) const {
  return get_typed<bool>(key);
}

expected<duration> configuration::get_duration(std::string_view key) const {
  return get_typed<duration>(key);
}

expected<memory_size> configuration::get_memory_size(std::string_view key) const {
  return get_typed<memory_size>(key);
}

expected<host_port> configuration::get_host_port(std::string_view key) const {
  return get_typed<host_port>(key);
}

void configuration::merge(const configuration& overrides) {
  for (const auto& [key, e] : overrides.entries_)
    entries_.insert_or_assign(key, e);
}

std::vector<std::string> configuration::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [key, e] : entries_)
    out.push_back(key);
  return out;
}

} // namespace flint::config
