#include "test/support/child_process.hpp"

#include <csignal>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace flint::test {

child_process::child_process(std::vector<std::string> argv) {
  int in[2];
  int out[2];
  if (pipe(in) != 0 || pipe(out) != 0)
    return;
  pid_ = fork();
  if (pid_ == 0) {
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    std::vector<char*> args;
    for (auto& a : argv)
      args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
}

child_process::~child_process() {
  if (pid_ > 0)
    stop(std::chrono::milliseconds(2000));
  if (stdout_fd_ >= 0)
    close(stdout_fd_);
}

std::optional<std::string> child_process::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      auto line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || stdout_fd_ < 0)
      return std::nullopt;
    pollfd p{stdout_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return std::nullopt;
    char buf[512];
    auto n = read(stdout_fd_, buf, sizeof(buf));
    if (n <= 0)
      return std::nullopt;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

int child_process::stop(std::chrono::milliseconds timeout) {
  if (pid_ <= 0)
    return -1;
  if (stdin_fd_ >= 0) {
    close(stdin_fd_);
    stdin_fd_ = -1;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    auto r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_)
      break;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    // Polling a child's exit is the one place a test waits on real time; bounded by `timeout`.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace flint::test
