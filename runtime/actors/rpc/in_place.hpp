#pragma once
/// Reading a request or a response where it lies, through its Cap'n Proto reader, and building
/// an answer with its builder: what a method whose cost matters uses instead of the decoded
/// structs (rpc_endpoint::handle_in_place, gateway::ask_in_place). Include it only in the .cpp
/// of an endpoint or caller: it pulls in Cap'n Proto and the schema's generated header.
///
/// echo_endpoint.cpp is the example: its handler copies text and data from the request's reader
/// straight into the response's builder.

#include <span>
#include <vector>

#include "runtime/actors/rpc/byte_buffers.hpp"
#include "runtime/common/expected.hpp"
#include "schemas/codec_support.hpp"

namespace flint::rpc {

/// Reads `bytes` as a message with root `Root` and calls `fn(Root::Reader)`, which returns an
/// expected; bad bytes give errc::malformed_message naming `what`, as the generated decoders do
/// (bounded, never throws). The reader is valid only while `fn` runs.
template <class Root, class Fn>
auto read_in_place(std::span<const char> bytes, const char* what, Fn&& fn) {
  return wire::read<Root>(bytes, what, std::forward<Fn>(fn));
}

/// A message with root `Root`, filled by `fill(Root::Builder)`, as bytes; `words` is its expected
/// size (a message that small is built on the stack).
template <class Root, class Fill>
std::vector<char> build_in_place(std::size_t words, Fill&& fill) {
  std::vector<char> out = detail::thread_byte_buffers().take(); // an earlier call's buffer
  wire::build_into<Root>(out, static_cast<unsigned>(words), std::forward<Fill>(fill));
  return out;
}

} // namespace flint::rpc
