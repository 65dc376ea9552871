#include "apps/trace_tools/trace_reader.hpp"

#include <charconv>
#include <cstdint>
#include <istream>
#include <limits>
#include <string>
#include <utility>
#include <variant>

#include "apps/trace_tools/detail/flat_object.hpp"

namespace flint::trace {

namespace {

error malformed(std::string message) {
  return make_error(errc::malformed_message, "trace record: " + std::move(message));
}

using detail::flat_object;

expected<std::string> string_field(const flat_object& m, std::string_view key, bool required,
                                   std::string fallback = {}) {
  auto it = m.find(key);
  if (it == m.end()) {
    if (required)
      return malformed("missing field \"" + std::string(key) + "\"");
    return fallback;
  }
  if (auto* s = std::get_if<std::string>(&it->second))
    return *s;
  return malformed("field \"" + std::string(key) + "\" must be a string");
}

expected<std::int64_t> int_field(const flat_object& m, std::string_view key, bool required,
                                 std::int64_t fallback, std::int64_t min, std::int64_t max) {
  auto it = m.find(key);
  if (it == m.end()) {
    if (required)
      return malformed("missing field \"" + std::string(key) + "\"");
    return fallback;
  }
  auto* v = std::get_if<std::int64_t>(&it->second);
  if (v == nullptr)
    return malformed("field \"" + std::string(key) + "\" must be an integer");
  if (*v < min || *v > max)
    return malformed("field \"" + std::string(key) + "\" is out of range: " + std::to_string(*v));
  return *v;
}

expected<std::uint64_t> parse_hex_u64(std::string_view text, std::string_view key) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (text.empty() || text.size() > 16 || ec != std::errc{} || end != text.data() + text.size())
    return malformed("field \"" + std::string(key) + "\" is not a 64-bit hex id: \""
                     + std::string(text) + "\"");
  return v;
}

expected<rpc::fencing_token> parse_token(std::string_view text) {
  if (text == "<none>")
    return rpc::fencing_token{};
  auto bad = [&] {
    return malformed("field \"token\" is neither a UUID nor \"<none>\": \"" + std::string(text)
                     + "\"");
  };
  // 8-4-4-4-12 hex digits, the form fencing_token::to_string writes.
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-')
    return bad();
  std::string digits;
  for (char c : text)
    if (c != '-')
      digits += c;
  if (digits.size() != 32)
    return bad();
  auto hi = parse_hex_u64(std::string_view(digits).substr(0, 16), "token");
  auto lo = parse_hex_u64(std::string_view(digits).substr(16), "token");
  if (!hi || !lo)
    return bad();
  rpc::fencing_token t{*hi, *lo};
  if (t.is_nil())
    return bad(); // to_json never writes the nil UUID as digits
  return t;
}

} // namespace

expected<direction> parse_direction(std::string_view text) {
  for (auto d : {direction::send, direction::receive, direction::reply, direction::response})
    if (text == to_string(d))
      return d;
  return malformed("unknown direction \"" + std::string(text)
                   + "\" (expected send, receive, reply or response)");
}

expected<outcome> parse_outcome(std::string_view text) {
  for (auto o : {outcome::ok, outcome::rejected, outcome::malformed, outcome::unknown_method,
                 outcome::failed, outcome::timeout, outcome::unreachable})
    if (text == to_string(o))
      return o;
  return malformed("unknown outcome \"" + std::string(text) + "\"");
}

expected<record> parse_record(std::string_view json_line) {
  auto fields = detail::parse_flat_object(json_line);
  if (!fields)
    return malformed(fields.error().message);
  const auto& m = *fields;
  constexpr auto i64_min = std::numeric_limits<std::int64_t>::min();
  constexpr auto i64_max = std::numeric_limits<std::int64_t>::max();
  record r;
  // The writer casts the unsigned sequence to int64; cast back the same way.
  auto seq = int_field(m, "seq", true, 0, i64_min, i64_max);
  if (!seq)
    return seq.error();
  r.sequence = static_cast<std::uint64_t>(*seq);
  auto time = int_field(m, "time_us", true, 0, i64_min, i64_max);
  if (!time)
    return time.error();
  r.time_us = *time;
  auto dir = string_field(m, "dir", true);
  if (!dir)
    return dir.error();
  auto d = parse_direction(*dir);
  if (!d)
    return d.error();
  r.dir = *d;
  for (auto [key, target] :
       {std::pair{"from", &r.from}, std::pair{"to", &r.to}, std::pair{"method", &r.method}}) {
    auto s = string_field(m, key, true);
    if (!s)
      return s.error();
    *target = std::move(*s);
  }
  auto kind = string_field(m, "kind", true);
  if (!kind)
    return kind.error();
  if (*kind != "ask" && *kind != "tell")
    return malformed("field \"kind\" must be \"ask\" or \"tell\", not \"" + *kind + "\"");
  r.is_ask = *kind == "ask";
  auto token = string_field(m, "token", true);
  if (!token)
    return token.error();
  auto t = parse_token(*token);
  if (!t)
    return t.error();
  r.token = *t;
  for (auto [key, target] :
       {std::pair{"trace_id", &r.trace.trace_id}, std::pair{"span_id", &r.trace.span_id},
        std::pair{"parent_span_id", &r.trace.parent_span_id}}) {
    auto s = string_field(m, key, true);
    if (!s)
      return s.error();
    auto v = parse_hex_u64(*s, key);
    if (!v)
      return v.error();
    *target = *v;
  }
  auto bytes = int_field(m, "bytes", true, 0, 0, std::numeric_limits<std::uint32_t>::max());
  if (!bytes)
    return bytes.error();
  r.bytes = static_cast<std::uint32_t>(*bytes);
  auto result = string_field(m, "outcome", true);
  if (!result)
    return result.error();
  auto o = parse_outcome(*result);
  if (!o)
    return o.error();
  r.result = *o;
  auto latency = int_field(m, "latency_us", false, -1, i64_min, i64_max);
  if (!latency)
    return latency.error();
  r.latency_us = *latency;
  auto detail = string_field(m, "detail", false);
  if (!detail)
    return detail.error();
  r.detail = std::move(*detail);
  return r;
}

read_result read_records(std::istream& in) {
  read_result out;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto r = parse_record(line);
    if (r) {
      out.records.push_back(std::move(*r));
      continue;
    }
    ++out.bad_lines;
    if (!out.first_error)
      out.first_error =
        make_error(r.error().code, "line " + std::to_string(number) + ": " + r.error().message);
  }
  return out;
}

} // namespace flint::trace
