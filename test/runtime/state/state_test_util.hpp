#pragma once
// Shared by the runtime/state suites: a temporary directory per test and small state values.

#include "runtime/state/state_handles.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace flint::state::test {

/// A fresh directory under /tmp, removed with everything in it at the end of the test.
class temp_dir {
public:
  temp_dir() {
    std::string pattern = "/tmp/flint-state-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

inline std::vector<char> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

inline std::string text(std::span<const char> b) {
  return {b.begin(), b.end()};
}

inline void write_text_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

inline std::vector<char> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline graph::operator_id op_id(std::uint64_t n) {
  return graph::operator_id{0xabc0000000000000ULL + n, n};
}

} // namespace flint::state::test
