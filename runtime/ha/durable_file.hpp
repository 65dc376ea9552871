#pragma once
/// Small-file I/O for the HA stores' state in the storage directory (Flink's
/// `high-availability.storageDir`): whole-file reads, and writes that a crash can never leave
/// half done, because a recovering JobManager must find either the old bytes or the new ones.

#include <filesystem>
#include <string>
#include <string_view>

#include "runtime/common/expected.hpp"

namespace flint::ha {

/// Replaces `target` with `bytes` atomically: writes a temporary file beside it, fsyncs it,
/// renames it over `target` and fsyncs the directory (so the rename itself survives a crash).
/// Creates missing parent directories. Errors (internal) name the file and the system's reason.
expected<unit> write_file_atomically(const std::filesystem::path& target, std::string_view bytes);

/// The whole file. not_found when it does not exist; internal for other failures; both name it.
expected<std::string> read_whole_file(const std::filesystem::path& path);

/// Renames `from` to `to` (same directory) and fsyncs the directory, so a crash after success
/// keeps the new name. not_found when `from` does not exist.
expected<unit> rename_durably(const std::filesystem::path& from, const std::filesystem::path& to);

} // namespace flint::ha
