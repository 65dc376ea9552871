#include "runtime/network/bounded_blocking_subpartition.hpp"

#include "runtime/network/bounded_blocking_subpartition_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace flint::network {

bounded_blocking_subpartition::bounded_blocking_subpartition(std::size_t index,
                                                             std::filesystem::path file,
                                                             std::shared_ptr<memory_budget> budget)
  : result_subpartition(index),
    file_(std::move(file)),
    budget_(std::move(budget)) {}

bounded_blocking_subpartition::~bounded_blocking_subpartition() {
  release();
}

error bounded_blocking_subpartition::write_error(const char* what, int code) const {
  return make_error(errc::internal,
                    std::string{"blocking subpartition "} + std::to_string(index()) + ": cannot "
                      + what + " the spill file " + file_.string() + ": " + std::strerror(code));
}

bool bounded_blocking_subpartition::add(buffer next) {
  // The producer's segment goes back to its pool when `next` goes, after the lock is gone (its
  // pool may run callbacks).
  buffer done = std::move(next);
  if (done.kind() == buffer_kind::end_of_partition) {
    finish();
    return true;
  }
  std::lock_guard<std::mutex> guard{mutex_};
  if (finished_ || released_ || failure_)
    return false;
  auto size = done.size();
  if (size == 0)
    return true;
  if (!spilling_ && budget_ && budget_->try_reserve(size)) {
    memory_.push_back(buffer::unpooled_copy(done.bytes()));
    reserved_ += size;
  } else {
    spilling_ = true;
    if (fd_ < 0) {
      fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd_ < 0) {
        failure_ = write_error("create", errno);
        return false;
      }
    }
    const char* at = done.data();
    std::size_t left = size;
    while (left > 0) {
      auto n = ::write(fd_, at, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        failure_ = write_error("write", n < 0 ? errno : ENOSPC);
        return false;
      }
      at += n;
      left -= static_cast<std::size_t>(n);
    }
    file_sizes_.push_back(static_cast<std::uint32_t>(size));
    file_bytes_ += size;
  }
  ++data_buffers_;
  if (size > max_buffer_size_)
    max_buffer_size_ = size;
  return true;
}

void bounded_blocking_subpartition::finish() {
  std::map<std::uint64_t, availability_listener> waiting;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (finished_ || released_)
      return;
    finished_ = true;
    waiting.swap(waiting_);
  }
  for (auto& [reader, listener] : waiting)
    if (listener)
      listener();
}

void bounded_blocking_subpartition::close_file_locked() {
  if (fd_ < 0)
    return;
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::remove(file_, ec);
}

void bounded_blocking_subpartition::release() {
  std::vector<buffer> dropped;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return;
    released_ = true;
    finished_ = true;
    dropped.swap(memory_);
    if (budget_)
      budget_->release(reserved_);
    reserved_ = 0;
    close_file_locked();
    file_sizes_.clear();
    waiting_.clear();
  }
}

expected<std::unique_ptr<result_subpartition_view>> bounded_blocking_subpartition::create_read_view(
  availability_listener listener) {
  if (is_released())
    return make_error(errc::illegal_state,
                      "blocking subpartition " + std::to_string(index()) + " is released");
  if (auto failed = failure())
    return make_error(errc::illegal_state,
                      "blocking subpartition " + std::to_string(index())
                        + " failed while it was written: " + failed->message);
  return std::unique_ptr<result_subpartition_view>{
    std::make_unique<bounded_blocking_subpartition_reader>(
      std::static_pointer_cast<bounded_blocking_subpartition>(shared_from_this()),
      std::move(listener))};
}

expected<std::size_t> bounded_blocking_subpartition::read(std::size_t n, std::uint64_t& file_offset,
                                                          char* into) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (released_)
    return make_error(errc::illegal_state,
                      "blocking subpartition " + std::to_string(index()) + " is released");
  if (!finished_)
    return make_error(errc::illegal_state,
                      "blocking subpartition " + std::to_string(index()) + " is still written");
  if (failure_)
    return make_error(
      errc::illegal_state,
      "blocking subpartition " + std::to_string(index()) + " is incomplete: " + failure_->message);
  if (n < memory_.size()) {
    const auto& kept = memory_[n];
    std::memcpy(into, kept.data(), kept.size());
    return kept.size();
  }
  auto in_file = n - memory_.size();
  if (in_file >= file_sizes_.size())
    return make_error(errc::invalid_argument,
                      "blocking subpartition " + std::to_string(index()) + " has "
                        + std::to_string(data_buffers_) + " buffers, no buffer "
                        + std::to_string(n));
  std::size_t size = file_sizes_[in_file];
  std::size_t have = 0;
  while (have < size) {
    auto got = ::pread(fd_, into + have, size - have, static_cast<off_t>(file_offset + have));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return make_error(errc::internal,
                        "blocking subpartition " + std::to_string(index())
                          + ": cannot read the spill file " + file_.string() + ": "
                          + (got < 0 ? std::strerror(errno) : "it is shorter than written"));
    have += static_cast<std::size_t>(got);
  }
  file_offset += size;
  return size;
}

bool bounded_blocking_subpartition::notify_when_finished(std::uint64_t reader,
                                                         availability_listener listener) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (finished_ || released_)
    return false;
  waiting_[reader] = std::move(listener);
  return true;
}

std::uint64_t bounded_blocking_subpartition::attach_reader() {
  std::lock_guard<std::mutex> guard{mutex_};
  ++readers_;
  return next_reader_++;
}

void bounded_blocking_subpartition::forget_reader(std::uint64_t reader) {
  std::lock_guard<std::mutex> guard{mutex_};
  waiting_.erase(reader);
  if (readers_ > 0)
    --readers_;
}

bool bounded_blocking_subpartition::is_finished() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return finished_;
}

bool bounded_blocking_subpartition::is_released() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return released_;
}

std::size_t bounded_blocking_subpartition::total_data_buffers() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return data_buffers_;
}

std::optional<error> bounded_blocking_subpartition::failure() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return failure_;
}

std::size_t bounded_blocking_subpartition::buffers_in_memory() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return memory_.size();
}

std::size_t bounded_blocking_subpartition::buffers_in_file() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return file_sizes_.size();
}

std::uint64_t bounded_blocking_subpartition::file_bytes() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return file_bytes_;
}

std::size_t bounded_blocking_subpartition::num_readers() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return readers_;
}

std::size_t bounded_blocking_subpartition::max_buffer_size() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return max_buffer_size_;
}

} // namespace flint::network
