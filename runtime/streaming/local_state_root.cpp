#include "runtime/streaming/local_state_root.hpp"

#include <string>

#include <unistd.h>

namespace flint::streaming {

expected<std::filesystem::path> local_state_root::path() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (dir_.path().empty()) {
    // The pid in the name lets a test harness clear what a killed process left.
    auto made = make_private_temp_directory("flint-state-" + std::to_string(::getpid()) + "-");
    if (!made)
      return make_error(made.error().code,
                        "cannot create the local state directory: " + made.error().message);
    dir_ = owned_directory(*made);
  }
  return dir_.path();
}

} // namespace flint::streaming
