#include "runtime/actors/blob/blob_store.hpp"

#include "runtime/actors/blob/blob_gateway.hpp"
#include "runtime/actors/blob/blob_key.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include <unistd.h>

namespace flint::blob {

namespace fs = std::filesystem;

expected<fs::path> make_blob_storage_directory() {
  std::error_code ec;
  auto base = fs::temp_directory_path(ec);
  if (ec)
    return make_error(errc::internal, "no temporary directory for the blob store: " + ec.message());
  std::string pattern = (base / "flint-blobStore-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    return make_error(
      errc::internal,
      "cannot create a blob store directory under " + base.string() + ": " + std::strerror(errno));
  return fs::path(pattern);
}

blob_store::blob_store(fs::path directory) : directory_(std::move(directory)) {
  std::error_code ec;
  fs::create_directories(directory_, ec); // a failure shows at the first write, with its cause
}

blob_store::blob_store(fs::path directory, fs::path ha_directory)
  : blob_store(std::move(directory)) {
  ha_ = std::make_unique<blob_store>(std::move(ha_directory));
}

blob_store::~blob_store() = default;
blob_store::blob_store(blob_store&&) noexcept = default;
blob_store& blob_store::operator=(blob_store&&) noexcept = default;

expected<unit> blob_store::write(const std::string& key, std::span<const char> data) {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec)
    return make_error(
      errc::internal,
      "cannot create the blob storage directory " + directory_.string() + ": " + ec.message());
  // A name no other writer uses: this store's process and a counter.
  auto temp = directory_
    / (".incoming-" + key + "-" + std::to_string(::getpid()) + "-" + std::to_string(next_temp_++));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      return make_error(errc::internal, "cannot write blob " + key + " to " + temp.string());
    }
  }
  fs::rename(temp, directory_ / key, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return make_error(
      errc::internal,
      "cannot store blob " + key + " in " + directory_.string() + ": " + ec.message());
  }
  return unit{};
}

expected<std::string> blob_store::put(std::span<const char> data) {
  if (data.size() > max_blob_size)
    return make_error(errc::rejected,
                      "a blob of " + std::to_string(data.size()) + " bytes is over the limit of "
                        + std::to_string(max_blob_size) + " bytes");
  auto key = content_key({data.data(), data.size()});
  // Stored in HA first: a blob the client saw accepted survives this JobManager.
  if (ha_)
    if (auto ok = ha_->put(data); !ok)
      return make_error(ok.error().code,
                        "storing the blob in high-availability.storageDir: " + ok.error().message);
  std::error_code ec;
  if (fs::is_regular_file(directory_ / key, ec))
    return key;
  if (auto ok = write(key, data); !ok)
    return ok.error();
  return key;
}

expected<std::string> blob_store::put_job_package(std::string_view job_id_hex,
                                                  std::span<const char> data) {
  auto key = job_package_key(job_id_hex);
  if (!is_valid_key(key) || is_content_key(key))
    return make_error(errc::invalid_argument, "not a job id: '" + std::string(job_id_hex) + "'");
  if (data.size() > max_blob_size)
    return make_error(errc::rejected,
                      "a job package of " + std::to_string(data.size())
                        + " bytes is over the limit of " + std::to_string(max_blob_size)
                        + " bytes");
  if (ha_)
    if (auto ok = ha_->put_job_package(job_id_hex, data); !ok)
      return make_error(
        ok.error().code,
        "storing the job package in high-availability.storageDir: " + ok.error().message);
  if (auto ok = write(key, data); !ok)
    return ok.error();
  return key;
}

expected<std::vector<char>> blob_store::get(std::string_view key) const {
  if (!is_valid_key(key))
    return make_error(errc::invalid_argument, "not a blob key: '" + std::string(key) + "'");
  auto path = directory_ / std::string(key);
  std::ifstream in(path, std::ios::binary);
  if (!in && ha_)
    return ha_->get(key);
  if (!in)
    return make_error(errc::not_found, "no blob " + std::string(key) + " on this blob server");
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::size_t>(in.tellg());
  in.seekg(0, std::ios::beg);
  std::vector<char> data(size);
  if (size > 0 && !in.read(data.data(), static_cast<std::streamsize>(size)))
    return make_error(errc::internal,
                      "cannot read blob " + std::string(key) + " from " + path.string());
  return data;
}

} // namespace flint::blob
