#pragma once
/// The trust rule for what the HA stores read back from ZooKeeper (Flink: the path of a
/// RetrievableStateHandle in `high-availability.storageDir`). ZooKeeper holds only pointers to
/// files in the storage directory; whoever can write a znode (a world-writable one, with
/// `high-availability.zookeeper.client.acl: open`) could otherwise make a JobManager read, and
/// on cleanup delete, any file it may touch. So a pointer is used only if it names a file under
/// the store's own directory there; anything else is refused, neither read nor deleted.

#include <filesystem>
#include <string>
#include <string_view>

#include "runtime/common/expected.hpp"

namespace flint::ha {

/// The file `pointer` (a znode's data: a plain absolute path or a file: URI, as
/// config::parse_path reads it) names, lexically normalised, if it lies strictly under `root`
/// (absolute and lexically normal, as the stores keep it). `..` cannot escape: the comparison
/// is made after normalisation, element by element ("/ha-other" is not under "/ha").
/// Symbolic links are not followed: the storage directory's content is trusted, its name is not.
/// Errors (rejected) name the pointer (control characters escaped, at most 200 characters),
/// `root` and `what` ("job graph of job ...").
expected<std::filesystem::path> resolve_storage_pointer(std::string_view pointer,
                                                        const std::filesystem::path& root,
                                                        std::string_view what);

/// `pointer` as it may appear in a log line or an error: control characters as \xNN, cut at 200
/// characters.
std::string printable_pointer(std::string_view pointer);

} // namespace flint::ha
