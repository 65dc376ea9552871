#pragma once
/// What the node tests share: the streaming tests' temporary path and built program
/// (streaming_test_util.hpp), and waiting on a condition with a deadline (real sockets: there is
/// no clock to drive).

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <unistd.h>

#include "test/runtime/streaming/streaming_test_util.hpp"

namespace flint::test {

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
