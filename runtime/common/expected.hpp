#pragma once
/// Flint's result type: a value or an error with a code and a message.
///
/// One small code list (STYLE.md: add context to the message, not new codes). Plain C++ so the
/// graph layer, codecs and actors share it; it crosses the wire as an RPC error answer.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace flint {

enum class errc : std::uint8_t {
  none = 0,
  /// A fenced call carried a missing or different fencing token; it was not executed.
  fencing_token_mismatch = 1,
  /// Bytes that do not decode: truncated, random, or the wrong schema.
  malformed_message = 2,
  /// The receiver has no method with this id.
  unknown_method = 3,
  /// An ask got no answer within its timeout.
  timeout = 4,
  /// The receiver is gone or cannot be reached.
  unreachable = 5,
  /// The request was well-formed but refused by the receiver's logic.
  rejected = 6,
  /// Arguments or configuration are invalid.
  invalid_argument = 7,
  /// The thing asked for does not exist.
  not_found = 8,
  /// A state transition the state machine does not allow.
  illegal_state = 9,
  /// The receiver failed while serving the call.
  internal = 10,
};

/// Flink-style name of a code, e.g. "fencing_token_mismatch".
const char* to_string(errc code);

struct error {
  errc code = errc::none;
  std::string message;

  /// "<code>: <message>"
  std::string to_string() const;
  friend bool operator==(const error&, const error&) = default;
};

inline error make_error(errc code, std::string message) {
  return error{code, std::move(message)};
}

/// A value of T or an error. Small on purpose: `if (!x) use(x.error()); else use(*x);`
template <class T>
class [[nodiscard]] expected {
public:
  expected(T value) : data_(std::in_place_index<0>, std::move(value)) {}
  expected(flint::error err) : data_(std::in_place_index<1>, std::move(err)) {}

  bool has_value() const noexcept { return data_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const flint::error& error() const { return std::get<1>(data_); }

private:
  std::variant<T, flint::error> data_;
};

/// Success without a value.
struct unit {
  friend bool operator==(unit, unit) = default;
};

} // namespace flint
