#pragma once
/// What the node tests share: a temporary path, a built program, and waiting on a condition with
/// a deadline (real sockets: there is no clock to drive).

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <unistd.h>

#include "api/api.hpp"

namespace flint::test {

/// A fresh path under the temp directory (not created), removed on destruction.
struct temp_path {
  std::filesystem::path path;
  explicit temp_path(const std::string& name)
    : path(std::filesystem::temp_directory_path()
           / ("flint_node_" + std::to_string(::getpid()) + "_" + name)) {
    std::filesystem::remove_all(path);
  }
  ~temp_path() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

struct program {
  std::shared_ptr<const graph::stream_graph> stream;
  std::shared_ptr<const graph::job_graph> job;
};

inline program graphs_of(const api::stream_execution_environment& env) {
  auto stream = env.get_stream_graph();
  auto job = env.get_job_graph();
  REQUIRE_MESSAGE(stream.has_value(), stream.error().to_string());
  REQUIRE_MESSAGE(job.has_value(), job.error().to_string());
  return {std::make_shared<const graph::stream_graph>(std::move(*stream)),
          std::make_shared<const graph::job_graph>(std::move(*job))};
}

/// Polls `cond` every 20 ms until it holds or `timeout` passed.
template <class F>
bool eventually(F cond, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

} // namespace flint::test
