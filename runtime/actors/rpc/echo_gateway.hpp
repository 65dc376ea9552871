#pragma once
/// `echo`: a diagnostic method (like a ping with a body) served by the demo endpoint, the RPC
/// benchmark and the RPC tests.

#include <string>
#include <vector>

#include "runtime/actors/rpc/method.hpp"

namespace flint::rpc {

struct echo_request {
  std::string text;
  std::vector<char> data;
};

struct echo_response {
  std::string text;
  std::vector<char> data;
  std::string responder;
};

template <>
struct codec<echo_request> {
  static std::vector<char> encode(const echo_request& x);
  static expected<echo_request> decode(std::span<const char> bytes);
};

template <>
struct codec<echo_response> {
  static std::vector<char> encode(const echo_response& x);
  static expected<echo_response> decode(std::span<const char> bytes);
};

struct echo_method {
  static constexpr std::uint32_t id = 0x0001;
  static constexpr const char* name = "echo";
  using request = echo_request;
  using response = echo_response;
};

} // namespace flint::rpc
