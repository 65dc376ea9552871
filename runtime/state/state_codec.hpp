#pragma once
/// Bytes of the checkpoint values (schemas/checkpoint.capnp): a task's acknowledgement, a
/// restored task's state and a checkpoint's `_metadata`. Decoding takes untrusted bytes (a file
/// or a message): it never throws, and anything that is not a whole, valid value is an
/// `errc::invalid_argument` error saying what is wrong.

#include "runtime/common/expected.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace flint::state {

/// The first four bytes of a `_metadata` file, big-endian (Flink's
/// Checkpoints.HEADER_MAGIC_NUMBER).
inline constexpr std::uint32_t metadata_magic_number = 0x4960672d;
/// The four bytes after the magic number, big-endian: the layout of what follows.
inline constexpr std::uint32_t metadata_version = 1;
/// Magic number and version.
inline constexpr std::size_t metadata_header_size = 8;

/// A Cap'n Proto message.
std::vector<char> encode_task_state_snapshot(const task_state_snapshot& snapshot);
/// Errors read "malformed task state snapshot: <what>".
expected<task_state_snapshot> decode_task_state_snapshot(std::span<const char> bytes);

/// A Cap'n Proto message.
std::vector<char> encode_task_restore(const task_restore& restore);
/// Errors read "malformed task restore: <what>".
expected<task_restore> decode_task_restore(std::span<const char> bytes);

/// What a `_metadata` file holds: the magic/version header, then a Cap'n Proto message.
std::vector<char> encode_checkpoint_metadata(const checkpoint_metadata& metadata);
/// Errors read "malformed checkpoint metadata: <what>", or with a `source` (the file the bytes
/// came from) "Cannot read checkpoint metadata <source>: <what>", where <what> is e.g.
/// "truncated (12 of 340 bytes)" or "not a checkpoint metadata file (...)".
expected<checkpoint_metadata> decode_checkpoint_metadata(std::span<const char> bytes,
                                                         const std::string& source = {});

} // namespace flint::state
