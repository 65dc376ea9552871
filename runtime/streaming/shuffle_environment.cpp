#include "runtime/streaming/shuffle_environment.hpp"

#include <utility>

namespace flint::streaming {

shuffle_environment::shuffle_environment(network::network_config config)
  : config_(config), pool_(network::network_buffer_pool::make(config.num_segments(), config.segment_size)) {}

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

expected<std::shared_ptr<network::result_partition>>
shuffle_environment::create_partition(const graph::job_id& job, network::result_partition_id id,
                                      std::size_t num_subpartitions) {
  auto pool = pool_->create_buffer_pool(config_.partition_pool_min(num_subpartitions),
                                        config_.partition_pool_max(num_subpartitions));
  if (!pool)
    return make_error(pool.error().code, "Insufficient network buffers for partition " + network::to_string(id) +
                                           ": " + pool.error().message);
  auto partition = std::make_shared<network::result_partition>(id, num_subpartitions, std::move(*pool));
  std::vector<network::availability_listener> waiting;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (auto ok = partitions_locked(job)->register_partition(partition); !ok)
      return ok.error();
    key k{job, id};
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
    release_now = it->second.consumed.size() >= it->second.partition->num_subpartitions();
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
    if (it == entries_.end())
      return;
    it->second.consumed.insert(subpartition);
    release_now =
      it->second.producer_done && it->second.consumed.size() >= it->second.partition->num_subpartitions();
  }
  if (release_now)
    release(k);
}

std::size_t shuffle_environment::num_partitions() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return entries_.size();
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
