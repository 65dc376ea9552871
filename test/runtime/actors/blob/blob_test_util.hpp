#pragma once
// A fresh storage directory per test, removed at its end.

#include <filesystem>
#include <random>
#include <string>

namespace flint::test {

struct temp_directory {
  std::filesystem::path path;

  explicit temp_directory(const std::string& prefix) {
    std::random_device device;
    path = std::filesystem::temp_directory_path()
      / (prefix + "-" + std::to_string(device()) + std::to_string(device()));
    std::filesystem::create_directories(path);
  }
  ~temp_directory() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_directory(const temp_directory&) = delete;
  temp_directory& operator=(const temp_directory&) = delete;
};

} // namespace flint::test
