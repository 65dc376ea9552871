#include "runtime/network/transport/transport_messages.hpp"

#include <caf/atom.hpp>

namespace flint::network::transport {

std::optional<caf::atom_value> leading_atom(const caf::type_erased_tuple& content) noexcept {
  if (content.empty() || !content.match_element<caf::atom_value>(0))
    return std::nullopt;
  return content.get_as<caf::atom_value>(0);
}

namespace detail {

error malformed(std::string_view name, caf::atom_value atom,
                const std::vector<std::string_view>& fields,
                const caf::type_erased_tuple& content) {
  std::string expected = "(" + caf::to_string(atom);
  for (auto field : fields)
    expected.append(", ").append(field);
  expected += ")";
  // A stray buffer would print all of its bytes.
  auto got = content.stringify();
  if (got.size() > 200)
    got = got.substr(0, 200) + "...";
  return make_error(errc::malformed_message,
                    "malformed " + std::string(name) + " message: expected " + expected + " ("
                      + std::to_string(fields.size() + 1) + " elements), got " + got + " ("
                      + std::to_string(content.size()) + " elements)");
}

} // namespace detail

} // namespace flint::network::transport
