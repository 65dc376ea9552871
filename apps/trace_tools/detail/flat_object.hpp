#pragma once
/// A line of JSON read as the flat object a trace record is (private to apps/trace_tools).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "runtime/common/expected.hpp"

namespace flint::trace::detail {

using flat_value = std::variant<std::string, std::int64_t>;
using flat_object = std::map<std::string, flat_value, std::less<>>;

/// Parses `line` with nlohmann-json as one object whose values are strings or integers (64 bits).
/// Anything else is a `malformed_message` error whose text names the field (a nested or float
/// value, a duplicated key) or the column and what the parser expected there; strings must be
/// UTF-8.
expected<flat_object> parse_flat_object(std::string_view line);

} // namespace flint::trace::detail
