#include "runtime/state/savepoint_files.hpp"

#include <filesystem>
#include <map>
#include <system_error>

namespace flint::state {

namespace fs = std::filesystem;

namespace {

class relocation {
public:
  explicit relocation(std::string directory) : directory_(std::move(directory)) {}

  expected<unit> move(stream_state_handle& handle) {
    if (handle.is_inline())
      return unit{};
    // A file several handles share (after a rescale) is copied once.
    if (auto done = copied_.find(handle.path); done != copied_.end()) {
      handle.path = done->second;
      return unit{};
    }
    auto name = fs::path(handle.path).filename().string();
    auto target = fs::path(directory_) / name;
    for (int n = 1; used_.count(target.string()) != 0; ++n)
      target = fs::path(directory_) / (name + "." + std::to_string(n));
    std::error_code ec;
    fs::copy_file(handle.path, target, fs::copy_options::overwrite_existing, ec);
    if (ec)
      return make_error(errc::internal,
                        "Cannot copy state file " + handle.path + " into the savepoint at "
                          + target.string() + ": " + ec.message());
    used_[target.string()] = true;
    copied_[handle.path] = target.string();
    handle.path = target.string();
    return unit{};
  }

private:
  std::string directory_;
  std::map<std::string, std::string> copied_;
  std::map<std::string, bool> used_;
};

} // namespace

expected<unit> relocate_state_files(checkpoint_metadata& metadata, const std::string& directory) {
  relocation files(directory);
  for (auto& op : metadata.operators)
    for (auto& subtask : op.subtasks)
      for (auto& keyed : subtask.keyed) {
        if (auto moved = files.move(keyed.data); !moved)
          return moved;
        // An incremental RocksDB snapshot: its SST files (shared with checkpoints) and private
        // files come along too, so the savepoint outlives every checkpoint.
        for (auto* list : {&keyed.shared_files, &keyed.private_files})
          for (auto& file : *list)
            if (auto moved = files.move(file.handle); !moved)
              return moved;
      }
  return unit{};
}

} // namespace flint::state
