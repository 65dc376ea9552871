#include "runtime/network/file_channel_manager.hpp"

#include <unistd.h>

#include <random>
#include <system_error>
#include <utility>

namespace flint::network {
namespace {

std::string random_suffix() {
  static constexpr char digits[] = "0123456789abcdef";
  std::random_device device;
  std::string out;
  for (int i = 0; i < 8; ++i)
    out += digits[device() % 16];
  return out;
}

} // namespace

file_channel_manager::file_channel_manager(std::vector<std::string> tmp_dirs,
                                           const std::string& prefix)
  : folder_(prefix + "-" + std::to_string(::getpid()) + "-" + random_suffix()) {
  for (auto& dir : tmp_dirs)
    if (!dir.empty())
      tmp_dirs_.emplace_back(std::move(dir));
  if (tmp_dirs_.empty()) {
    std::error_code ec;
    auto system = std::filesystem::temp_directory_path(ec);
    tmp_dirs_.push_back(ec ? std::filesystem::path{"/tmp"} : system);
  }
  made_.assign(tmp_dirs_.size(), false);
}

file_channel_manager::~file_channel_manager() {
  close();
}

expected<std::filesystem::path> file_channel_manager::directory(const std::string& name) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = next_++ % tmp_dirs_.size();
  auto folder = tmp_dirs_[i] / folder_;
  std::error_code ec;
  // The temp directory itself must exist: a typo in io.tmp.dirs should not grow a new tree.
  if (!made_[i]) {
    if (!std::filesystem::create_directory(folder, ec) && ec)
      return make_error(errc::invalid_argument,
                        "io.tmp.dirs: cannot create the spill folder " + folder.string() + " in "
                          + tmp_dirs_[i].string() + ": " + ec.message());
    made_[i] = true;
  }
  auto dir = folder / name;
  if (!std::filesystem::create_directory(dir, ec) && ec)
    return make_error(
      errc::invalid_argument,
      "io.tmp.dirs: cannot create the spill folder " + dir.string() + ": " + ec.message());
  return dir;
}

void file_channel_manager::remove(const std::string& name) {
  std::lock_guard<std::mutex> guard{mutex_};
  for (std::size_t i = 0; i < tmp_dirs_.size(); ++i) {
    if (!made_[i])
      continue;
    std::error_code ec;
    std::filesystem::remove_all(tmp_dirs_[i] / folder_ / name, ec);
  }
}

void file_channel_manager::close() {
  std::lock_guard<std::mutex> guard{mutex_};
  for (std::size_t i = 0; i < tmp_dirs_.size(); ++i) {
    if (!made_[i])
      continue;
    std::error_code ec;
    std::filesystem::remove_all(tmp_dirs_[i] / folder_, ec);
    made_[i] = false;
  }
}

} // namespace flint::network
