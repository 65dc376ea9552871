#pragma once
/// A child process for integration tests: started with pipes on stdin and stdout; closing its
/// stdin asks it to stop; the destructor kills what is left, so a failing test leaves nothing.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace flint::test {

class child_process {
public:
  explicit child_process(std::vector<std::string> argv);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  bool started() const noexcept { return pid_ > 0; }
  pid_t pid() const noexcept { return pid_; }

  /// The next line of its stdout, or nothing at end of file or after `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);

  /// Closes its stdin and waits up to `timeout` for it to exit; kills it otherwise. Exit code.
  int stop(std::chrono::milliseconds timeout = std::chrono::seconds(5));

private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
};

} // namespace flint::test
