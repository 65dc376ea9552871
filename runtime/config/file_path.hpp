#pragma once
/// Paths in the configuration and on the command line, read as Flink reads them (its core.fs.Path
/// on the local file system): a plain path ("/shared/ha") or a `file:` URI ("file:///shared/ha",
/// also "file:/shared/ha" and "file://localhost/shared/ha"). Flint serves only the local file
/// system, so any other scheme ("hdfs://", "s3://") is refused where it is read instead of
/// becoming a folder named "hdfs:" under the working directory; shared storage (checkpoints,
/// savepoints, HA) must be absolute, so that it means the same directory on every node whatever
/// directory each was started from. Every path key and path argument goes through `parse_path`.

#include <filesystem>
#include <string_view>
#include <vector>

#include "runtime/common/expected.hpp"

namespace flint::config {

/// Whom a path must mean the same to.
enum class path_scope {
  /// This process's own files (io.tmp.dirs, blob.storage.directory, a log file): a relative
  /// path is taken from the working directory, as Flink does.
  local,
  /// A directory every node reads and writes (state.checkpoints.dir, state.savepoints.dir,
  /// high-availability.storageDir, a savepoint): it must be absolute.
  shared,
};

/// What a relative shared path is told (the options' checks say the same).
inline constexpr const char* relative_shared_path_problem =
  "must be an absolute path or a file:/// URI: a relative path would mean a different directory "
  "on each node (under the directory it was started from)";

/// The local path `text` names: lexically normal, without a trailing '/'. Errors
/// (`invalid_argument`, the problem only: the caller names the key or argument): empty, a scheme
/// other than file:, a file: URI naming another host or no path, and with `path_scope::shared` a
/// relative path.
expected<std::filesystem::path> parse_path(std::string_view text,
                                           path_scope scope = path_scope::local);

/// A list of local paths as Flink's io.tmp.dirs takes it: separated by ',' or ':' (a ':' that
/// ends a URI scheme, as in "file:///a,file:///b" or "file:/a:file:/b", does not separate);
/// blank entries are skipped; each entry as `parse_path`.
expected<std::vector<std::filesystem::path>> parse_path_list(std::string_view text);

} // namespace flint::config
