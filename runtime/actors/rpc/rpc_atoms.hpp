#pragma once
/// The CAF atoms of the RPC substrate. Every endpoint message is one of these atoms followed by
/// the bytes of an envelope, so the only CAF message types on the wire are builtins.

#include <functional>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

namespace flint::rpc {

using ask_atom = caf::atom_constant<caf::atom("flint_ask")>;
using tell_atom = caf::atom_constant<caf::atom("flint_tell")>;
/// A closure for the endpoint's main thread (local only, never serialized).
using run_atom = caf::atom_constant<caf::atom("flint_run")>;
using call_atom = caf::atom_constant<caf::atom("flint_call")>;

} // namespace flint::rpc

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::function<void()>)
