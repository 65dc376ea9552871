#pragma once
/// A savepoint owns its files (Flink's savepoints are self-contained and relocatable): the state
/// files a completed snapshot refers to are copied into the savepoint's directory and the handles
/// pointed there, since checkpoint directories go as soon as later checkpoints subsume them.

#include "runtime/common/expected.hpp"
#include "runtime/state/state_handles.hpp"

#include <string>

namespace flint::state {

/// Copies every file `metadata` refers to into `directory` (which exists) and rewrites the
/// handles' paths; inline state stays inline. An unreadable file or a full disk is an error
/// naming the file.
expected<unit> relocate_state_files(checkpoint_metadata& metadata, const std::string& directory);

} // namespace flint::state
