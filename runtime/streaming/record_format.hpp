#pragma once
/// Records as text for print and write_as_text: tuples as `(word,3)`, like Flink's Tuple
/// `toString`, numbers as Java prints them; a FLINT_RECORD without an operator<< as the tuple of
/// its fields, maps as `{k=v, k=v}`, an empty optional as `null`, an enum as its value.

#include "runtime/streaming/type_serializer.hpp"

#include <charconv>
#include <concepts>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace flint::streaming {

/// Appends the text of `value` to `out`.
template <class T>
void format_record(std::string& out, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, char>) {
    out += value;
  } else if constexpr (std::is_integral_v<T>) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[40];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    std::string_view text(buf, static_cast<std::size_t>(r.ptr - buf));
    out += text;
    // Java prints 1.0, not 1.
    if (text.find_first_of(".eEn") == std::string_view::npos)
      out += ".0";
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out += std::string_view(value);
  } else if constexpr (detail::is_pair<T>::value) {
    out += '(';
    format_record(out, value.first);
    out += ',';
    format_record(out, value.second);
    out += ')';
  } else if constexpr (detail::is_tuple<T>::value) {
    out += '(';
    bool first = true;
    std::apply(
      [&](const auto&... fields) {
        ((out += (first ? "" : ","), first = false, format_record(out, fields)), ...);
      },
      value);
    out += ')';
  } else if constexpr (detail::is_vector<T>::value || detail::is_array<T>::value) {
    out += '[';
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (i)
        out += ", ";
      format_record(out, value[i]);
    }
    out += ']';
  } else if constexpr (requires(std::ostream & os, const T& v) { os << v; }) {
    std::ostringstream os;
    os << value;
    out += os.str();
  } else if constexpr (std::is_enum_v<T>) {
    format_record(out, static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (detail::is_optional<T>::value) {
    if (value)
      format_record(out, *value);
    else
      out += "null";
  } else if constexpr (detail::is_map<T>::value) {
    // Java's Map.toString: {k=v, k=v}.
    out += '{';
    bool first = true;
    for (const auto& [k, v] : value) {
      out += first ? "" : ", ";
      first = false;
      format_record(out, k);
      out += '=';
      format_record(out, v);
    }
    out += '}';
  } else if constexpr (record_type<T>) {
    // A FLINT_RECORD without its own operator<<: its fields, as a tuple prints.
    format_record(out, flint_record_fields(value));
  } else {
    (void)value;
    out += "<record>";
  }
}

} // namespace flint::streaming
