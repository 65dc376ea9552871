#include "runtime/streaming/shuffle_environment.hpp"

#include "runtime/network/bounded_blocking_subpartition.hpp"

#include <utility>

namespace flint::streaming {

namespace {

/// The spill folder of a job's blocking partitions.
std::string job_folder(const graph::job_id& job) {
  return "job-" + job.to_string();
}

} // namespace

shuffle_environment::shuffle_environment(network::network_config config)
  : config_(config), pool_(network::network_buffer_pool::make(config.num_segments(), config.segment_size)),
    files_(config.tmp_dirs, "flint-netty-shuffle"),
    blocking_memory_(std::make_shared<network::memory_budget>(config.blocking_shuffle_memory)) {}

shuffle_environment::~shuffle_environment() {
  release_all();
}

std::shared_ptr<network::result_partition_manager> shuffle_environment::partitions_locked(const graph::job_id& job) {
  auto& manager = managers_[job];
  if (!manager)
    manager = std::make_shared<network::result_partition_manager>();
  return manager;
}

std::shared_ptr<network::result_partition_manager> shuffle_environment::partitions_of(const graph::job_id& job) {
  std::lock_guard<std::mutex> guard{mutex_};
  return partitions_locked(job);
}

std::shared_ptr<network::result_partition_manager> shuffle_environment::find_partitions(const graph::job_id& job) const {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = managers_.find(job);
  return it == managers_.end() ? nullptr : it->second;
}

std::shared_ptr<remote_channels> shuffle_environment::remote() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return remote_;
}

void shuffle_environment::set_remote(std::shared_ptr<remote_channels> remote) {
  std::lock_guard<std::mutex> guard{mutex_};
  remote_ = std::move(remote);
}

expected<std::vector<std::shared_ptr<network::result_subpartition>>>
shuffle_environment::blocking_subpartitions(const graph::job_id& job, const network::result_partition_id& id,
                                            std::size_t n) {
  auto folder = files_.directory(job_folder(job));
  if (!folder)
    return make_error(folder.error().code,
                      "Cannot keep blocking partition " + network::to_string(id) + ": " + folder.error().message);
  std::vector<std::shared_ptr<network::result_subpartition>> out;
  out.reserve(n);
  auto stem = id.result.to_string() + "-" + std::to_string(id.partition_number);
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(std::make_shared<network::bounded_blocking_subpartition>(
      i, *folder / (stem + "." + std::to_string(i) + ".spill"), blocking_memory_));
  return out;
}

expected<std::shared_ptr<network::result_partition>>
shuffle_environment::create_partition(const graph::job_id& job, network::result_partition_id id,
                                      std::size_t num_subpartitions, graph::result_partition_type type) {
  key k{job, id};
  bool blocking = type == graph::result_partition_type::blocking;
  if (blocking) {
    // A new attempt of the producer writes the data anew; the old copy (and its files) goes.
    bool earlier = false;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      auto it = entries_.find(k);
      earlier = it != entries_.end() && it->second.partition->is_blocking();
    }
    if (earlier)
      release(k);
  }
  std::vector<std::shared_ptr<network::result_subpartition>> subpartitions;
  if (blocking) {
    auto made = blocking_subpartitions(job, id, num_subpartitions);
    if (!made)
      return made.error();
    subpartitions = std::move(*made);
  }
  auto pool = pool_->create_buffer_pool(config_.partition_pool_min(num_subpartitions),
                                        config_.partition_pool_max(num_subpartitions));
  if (!pool)
    return make_error(pool.error().code, "Insufficient network buffers for partition " + network::to_string(id) +
                                           ": " + pool.error().message);
  auto partition = blocking ? std::make_shared<network::result_partition>(id, std::move(subpartitions),
                                                                          std::move(*pool), type)
                            : std::make_shared<network::result_partition>(id, num_subpartitions, std::move(*pool));
  std::vector<network::availability_listener> waiting;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (auto ok = partitions_locked(job)->register_partition(partition); !ok)
      return ok.error();
    entries_[k] = entry{partition, {}, false};
    if (auto it = waiters_.find(k); it != waiters_.end()) {
      waiting = std::move(it->second);
      waiters_.erase(it);
    }
  }
  for (auto& w : waiting)
    w();
  return partition;
}

bool shuffle_environment::notify_when_registered(const graph::job_id& job, const network::result_partition_id& id,
                                                 network::availability_listener listener) {
  std::lock_guard<std::mutex> guard{mutex_};
  key k{job, id};
  if (entries_.count(k))
    return false;
  waiters_[k].push_back(std::move(listener));
  return true;
}

void shuffle_environment::release(const key& k) {
  std::shared_ptr<network::result_partition_manager> manager;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!entries_.erase(k))
      return;
    manager = partitions_locked(k.job);
  }
  // Outside the lock: destroying the pool runs its callbacks.
  (void)manager->release_partition(k.id);
  std::lock_guard<std::mutex> guard{mutex_};
  if (manager->num_partitions() == 0 && managers_.count(k.job) && managers_[k.job].use_count() == 2)
    managers_.erase(k.job);
}

void shuffle_environment::producer_finished(const graph::job_id& job, const network::result_partition_id& id) {
  key k{job, id};
  bool release_now = false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto it = entries_.find(k);
    if (it == entries_.end())
      return;
    it->second.producer_done = true;
    release_now = !it->second.partition->is_blocking() &&
                  it->second.consumed.size() >= it->second.partition->num_subpartitions();
  }
  if (release_now)
    release(k);
}

void shuffle_environment::producer_failed(const graph::job_id& job, const network::result_partition_id& id) {
  release(key{job, id});
}

void shuffle_environment::subpartition_consumed(const graph::job_id& job, const network::result_partition_id& id,
                                               std::size_t subpartition) {
  key k{job, id};
  bool release_now = false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto it = entries_.find(k);
    // A blocking partition stays for more readers (a restarted consumer reads it again).
    if (it == entries_.end() || it->second.partition->is_blocking())
      return;
    it->second.consumed.insert(subpartition);
    release_now =
      it->second.producer_done && it->second.consumed.size() >= it->second.partition->num_subpartitions();
  }
  if (release_now)
    release(k);
}

void shuffle_environment::release_partitions(const graph::job_id& job,
                                             const std::vector<network::result_partition_id>& ids) {
  for (const auto& id : ids)
    release(key{job, id});
}

void shuffle_environment::release_job(const graph::job_id& job) {
  std::vector<key> of_job;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    for (auto it = entries_.lower_bound(key{job, {}}); it != entries_.end() && it->first.job == job; ++it)
      of_job.push_back(it->first);
  }
  for (const auto& k : of_job)
    release(k);
  files_.remove(job_folder(job));
}

void shuffle_environment::release_all() {
  std::vector<key> all;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    for (const auto& [k, e] : entries_)
      all.push_back(k);
  }
  for (const auto& k : all)
    release(k);
  files_.close();
}

std::size_t shuffle_environment::num_partitions() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return entries_.size();
}

std::size_t shuffle_environment::num_partitions(const graph::job_id& job) const {
  std::lock_guard<std::mutex> guard{mutex_};
  std::size_t n = 0;
  for (auto it = entries_.lower_bound(key{job, {}}); it != entries_.end() && it->first.job == job; ++it)
    ++n;
  return n;
}

std::size_t shuffle_environment::num_jobs() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return managers_.size();
}

void shuffle_environment::task_started() {
  std::lock_guard<std::mutex> guard{mutex_};
  ++tasks_;
}

void shuffle_environment::task_ended() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    --tasks_;
  }
  tasks_changed_.notify_all();
}

std::size_t shuffle_environment::running_tasks() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return tasks_;
}

bool shuffle_environment::await_no_tasks(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock{mutex_};
  return tasks_changed_.wait_for(lock, timeout, [this] { return tasks_ == 0; });
}

} // namespace flint::streaming
