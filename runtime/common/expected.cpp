#include "runtime/common/expected.hpp"

namespace flint {

const char* to_string(errc code) {
  switch (code) {
    case errc::none: return "none";
    case errc::fencing_token_mismatch: return "fencing_token_mismatch";
    case errc::malformed_message: return "malformed_message";
    case errc::unknown_method: return "unknown_method";
    case errc::timeout: return "timeout";
    case errc::unreachable: return "unreachable";
    case errc::rejected: return "rejected";
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::illegal_state: return "illegal_state";
    case errc::internal: return "internal";
  }
  return "unknown_error";
}

std::string error::to_string() const {
  return std::string(flint::to_string(code)) + ": " + message;
}

} // namespace flint
