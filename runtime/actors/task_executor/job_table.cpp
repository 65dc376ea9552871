#include "runtime/actors/task_executor/job_table.hpp"

namespace flint::task_executor {

std::pair<job_entry*, bool> job_table::get_or_create(const graph::job_id& job,
                                                     const std::string& target_address) {
  auto [i, created] = jobs_.try_emplace(job);
  if (created) {
    i->second.job = job;
    i->second.target_address = target_address;
  }
  return {&i->second, created};
}

job_entry* job_table::get(const graph::job_id& job) {
  auto i = jobs_.find(job);
  return i == jobs_.end() ? nullptr : &i->second;
}

const job_entry* job_table::get(const graph::job_id& job) const {
  auto i = jobs_.find(job);
  return i == jobs_.end() ? nullptr : &i->second;
}

bool job_table::remove(const graph::job_id& job) {
  return jobs_.erase(job) > 0;
}

bool job_table::connect(const graph::job_id& job, job_master_connection connection) {
  auto* e = get(job);
  if (e == nullptr)
    return false;
  e->connection = std::move(connection);
  return true;
}

std::optional<job_master_connection> job_table::disconnect(const graph::job_id& job) {
  auto* e = get(job);
  if (e == nullptr || !e->connection)
    return std::nullopt;
  auto out = std::move(e->connection);
  e->connection.reset();
  return out;
}

std::optional<cluster::job_master_id> job_table::job_master_id_of(const graph::job_id& job) const {
  const auto* e = get(job);
  if (e == nullptr || !e->connection)
    return std::nullopt;
  return e->connection->job_master_id;
}

std::optional<graph::job_id> job_table::job_of_job_master(
  const cluster::resource_id& job_master) const {
  for (const auto& [id, e] : jobs_)
    if (e.connection && e.connection->job_master_resource_id == job_master)
      return id;
  return std::nullopt;
}

std::vector<graph::job_id> job_table::jobs() const {
  std::vector<graph::job_id> out;
  for (const auto& [id, e] : jobs_)
    out.push_back(id);
  return out;
}

} // namespace flint::task_executor
