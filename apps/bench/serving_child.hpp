#pragma once
/// The second process of a two-process benchmark: this same binary re-executed with
/// `flint-bench <name> --serve ...`, which prints "port=<n>" once it listens and serves until its
/// standard input closes.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace flint::bench {

class serving_child {
public:
  /// Starts `flint-bench <args...>` and waits for its port line.
  explicit serving_child(const std::vector<std::string>& args);
  /// Closes its stdin and waits for it to exit.
  ~serving_child();
  serving_child(const serving_child&) = delete;
  serving_child& operator=(const serving_child&) = delete;

  /// The port it listens on; nothing if it did not start.
  std::optional<std::uint16_t> port() const { return port_; }

private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::optional<std::uint16_t> port_;
};

} // namespace flint::bench
