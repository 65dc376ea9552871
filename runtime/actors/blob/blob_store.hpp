#pragma once
/// The blob server's storage (Flink's BlobServer storage directory): one file per blob, named by
/// its key, in one directory. Plain file I/O, no CAF. Writes go to a temporary file renamed into
/// place, so a reader never sees half a blob and concurrent writers of one key do not clash.

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/expected.hpp"

namespace flint::blob {

/// A new, empty directory for a blob server that was given none (Flink's default: a
/// "blobStore-<uuid>" directory under the system's temporary directory).
expected<std::filesystem::path> make_blob_storage_directory();

class blob_store {
public:
  /// Uses `directory`, creating it (and its parents) when missing; blobs already there are
  /// served (a restarted server keeps its blobs).
  explicit blob_store(std::filesystem::path directory);
  /// With HA (Flink's FileSystemBlobStore under `high-availability.storageDir`): every blob is
  /// also written to `ha_directory`, and a blob missing here is read from there — so a JobManager
  /// that takes over serves the job libraries its predecessor received.
  blob_store(std::filesystem::path directory, std::filesystem::path ha_directory);
  ~blob_store();
  blob_store(blob_store&&) noexcept;
  blob_store& operator=(blob_store&&) noexcept;

  const std::filesystem::path& directory() const noexcept { return directory_; }

  /// Stores `data` under its content key and returns the key; a blob already stored is kept.
  expected<std::string> put(std::span<const char> data);
  /// Stores a job package under job_package_key(`job_id_hex`), replacing an older one.
  expected<std::string> put_job_package(std::string_view job_id_hex, std::span<const char> data);
  /// The blob under `key`: errc::invalid_argument for a malformed key, errc::not_found when
  /// nothing is stored under it.
  expected<std::vector<char>> get(std::string_view key) const;

private:
  expected<unit> write(const std::string& key, std::span<const char> data);

  std::filesystem::path directory_;
  std::uint64_t next_temp_ = 0;
  std::unique_ptr<blob_store> ha_;
};

} // namespace flint::blob
