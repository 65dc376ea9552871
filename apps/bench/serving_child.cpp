#include "apps/bench/serving_child.hpp"

#include <cstdlib>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

namespace flint::bench {

serving_child::serving_child(const std::vector<std::string>& args) {
  int to_child[2];
  int from_child[2];
  if (pipe(to_child) != 0)
    return;
  if (pipe(from_child) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    return;
  }
  pid_ = fork();
  if (pid_ == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[1]);
    close(from_child[0]);
    std::vector<char*> argv;
    std::string self = "flint-bench";
    argv.push_back(self.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  to_child_ = to_child[1];
  from_child_ = from_child[0];
  if (pid_ < 0)
    return;
  char buf[64] = {0};
  auto n = read(from_child_, buf, sizeof(buf) - 1);
  if (n > 0 && std::strncmp(buf, "port=", 5) == 0)
    port_ = static_cast<std::uint16_t>(std::atoi(buf + 5));
}

serving_child::~serving_child() {
  if (to_child_ >= 0)
    close(to_child_);
  if (from_child_ >= 0)
    close(from_child_);
  if (pid_ > 0) {
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

} // namespace flint::bench
