#include "runtime/state/checkpoint_storage.hpp"

#include "runtime/state/detail/file_io.hpp"
#include "runtime/state/state_codec.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

namespace flint::state {

namespace fs = std::filesystem;

namespace {

constexpr const char* metadata_kind = "checkpoint metadata";

/// An absolute, normal path without a trailing separator (a leading "file://" dropped).
expected<std::string> normal_directory(const std::string& dir, const char* what) {
  std::error_code ec;
  auto path = fs::absolute(detail::local_path(dir), ec).lexically_normal();
  if (ec)
    return make_error(errc::invalid_argument,
                      std::string("Cannot use ") + what + " " + dir + ": " + ec.message());
  auto text = path.string();
  while (text.size() > 1 && text.back() == '/')
    text.pop_back();
  return text;
}

std::string join(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).lexically_normal().string();
}

std::string random_hex(std::size_t digits) {
  static constexpr char hex[] = "0123456789abcdef";
  std::random_device device;
  std::mt19937_64 random((static_cast<std::uint64_t>(device()) << 32) ^ device());
  std::string out(digits, '0');
  for (auto& c : out)
    c = hex[random() & 0xf];
  return out;
}

} // namespace

expected<checkpoint_storage> checkpoint_storage::create(std::string checkpoints_dir,
                                                        graph::job_id job) {
  auto dir = normal_directory(checkpoints_dir, "checkpoint directory");
  if (!dir)
    return dir.error();
  checkpoint_storage storage(job, join(*dir, job.to_string()));
  for (auto [path, what] :
       {std::pair{storage.job_directory(), "checkpoint directory"},
        std::pair{storage.shared_directory(), "shared state directory"},
        std::pair{storage.task_owned_directory(), "task-owned state directory"}})
    if (auto made = detail::make_directories(path, what); !made)
      return made.error();
  return storage;
}

std::string checkpoint_storage::shared_directory() const {
  return job_dir_ + "/shared";
}

std::string checkpoint_storage::task_owned_directory() const {
  return job_dir_ + "/taskowned";
}

std::string checkpoint_storage::checkpoint_directory(std::int64_t id) const {
  return job_dir_ + "/chk-" + std::to_string(id);
}

expected<std::string> checkpoint_storage::initialize_checkpoint(std::int64_t id) {
  auto dir = checkpoint_directory(id);
  if (auto made = detail::make_directories(dir, "checkpoint directory"); !made)
    return made.error();
  return dir;
}

expected<std::string> checkpoint_storage::write_metadata(const checkpoint_metadata& metadata) {
  return write_metadata_to(checkpoint_directory(metadata.checkpoint_id), metadata);
}

expected<std::string> checkpoint_storage::write_metadata_to(const std::string& dir,
                                                            const checkpoint_metadata& metadata) {
  auto normal = normal_directory(dir, "checkpoint directory");
  if (!normal)
    return normal.error();
  if (auto made = detail::make_directories(*normal, "checkpoint directory"); !made)
    return made.error();
  auto final_path = join(*normal, metadata_file_name);
  std::error_code ec;
  if (fs::exists(final_path, ec))
    return make_error(errc::illegal_state,
                      "Cannot write checkpoint metadata " + final_path + ": the file exists");
  auto temp_path = final_path + ".inprogress";
  auto bytes = encode_checkpoint_metadata(metadata);
  std::span<const char> parts[] = {bytes};
  if (auto written = detail::write_file(temp_path, parts, metadata_kind); !written)
    return written.error();
  if (std::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    auto err = errno;
    fs::remove(temp_path, ec);
    return make_error(errc::internal,
                      "Cannot write checkpoint metadata " + final_path + ": renaming " + temp_path
                        + ": " + std::strerror(err));
  }
  if (auto synced = detail::sync_directory(*normal, "checkpoint directory"); !synced)
    return synced.error();
  return final_path;
}

expected<unit> checkpoint_storage::discard_checkpoint(std::int64_t id) {
  auto dir = checkpoint_directory(id);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec)
    return make_error(errc::internal,
                      "Cannot discard checkpoint directory " + dir + ": " + ec.message());
  return unit{};
}

expected<std::string> checkpoint_storage::initialize_savepoint(const std::string& target_dir) {
  auto target = normal_directory(target_dir, "savepoint directory");
  if (!target)
    return target.error();
  if (auto made = detail::make_directories(*target, "savepoint directory"); !made)
    return made.error();
  auto prefix = "savepoint-" + job_.to_string().substr(0, 6) + "-";
  // As Flink: a few attempts in case a random name is taken.
  int err = EEXIST;
  std::string dir;
  for (int attempt = 0; attempt < 10 && err == EEXIST; ++attempt) {
    dir = join(*target, prefix + random_hex(12));
    if (::mkdir(dir.c_str(), 0755) == 0)
      return dir;
    err = errno;
  }
  return make_error(errc::internal,
                    "Cannot create savepoint directory " + dir + ": " + std::strerror(err));
}

expected<std::string> write_metadata_into(const std::string& dir,
                                          const checkpoint_metadata& metadata) {
  // The storage's job is only used for savepoint names: any will do here.
  auto storage = checkpoint_storage::unrooted(graph::job_id{});
  return storage.write_metadata_to(dir, metadata);
}

expected<std::string> make_savepoint_directory(const std::string& target_dir, graph::job_id job) {
  return checkpoint_storage::unrooted(job).initialize_savepoint(target_dir);
}

std::string exclusive_state_file(const std::string& checkpoint_dir, const std::string& name) {
  return join(checkpoint_dir, name);
}

expected<checkpoint_metadata> load_checkpoint_metadata(const std::string& path) {
  auto file = detail::local_path(path);
  std::error_code ec;
  if (fs::is_directory(file, ec))
    file = join(file, metadata_file_name);
  auto bytes = detail::read_file(file, metadata_kind);
  if (!bytes)
    return bytes.error();
  return decode_checkpoint_metadata(*bytes, file);
}

} // namespace flint::state
