#pragma once
/// Flink's flat configuration (`org.apache.flink.configuration.Configuration`): string keys with
/// dots ("heartbeat.interval") mapped to string values, read through typed getters that parse
/// Flink's value syntax — durations ("10 s", "100 ms", a bare number is milliseconds), memory
/// sizes ("32kb", "64 mb"), booleans, integers, host:port addresses and paths (file_path.hpp).
/// Values are parsed when read, so a bad value is an error naming the key, the value and where
/// it was set.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "runtime/common/expected.hpp"
#include "runtime/config/file_path.hpp"

namespace flint::config {

/// Durations keep Flink's full precision (it parses to java.time.Duration).
using duration = std::chrono::nanoseconds;

/// A number of bytes; Flink's units are powers of 1024.
struct memory_size {
  std::uint64_t bytes = 0;
  friend bool operator==(const memory_size&, const memory_size&) = default;
};

struct host_port {
  std::string host;
  std::uint16_t port = 0;
  /// "host:port", with brackets around IPv6 hosts.
  std::string to_string() const;
  friend bool operator==(const host_port&, const host_port&) = default;
};

/// `s` without leading and trailing blanks (space, tab, CR, LF).
std::string_view trim(std::string_view s);
/// `s` in lower case (ASCII), for Flink's case-insensitive enum values.
std::string lower(std::string_view s);

/// Integers as Flink reads them: optional sign, decimal digits, surrounding blanks ignored.
expected<std::int64_t> parse_int(std::string_view text);
/// "true" or "false", any case (Flink accepts nothing else).
expected<bool> parse_bool(std::string_view text);
/// A number and an optional unit: d, h, min/m, s, ms, us/µs, ns and their long forms ("seconds");
/// no unit means milliseconds.
expected<duration> parse_duration(std::string_view text);
/// A number and an optional unit: b, k/kb, m/mb, g/gb, t/tb (any case); no unit means bytes.
expected<memory_size> parse_memory_size(std::string_view text);
/// "host:port" or "[v6-address]:port".
expected<host_port> parse_host_port(std::string_view text);

/// The largest unit that keeps the value exact: "10 s", "5 min", "100 ms".
std::string format_duration(duration d);
/// The largest unit that keeps the value exact: "32 kb", "64 mb", "100 b".
std::string format_memory_size(memory_size m);

/// Whether `key` holds a secret (Flink's GlobalConfiguration.isSensitive): its value is shown as
/// `******` wherever the configuration is shown (the node's log, GET /jobmanager/config).
bool is_sensitive_key(std::string_view key);
/// What a key's value looks like when shown: `******` for a sensitive key.
inline constexpr const char* hidden_value = "******";

/// A typed option: Flink's key, its default and a one-line description. Options without a default
/// (`taskmanager.host`) are read with `configuration::find`.
template <class T>
struct config_option {
  std::string key;
  std::optional<T> default_value;
  std::string description;
  /// A further check on a parsed value: what is wrong with it, or nullptr.
  const char* (*check)(const T&) = nullptr;
};

class configuration {
public:
  /// Sets `key`; `origin` says where the value came from ("conf.yaml:12", "-D") for errors.
  void set(std::string key, std::string value, std::string origin = {});

  /// Sets an option's key to the text form of `value`.
  template <class T>
  void set(const config_option<T>& option, const std::type_identity_t<T>& value) {
    set(option.key, format(value));
  }

  bool contains(std::string_view key) const;
  bool remove(std::string_view key);
  /// The raw text, if set.
  std::optional<std::string> get_raw(std::string_view key) const;
  /// Where the key's value came from; empty if unknown or unset.
  std::string origin(std::string_view key) const;

  /// Typed getters: `not_found` if the key is unset, `invalid_argument` naming key, value and
  /// origin if the value does not parse.
  expected<std::string> get_string(std::string_view key) const;
  expected<std::int64_t> get_int(std::string_view key) const;
  expected<bool> get_bool(std::string_view key) const;
  expected<duration> get_duration(std::string_view key) const;
  expected<memory_size> get_memory_size(std::string_view key) const;
  expected<host_port> get_host_port(std::string_view key) const;

  /// The option's value, or its default when unset; `not_found` if unset without a default.
  template <class T>
  expected<T> get(const config_option<T>& option) const {
    auto found = find(option);
    if (!found)
      return found.error();
    if (*found)
      return std::move(**found);
    if (option.default_value)
      return *option.default_value;
    return make_error(errc::not_found, "configuration key '" + option.key + "' is not set");
  }

  /// The option's value if set (defaults are not applied); an error if set but bad.
  template <class T>
  expected<std::optional<T>> find(const config_option<T>& option) const {
    auto raw = get_raw(option.key);
    if (!raw)
      return std::optional<T>{};
    auto parsed = parse_as(*raw, static_cast<T*>(nullptr));
    if (!parsed)
      return invalid(option.key, *raw, parsed.error().message);
    if (option.check != nullptr)
      if (const char* problem = option.check(*parsed))
        return invalid(option.key, *raw, problem);
    return std::optional<T>{std::move(*parsed)};
  }

  /// Copies every entry of `overrides` over this one's (command line over file).
  void merge(const configuration& overrides);

  /// All keys, sorted.
  std::vector<std::string> keys() const;
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

private:
  struct entry {
    std::string value;
    std::string origin;
  };

  static expected<std::string> parse_as(std::string_view s, std::string*) { return std::string(s); }
  static expected<std::int64_t> parse_as(std::string_view s, std::int64_t*) { return parse_int(s); }
  static expected<bool> parse_as(std::string_view s, bool*) { return parse_bool(s); }
  static expected<duration> parse_as(std::string_view s, duration*) { return parse_duration(s); }
  static expected<memory_size> parse_as(std::string_view s, memory_size*) {
    return parse_memory_size(s);
  }
  static expected<host_port> parse_as(std::string_view s, host_port*) { return parse_host_port(s); }
  static expected<std::filesystem::path> parse_as(std::string_view s, std::filesystem::path*) {
    return parse_path(s);
  }
  static expected<std::vector<std::filesystem::path>> parse_as(
    std::string_view s, std::vector<std::filesystem::path>*) {
    return parse_path_list(s);
  }

  static std::string format(const std::string& v) { return v; }
  static std::string format(std::int64_t v) { return std::to_string(v); }
  static std::string format(bool v) { return v ? "true" : "false"; }
  static std::string format(duration v) { return format_duration(v); }
  static std::string format(memory_size v) { return format_memory_size(v); }
  static std::string format(const host_port& v) { return v.to_string(); }
  static std::string format(const std::filesystem::path& v) { return v.string(); }
  static std::string format(const std::vector<std::filesystem::path>& v) {
    std::string out;
    for (const auto& p : v)
      out += (out.empty() ? "" : ",") + p.string();
    return out;
  }

  /// "invalid value '<value>' for configuration key '<key>' (set in <origin>): <problem>"
  error invalid(std::string_view key, std::string_view value, std::string_view problem) const;

  template <class T>
  expected<T> get_typed(std::string_view key) const;

  std::map<std::string, entry, std::less<>> entries_;
};

} // namespace flint::config
