#pragma once
/// `echo`: a diagnostic method (like a ping with a body) served by the demo endpoint, the RPC
/// benchmark and the RPC tests. Messages: schemas/echo.capnp.

#include <cstdint>

#include "runtime/actors/rpc/method.hpp"
#include "schemas/echo.messages.hpp"

namespace flint::rpc {

struct echo_method {
  static constexpr std::uint32_t id = 0x0001;
  static constexpr const char* name = "echo";
  using request = echo_request;
  using response = echo_response;
};

} // namespace flint::rpc
