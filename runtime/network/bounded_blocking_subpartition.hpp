#pragma once
/// A subpartition of a BLOCKING result: written completely, then read as often as needed
/// (Flink's BoundedBlockingSubpartition with its BoundedData).

#include "runtime/network/memory_budget.hpp"
#include "runtime/network/result_subpartition.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace flint::network {

/// Copies every buffer it is given and releases the buffer at once, so the producer's pool never
/// waits for a consumer (there is none while a blocking result is produced). The first buffers
/// are kept on the heap while `budget` (shared by the TaskExecutor's blocking partitions) has
/// room; from the first one that does not fit, everything goes to `file` (made on first use,
/// deleted on release). The partly filled buffer stays with the result_partition as for
/// pipelined subpartitions.
///
/// Readers (bounded_blocking_subpartition_reader) each start from the first buffer, read with a
/// couple of buffers of their own and end with end-of-partition; there may be any number of them,
/// one after another or at once. A reader made before finish waits for it.
///
/// Threads: one writer (the producing task) adds and finishes; readers read on their own threads
/// and release may come from any thread: the stored data is locked.
class bounded_blocking_subpartition final : public result_subpartition {
public:
  /// Subpartition `index`, keeping up to what `budget` allows in memory and the rest in `file`.
  bounded_blocking_subpartition(std::size_t index, std::filesystem::path file,
                                std::shared_ptr<memory_budget> budget);
  ~bounded_blocking_subpartition() override;

  /// Copies a data buffer (to memory or the file) and releases it. False once finished,
  /// released, or after a write failed (then failure() says why).
  bool add(buffer next) override;
  /// Ends the write phase; readers may read everything now.
  void finish() override;
  /// Drops the copies, closes and deletes the file; readers get nothing more.
  void release() override;
  /// A reader from the start (bounded_blocking_subpartition_reader).
  expected<std::unique_ptr<result_subpartition_view>> create_read_view(
    availability_listener listener) override;

  /// Data buffers written (what every reader gets).
  std::size_t backlog() const override { return total_data_buffers(); }
  /// Nothing queues here: readers copy.
  std::size_t queued() const override { return 0; }
  bool is_finished() const override;
  bool is_released() const override;
  std::size_t total_data_buffers() const override;
  std::optional<error> failure() const override;

  /// Where the buffers beyond the memory budget go.
  const std::filesystem::path& file() const noexcept { return file_; }
  /// Buffers kept in memory / in the file, and the file's size.
  std::size_t buffers_in_memory() const;
  std::size_t buffers_in_file() const;
  std::uint64_t file_bytes() const;
  /// Readers attached now.
  std::size_t num_readers() const;

  // -- for readers -------------------------------------------------------------------------------

  /// Size of the largest buffer written (what a reader's buffers must hold).
  std::size_t max_buffer_size() const;
  /// Copies buffer number `n` (of total_data_buffers(), read in order) into `into`, which holds
  /// max_buffer_size() bytes. `file_offset` is the reader's position in the file (start at 0);
  /// it moves past a buffer read from there. The buffer's size; illegal_state once released or
  /// before finish, internal for a failed read.
  expected<std::size_t> read(std::size_t n, std::uint64_t& file_offset, char* into);
  /// Registers `listener` to run once finish() is done (false when already finished or released:
  /// nothing registered). `reader` names it for forget_reader.
  bool notify_when_finished(std::uint64_t reader, availability_listener listener);
  /// A reader goes away.
  void forget_reader(std::uint64_t reader);
  /// A new reader's id (counted as attached until forget_reader).
  std::uint64_t attach_reader();

private:
  error write_error(const char* what, int code) const;
  void close_file_locked();

  const std::filesystem::path file_;
  const std::shared_ptr<memory_budget> budget_;
  mutable std::mutex mutex_;
  std::vector<buffer> memory_;
  std::size_t reserved_ = 0;
  /// Once a buffer missed the budget, every later one goes to the file (keeps the order simple).
  bool spilling_ = false;
  int fd_ = -1;
  std::vector<std::uint32_t> file_sizes_;
  std::uint64_t file_bytes_ = 0;
  std::size_t max_buffer_size_ = 0;
  std::size_t data_buffers_ = 0;
  bool finished_ = false;
  bool released_ = false;
  std::optional<error> failure_;
  std::uint64_t next_reader_ = 0;
  std::size_t readers_ = 0;
  std::map<std::uint64_t, availability_listener> waiting_;
};

} // namespace flint::network
