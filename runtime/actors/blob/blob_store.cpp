#include "runtime/actors/blob/blob_store.hpp"

#include "runtime/actors/blob/blob_gateway.hpp"
#include "runtime/actors/blob/blob_key.hpp"
#include "runtime/common/private_directory.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace flint::blob {

namespace fs = std::filesystem;

expected<fs::path> make_blob_storage_directory() {
  auto made = make_private_temp_directory("flint-blobStore-");
  if (!made)
    return make_error(made.error().code,
                      "cannot create a blob store directory: " + made.error().message);
  return made;
}

blob_store::blob_store(fs::path directory) : directory_(std::move(directory)) {
  // A failure shows at the first write, with its cause.
  (void)prepare_private_directory(directory_, "blob.storage.directory");
}

blob_store::blob_store(fs::path directory, fs::path ha_directory)
  : blob_store(std::move(directory)) {
  ha_ = std::unique_ptr<blob_store>(new blob_store(shared_tag{}, std::move(ha_directory)));
}

blob_store::blob_store(shared_tag, fs::path directory)
  : directory_(std::move(directory)),
    shared_(true) {}

blob_store::~blob_store() = default;
blob_store::blob_store(blob_store&&) noexcept = default;
blob_store& blob_store::operator=(blob_store&&) noexcept = default;

expected<unit> blob_store::usable_directory() const {
  if (!shared_)
    return prepare_private_directory(directory_, "blob.storage.directory");
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec)
    return make_error(
      errc::internal,
      "cannot create the blob storage directory " + directory_.string() + ": " + ec.message());
  return unit{};
}

expected<fs::path> blob_store::write_temp(const std::string& key, std::span<const char> data) {
  if (auto ok = usable_directory(); !ok)
    return ok.error();
  // A name no other writer uses: this store's process and a counter; O_EXCL and O_NOFOLLOW, so
  // nothing put there before is written through.
  auto temp = directory_
    / (".incoming-" + key + "-" + std::to_string(::getpid()) + "-" + std::to_string(next_temp_++));
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return make_error(errc::internal,
                      "cannot write blob " + key + " to " + temp.string() + ": "
                        + std::strerror(errno));
  std::size_t done = 0;
  while (done < data.size()) {
    auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<std::size_t>(n);
  }
  bool ok = done == data.size();
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    std::error_code ec;
    fs::remove(temp, ec);
    return make_error(errc::internal, "cannot write blob " + key + " to " + temp.string());
  }
  return temp;
}

expected<unit> blob_store::write(const std::string& key, std::span<const char> data) {
  auto temp = write_temp(key, data);
  if (!temp)
    return temp.error();
  std::error_code ec;
  fs::rename(*temp, directory_ / key, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(*temp, ignored);
    return make_error(
      errc::internal,
      "cannot store blob " + key + " in " + directory_.string() + ": " + ec.message());
  }
  return unit{};
}

expected<unit> blob_store::write_once(const std::string& key, std::string_view job_id_hex,
                                      std::span<const char> data) {
  auto temp = write_temp(key, data);
  if (!temp)
    return temp.error();
  // link() never replaces: of two writers of one job's package, exactly one places it.
  int linked = ::link(temp->c_str(), (directory_ / key).c_str());
  int link_errno = errno;
  std::error_code ignored;
  fs::remove(*temp, ignored);
  if (linked == 0)
    return unit{};
  if (link_errno != EEXIST)
    return make_error(errc::internal, "cannot store blob " + key + " in " + directory_.string()
                                        + ": " + std::strerror(link_errno));
  auto stored = read_file_no_follow(directory_ / key);
  if (!stored)
    return make_error(stored.error().code, "cannot read the stored package of job "
                                             + std::string(job_id_hex) + ": "
                                             + stored.error().message);
  auto stored_hash = content_key(*stored);
  auto offered_hash = content_key({data.data(), data.size()});
  if (stored_hash == offered_hash)
    return unit{}; // the same package again: a retried upload
  return make_error(errc::rejected,
                    "the package of job " + std::string(job_id_hex)
                      + " is already stored with SHA-256 " + stored_hash
                      + "; another package with SHA-256 " + offered_hash
                      + " is refused (a job's package is written once)");
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
  if (auto stored = read_file_no_follow(directory_ / key);
      stored && content_key(*stored) == key)
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
  if (auto ok = write_once(key, job_id_hex, data); !ok)
    return ok.error();
  return key;
}

expected<std::vector<char>> blob_store::get(std::string_view key) const {
  if (!is_valid_key(key))
    return make_error(errc::invalid_argument, "not a blob key: '" + std::string(key) + "'");
  auto path = directory_ / std::string(key);
  auto bytes = read_file_no_follow(path);
  if (!bytes && bytes.error().code == errc::not_found && ha_)
    return ha_->get(key);
  if (!bytes && bytes.error().code == errc::not_found)
    return make_error(errc::not_found, "no blob " + std::string(key) + " on this blob server");
  if (!bytes)
    return make_error(bytes.error().code,
                      "cannot read blob " + std::string(key) + ": " + bytes.error().message);
  return std::vector<char>(bytes->begin(), bytes->end());
}

} // namespace flint::blob
