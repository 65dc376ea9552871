#pragma once
/// An error answer crosses CAF as a caf::error of category "flint": its code is the errc, its
/// context the message text. A success answer is the response message alone, with no wrapper
/// to build or take apart. Only the RPC layer and its tests include this (it pulls in CAF).

#include <chrono>
#include <string>

#include <caf/error.hpp>

#include "runtime/common/expected.hpp"

namespace flint::rpc {

caf::error to_caf_error(const error& e);

/// A caf::error back into Flint's: "flint" errors as they were sent (a code out of range is
/// errc::malformed_message), a CAF timeout as errc::timeout after `timeout`, anything else
/// (the peer is gone, the link dropped) as errc::unreachable. `method` and `target` name the
/// call in the text.
error from_caf_error(const caf::error& e, const char* method, const std::string& target,
                     std::chrono::nanoseconds timeout);

} // namespace flint::rpc
