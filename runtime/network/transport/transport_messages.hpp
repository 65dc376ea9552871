#pragma once
/// The wire form of the credit-based channel messages (network_messages.hpp) as CAF messages.
///
/// Only builtin CAF types cross processes (atoms, integers, strings, `caf::actor`,
/// `std::vector<char>`), so nothing needs registering and nothing can arrive empty on a peer that
/// forgot a registration. Each message is an atom followed by fixed-width integers; the handlers
/// on both sides match these exact types, so the aliases below are the single source of truth.
///
/// | message              | elements after the atom                                                        |
/// |----------------------|--------------------------------------------------------------------------------|
/// | partition request    | consumer actor, job upper, job lower, result upper, result lower, partition    |
/// | (consumer → server)  | number, subpartition, gate, channel, initial credit                            |
/// | buffer (server → c.) | gate, channel, sequence, backlog, kind, bytes (`std::vector<char>`)            |
/// | local buffer         | gate, channel, sequence, backlog, shared_buffer (same process only: no copy)   |
/// | add credit (c. → s.) | consumer actor, gate, channel, credit                                          |
/// | partition error      | gate, channel, errc code, text (server → consumer: request refused)            |
/// | cancel (c. → s.)     | consumer actor, gate, channel, job upper, job lower, result upper, result      |
/// |                      | lower, partition number, subpartition (the consumer released the channel)      |
/// | ping (c. → s.)       | nothing; answered with ping (a new connection carried one round trip)          |

#include "runtime/network/buffer.hpp"

#include <cstdint>
#include <memory>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

namespace flint::network::transport {

using partition_request_atom = caf::atom_constant<caf::atom("flint_preq")>;
using buffer_atom = caf::atom_constant<caf::atom("flint_buf")>;
using local_buffer_atom = caf::atom_constant<caf::atom("flint_bufl")>;
using add_credit_atom = caf::atom_constant<caf::atom("flint_cred")>;
using partition_error_atom = caf::atom_constant<caf::atom("flint_perr")>;
using cancel_request_atom = caf::atom_constant<caf::atom("flint_pcnl")>;
using ping_atom = caf::atom_constant<caf::atom("flint_ping")>;
/// Consumer → itself: the back-off of a refused partition request elapsed.
using retry_request_atom = caf::atom_constant<caf::atom("flint_prty")>;

/// Wire types of the fields (fixed width, so both processes agree whatever their size_t).
using wire_u32 = std::uint32_t;
using wire_u64 = std::uint64_t;
using wire_i32 = std::int32_t;
using wire_kind = std::uint8_t;

/// A buffer handed to an actor of the same process: ownership moves, the bytes are not copied.
/// CAF 0.17 message elements must be copyable, hence the shared holder; whoever takes the buffer
/// out leaves an empty one, and a message dropped on the way releases it to its pool.
struct shared_buffer {
  std::shared_ptr<buffer> buf;
};

} // namespace flint::network::transport

// Never serialized: the server sends it only to actors of its own node.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(flint::network::transport::shared_buffer)
