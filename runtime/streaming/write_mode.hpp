#pragma once
/// What a file sink does with a path that already exists (Flink's FileSystem.WriteMode).

#include <string>
#include <string_view>

namespace flint::streaming {

enum class write_mode {
  /// An existing file or directory at the path refuses the job (Flink's default).
  no_overwrite,
  /// An existing file or directory at the path is removed when the job is submitted.
  overwrite,
};

/// Flink's wording for a refused path, so users find it where they look for Flink's.
inline constexpr std::string_view no_overwrite_message =
  "File or directory already exists. Existing files and directories are not overwritten in "
  "NO_OVERWRITE mode. Use OVERWRITE mode to overwrite existing files and directories.";

} // namespace flint::streaming
