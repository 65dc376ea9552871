#include "runtime/network/shuffle_environment.hpp"

#include "runtime/network/transport/connection_cache.hpp"
#include "runtime/network/transport/connection_manager.hpp"
#include "runtime/network/transport/partition_request_server.hpp"

#include <utility>

#include <caf/actor.hpp>

namespace flint::network {

shuffle_environment::shuffle_environment(network_config config)
  : config_(config),
    pool_(network_buffer_pool::make(config.num_segments(), config.segment_size)),
    files_(config.tmp_dirs, "flint-netty-shuffle"),
    blocking_memory_(std::make_shared<memory_budget>(config.blocking_shuffle_memory)),
    partition_factory_(config_, pool_, files_, blocking_memory_),
    gate_factory_(config_, pool_) {}

shuffle_environment::~shuffle_environment() {
  disable_remote_channels();
  release_all();
}

std::shared_ptr<result_partition_manager> shuffle_environment::partitions_locked(
  const graph::job_id& job) {
  auto& manager = managers_[job];
  if (!manager)
    manager = std::make_shared<result_partition_manager>();
  return manager;
}

std::shared_ptr<result_partition_manager> shuffle_environment::partitions_of(
  const graph::job_id& job) {
  std::lock_guard<std::mutex> guard{mutex_};
  return partitions_locked(job);
}

std::shared_ptr<result_partition_manager> shuffle_environment::find_partitions(
  const graph::job_id& job) const {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = managers_.find(job);
  return it == managers_.end() ? nullptr : it->second;
}

expected<std::shared_ptr<result_partition>> shuffle_environment::create_partition(
  const graph::job_id& job, result_partition_id id, std::size_t num_subpartitions,
  graph::result_partition_type type) {
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
  auto partition = partition_factory_.create(job, id, num_subpartitions, type);
  if (!partition)
    return partition.error();
  std::vector<availability_listener> waiting;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (auto ok = partitions_locked(job)->register_partition(*partition); !ok)
      return ok.error();
    entries_[k] = entry{*partition, {}, false};
    if (auto it = waiters_.find(k); it != waiters_.end()) {
      waiting = std::move(it->second);
      waiters_.erase(it);
    }
  }
  for (auto& w : waiting)
    w();
  return partition;
}

expected<std::vector<std::shared_ptr<result_partition>>> shuffle_environment::create_partitions(
  const graph::task_deployment_descriptor& tdd) {
  std::vector<std::shared_ptr<result_partition>> out;
  for (const auto& produced : tdd.produced_partitions) {
    result_partition_id id{produced.result_id, produced.partition_number};
    auto partition =
      create_partition(tdd.job_id, id, static_cast<std::size_t>(produced.number_of_subpartitions),
                       produced.partition_type);
    if (!partition) {
      for (const auto& made : out)
        producer_failed(tdd.job_id, made->id());
      return make_error(partition.error().code,
                        "task " + tdd.task_name + ": " + partition.error().message);
    }
    out.push_back(std::move(*partition));
  }
  return out;
}

bool shuffle_environment::notify_when_registered(const graph::job_id& job,
                                                 const result_partition_id& id,
                                                 availability_listener listener) {
  std::lock_guard<std::mutex> guard{mutex_};
  key k{job, id};
  if (entries_.count(k))
    return false;
  waiters_[k].push_back(std::move(listener));
  return true;
}

void shuffle_environment::release(const key& k) {
  std::shared_ptr<result_partition_manager> manager;
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

void shuffle_environment::producer_finished(const graph::job_id& job,
                                            const result_partition_id& id) {
  key k{job, id};
  bool release_now = false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto it = entries_.find(k);
    if (it == entries_.end())
      return;
    it->second.producer_done = true;
    release_now = !it->second.partition->is_blocking()
      && it->second.consumed.size() >= it->second.partition->num_subpartitions();
  }
  if (release_now)
    release(k);
}

void shuffle_environment::producer_failed(const graph::job_id& job, const result_partition_id& id) {
  release(key{job, id});
}

void shuffle_environment::subpartition_consumed(const graph::job_id& job,
                                                const result_partition_id& id,
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
    release_now = it->second.producer_done
      && it->second.consumed.size() >= it->second.partition->num_subpartitions();
  }
  if (release_now)
    release(k);
}

void shuffle_environment::release_partitions(const graph::job_id& job,
                                             const std::vector<result_partition_id>& ids) {
  for (const auto& id : ids)
    release(key{job, id});
}

void shuffle_environment::release_job(const graph::job_id& job) {
  std::vector<key> of_job;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    for (auto it = entries_.lower_bound(key{job, {}}); it != entries_.end() && it->first.job == job;
         ++it)
      of_job.push_back(it->first);
  }
  for (const auto& k : of_job)
    release(k);
  files_.remove(result_partition_factory::job_folder(job));
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
  for (auto it = entries_.lower_bound(key{job, {}}); it != entries_.end() && it->first.job == job;
       ++it)
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

expected<std::unique_ptr<input_gate>> shuffle_environment::create_input_gate(
  const graph::job_id& job, std::size_t gate_index,
  const std::vector<channel_descriptor>& channels) {
  return gate_factory_.create(gate_index, channels, *partitions_of(job));
}

expected<std::unique_ptr<task_inputs>> shuffle_environment::create_inputs(
  const graph::task_deployment_descriptor& tdd, input_owner owner) {
  return task_inputs::create(shared_from_this(), gate_factory_, tdd, std::move(owner));
}

caf::actor spawn_partition_server(caf::actor_system& sys,
                                  const std::shared_ptr<shuffle_environment>& shuffle,
                                  bool always_copy) {
  // Weak: the environment owns the server.
  std::weak_ptr<shuffle_environment> weak = shuffle;
  transport::server_options options;
  options.always_copy = always_copy;
  options.on_consumed = [weak](const graph::job_id& job, const result_partition_id& id,
                               std::size_t subpartition) {
    if (auto env = weak.lock())
      env->subpartition_consumed(job, id, subpartition);
  };
  return transport::spawn_partition_request_server(
    sys,
    [weak](const graph::job_id& job) -> std::shared_ptr<result_partition_manager> {
      auto env = weak.lock();
      return env ? env->find_partitions(job) : nullptr;
    },
    std::move(options));
}

expected<std::uint16_t> shuffle_environment::enable_remote_channels(caf::actor_system& sys,
                                                                    std::string advertised_host,
                                                                    std::uint16_t port,
                                                                    std::string bind_address) {
  if (auto port_now = data_port())
    return make_error(
      errc::illegal_state,
      "remote channels are enabled already (data port " + std::to_string(port_now) + ")");
  auto manager =
    transport::connection_manager::start(sys, spawn_partition_server(sys, shared_from_this()),
                                         std::move(advertised_host), port, bind_address);
  if (!manager)
    return manager.error();
  std::lock_guard<std::mutex> guard{mutex_};
  remote_ = std::move(*manager);
  connections_ = remote_->connections();
  return remote_->data_port();
}

void shuffle_environment::disable_remote_channels() {
  std::unique_ptr<transport::connection_manager> gone;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    gone = std::move(remote_);
    if (gone)
      connections_ = nullptr;
  }
  // Outside the lock: unpublishing waits for the middleman.
  if (gone)
    gone->stop();
}

std::uint16_t shuffle_environment::data_port() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return remote_ ? remote_->data_port() : 0;
}

std::shared_ptr<transport::connection_cache> shuffle_environment::connections() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return connections_;
}

void shuffle_environment::set_connections(
  std::shared_ptr<transport::connection_cache> connections) {
  std::lock_guard<std::mutex> guard{mutex_};
  connections_ = std::move(connections);
}

} // namespace flint::network
