#include "runtime/actors/rpc/rpc_error.hpp"

#include <caf/atom.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace flint::rpc {

namespace {

constexpr caf::atom_value flint_category = caf::atom("flint");

std::string describe(std::chrono::nanoseconds d) {
  using namespace std::chrono;
  if (d % seconds(1) == nanoseconds(0))
    return std::to_string(duration_cast<seconds>(d).count()) + " s";
  return std::to_string(duration_cast<milliseconds>(d).count()) + " ms";
}

} // namespace

caf::error to_caf_error(const error& e) {
  return caf::error(static_cast<std::uint8_t>(e.code), flint_category,
                    caf::make_message(e.message));
}

error from_caf_error(const caf::error& err, const char* method, const std::string& target,
                     std::chrono::nanoseconds timeout) {
  if (err.category() == flint_category) {
    auto code = err.code();
    if (code == 0 || code > static_cast<std::uint8_t>(errc::internal))
      return make_error(errc::malformed_message,
                        "rpc reply: unknown error code " + std::to_string(code));
    const auto& ctx = err.context();
    std::string text =
      ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0) : std::string();
    return make_error(static_cast<errc>(code), std::move(text));
  }
  if (err == caf::sec::request_timeout)
    return make_error(errc::timeout,
                      std::string("ask ") + method + " to " + target + " timed out after "
                        + describe(timeout) + " (rpc.ask.timeout)");
  return make_error(
    errc::unreachable,
    std::string("ask ") + method + " to " + target + " failed: " + caf::to_string(err));
}

} // namespace flint::rpc
