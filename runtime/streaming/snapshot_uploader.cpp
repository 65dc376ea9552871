#include "runtime/streaming/snapshot_uploader.hpp"

#include <exception>
#include <utility>

namespace flint::streaming {

snapshot_uploader::snapshot_uploader(std::function<void()> done) : done_(std::move(done)) {}

snapshot_uploader::~snapshot_uploader() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void snapshot_uploader::submit(std::int64_t checkpoint_id, upload work) {
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(checkpoint_id, std::move(work));
    in_flight_.fetch_add(1, std::memory_order_acq_rel);
    if (!thread_.joinable())
      thread_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
}

std::vector<snapshot_uploader::result> snapshot_uploader::take_results() {
  std::lock_guard lock(mutex_);
  has_results_.store(false, std::memory_order_relaxed);
  auto taken = std::exchange(results_, {});
  in_flight_.fetch_sub(taken.size(), std::memory_order_acq_rel);
  return taken;
}

void snapshot_uploader::run() {
  for (;;) {
    std::pair<std::int64_t, upload> next;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_)
        return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    result r{next.first, make_error(errc::internal, "the upload did not run")};
    try {
      r.snapshot = next.second();
    } catch (const std::exception& e) {
      r.snapshot = make_error(errc::internal, e.what());
    }
    {
      std::lock_guard lock(mutex_);
      results_.push_back(std::move(r));
      has_results_.store(true, std::memory_order_release);
    }
    if (done_)
      done_();
  }
}

} // namespace flint::streaming
