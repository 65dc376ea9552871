#pragma once
/// The answer to a registration (Flink's RegistrationResponse): success with the target's
/// details, or a decline with a reason (retried after the refused delay).

#include <string>
#include <variant>

namespace flint::registration {

struct registration_decline {
  std::string reason;
  friend bool operator==(const registration_decline&, const registration_decline&) = default;
};

template <class Success>
using registration_response = std::variant<Success, registration_decline>;

} // namespace flint::registration
