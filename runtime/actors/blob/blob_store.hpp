#pragma once
/// The blob server's storage (Flink's BlobServer storage directory): one file per blob, named by
/// its key, in one directory. Plain file I/O, no CAF. Writes go to a temporary file moved into
/// place, so a reader never sees half a blob and concurrent writers of one key do not clash.
///
/// The directory is private (runtime/common/private_directory.hpp): a missing one is made with
/// mode 0700, one that is a symbolic link or owned by another user is refused, and no blob file
/// is read or written through a link. A job's package is written once: every TaskExecutor of the
/// job loads the same code, whoever else holds a certificate.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/expected.hpp"

namespace flint::blob {

/// A new, empty, private directory for a blob server that was given none (Flink's default: a
/// "blobStore-<uuid>" directory under the system's temporary directory), made with mkdtemp.
expected<std::filesystem::path> make_blob_storage_directory();

class blob_store {
public:
  /// Uses `directory`, creating it (mode 0700, its parents as usual) when missing; blobs already
  /// there are served (a restarted server keeps its blobs). A directory that is a symbolic link
  /// or owned by another user fails every call, with that cause.
  explicit blob_store(std::filesystem::path directory);
  /// With HA (Flink's FileSystemBlobStore under `high-availability.storageDir`): every blob is
  /// also written to `ha_directory`, and a blob missing here is read from there — so a JobManager
  /// that takes over serves the job libraries its predecessor received. That directory is shared
  /// storage: it is made when missing, and its owner is not checked.
  blob_store(std::filesystem::path directory, std::filesystem::path ha_directory);
  ~blob_store();
  blob_store(blob_store&&) noexcept;
  blob_store& operator=(blob_store&&) noexcept;

  const std::filesystem::path& directory() const noexcept { return directory_; }

  /// Stores `data` under its content key and returns the key; a blob already stored is kept.
  expected<std::string> put(std::span<const char> data);
  /// Stores a job package under job_package_key(`job_id_hex`), once: the same bytes again are
  /// accepted (a retried upload), other bytes are errc::rejected with the job id and both
  /// packages' SHA-256 named.
  expected<std::string> put_job_package(std::string_view job_id_hex, std::span<const char> data);
  /// The blob under `key`: errc::invalid_argument for a malformed key, errc::not_found when
  /// nothing is stored under it.
  expected<std::vector<char>> get(std::string_view key) const;

private:
  struct shared_tag {};
  /// The HA store's directory: shared storage, not checked as a private one.
  blob_store(shared_tag, std::filesystem::path directory);

  expected<unit> usable_directory() const;
  /// A new temporary file in the directory holding `data`.
  expected<std::filesystem::path> write_temp(const std::string& key, std::span<const char> data);
  /// Stores `data` under `key`, replacing what is there.
  expected<unit> write(const std::string& key, std::span<const char> data);
  /// Stores `data` under `key` unless something is there; the same bytes there are accepted.
  expected<unit> write_once(const std::string& key, std::string_view job_id_hex,
                            std::span<const char> data);

  std::filesystem::path directory_;
  bool shared_ = false;
  std::uint64_t next_temp_ = 0;
  std::unique_ptr<blob_store> ha_;
};

} // namespace flint::blob
