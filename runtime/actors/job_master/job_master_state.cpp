#include "runtime/actors/job_master/job_master_state.hpp"

#include "runtime/actors/slot_pool/slot_pool_state.hpp"
#include "runtime/graph/json_plan.hpp"

namespace flint::job_master {

using graph::job_status;

// -- the job ------------------------------------------------------------------------------------

void job_master_state::set_scheduler(std::unique_ptr<scheduler> s) {
  scheduler_ = std::move(s);
  plan_ = scheduler_ ? graph::json_execution_plan(scheduler_->graph().job_graph(), -1) : "";
}

void job_master_state::update_task_io(const task_io_report& report) {
  for (const auto& t : report.tasks) {
    auto& kept = task_io_[t.attempt];
    // A heartbeat answered before the final report arrived must not replace it.
    if (kept.final && !report.final)
      continue;
    kept.figures = t;
    kept.final = report.final;
  }
}

job_status job_master_state::status() const {
  if (result_)
    return result_->status;
  return scheduler_ ? scheduler_->status() : job_status::created;
}

bool job_master_state::is_globally_terminated() const {
  return result_ && is_globally_terminal(result_->status);
}

void job_master_state::fail_before_start(const std::string& cause) {
  result_ = job_master_result{job_, job_status::failed, cause, {}, 0};
}

bool job_master_state::reach_terminal_state(job_status status, const std::string& cause) {
  if (terminal_reported_)
    return false;
  terminal_reported_ = true;
  result_ = job_master_result{job_, status, cause, {}, 0};
  if (scheduler_) {
    auto report = status_report();
    result_->failures = std::move(report.failures);
    result_->restarts = report.restarts;
    result_->plan = std::move(report.plan);
    result_->vertices = std::move(report.vertices);
  }
  return true;
}

job_status_response job_master_state::status_report() const {
  job_status_response r;
  r.status = status();
  r.registered_task_managers = static_cast<std::int32_t>(task_managers_.size());
  if (!scheduler_)
    return r;
  for (const auto& e : scheduler_->exception_history().entries())
    r.failures.push_back(job_failure{e.timestamp, e.task_name, e.location, e.root_cause});
  r.restarts = scheduler_->exception_history().restarts();
  const auto& graph = scheduler_->graph();
  const auto& vertices = graph.vertices();
  r.plan = plan_;
  for (const auto& ejv : graph.job_vertices()) {
    const auto& jv = graph.job_graph().vertices[ejv.job_vertex];
    vertex_status vs;
    vs.id = jv.id.to_string();
    vs.name = jv.name;
    vs.parallelism = ejv.parallelism;
    vs.max_parallelism = ejv.max_parallelism;
    for (std::int32_t i = 0; i < ejv.parallelism; ++i) {
      auto v = ejv.first_vertex + static_cast<std::uint32_t>(i);
      const auto& execution = vertices[v].current_execution;
      subtask_status st;
      st.subtask = i;
      st.attempt = execution.attempt_number();
      st.status = execution.state();
      auto slot = scheduler_->slot_of(v);
      if (!slot)
        slot = scheduler_->deployed_to(v);
      if (slot) {
        st.task_manager = slot->location.id;
        st.host = slot->location.host;
      }
      st.start_time = scheduler_->deploying_at_ms(v);
      if (graph::is_terminal(st.status))
        st.end_time = scheduler_->ended_at_ms(v);
      if (auto io = task_io_.find(graph.attempt_id(v)); io != task_io_.end()) {
        st.io = io->second.figures;
        st.io_final = io->second.final;
      }
      vs.subtasks.push_back(std::move(st));
    }
    r.vertices.push_back(std::move(vs));
  }
  r.tasks = static_cast<std::int32_t>(vertices.size());
  for (const auto& v : vertices)
    if (v.current_execution.state() == graph::execution_state::running)
      ++r.tasks_running;
  auto pending = scheduler_->pending_slot_requests();
  r.slots_needed = static_cast<std::int32_t>(scheduler_->shared_slot_count());
  r.slots_assigned = r.slots_needed - static_cast<std::int32_t>(pending.size());
  for (const auto& [request, age] : pending)
    r.pending_slot_requests.push_back(
      pending_slot_request{slot_pool::to_string(request),
                           std::chrono::duration_cast<std::chrono::milliseconds>(age).count()});
  return r;
}

// -- task executors -----------------------------------------------------------------------------

bool job_master_state::accepts_task_managers() const {
  return scheduler_ && !is_globally_terminated();
}

void job_master_state::add_task_manager(const cluster::resource_id& id,
                                        task_manager_connection connection,
                                        const caf::actor_addr& watched) {
  task_managers_.emplace(id, std::move(connection));
  watched_task_managers_[watched] = id;
}

expected<const task_manager_connection*> job_master_state::known_task_manager(
  const cluster::resource_id& id) const {
  if (const auto* c = task_manager(id))
    return c;
  return make_error(errc::rejected, "Unknown TaskManager " + id);
}

const task_manager_connection* job_master_state::task_manager(
  const cluster::resource_id& id) const {
  auto i = task_managers_.find(id);
  return i == task_managers_.end() ? nullptr : &i->second;
}

std::optional<job_master_state::removed_task_manager> job_master_state::remove_task_manager(
  const cluster::resource_id& id) {
  auto i = task_managers_.find(id);
  if (i == task_managers_.end())
    return std::nullopt;
  removed_task_manager out{std::move(i->second), std::nullopt};
  task_managers_.erase(i);
  for (auto w = watched_task_managers_.begin(); w != watched_task_managers_.end(); ++w)
    if (w->second == id) {
      out.watched = w->first;
      watched_task_managers_.erase(w);
      break;
    }
  return out;
}

std::optional<cluster::resource_id> job_master_state::task_manager_down(
  const caf::actor_addr& actor) {
  auto i = watched_task_managers_.find(actor);
  if (i == watched_task_managers_.end())
    return std::nullopt;
  auto id = i->second;
  watched_task_managers_.erase(i);
  return id;
}

// -- resource manager ---------------------------------------------------------------------------

resource_manager_leader_change job_master_state::notify_resource_manager_leader(
  const leader::leader_address& address, const cluster::resource_manager_id& id) {
  if (is_globally_terminated())
    return resource_manager_leader_change::ignore;
  if (address.empty() || id.is_nil()) {
    rm_leader_.reset();
    return resource_manager_leader_change::lost;
  }
  if (rm_ && rm_->id == id && rm_->address == address.endpoint_id)
    return resource_manager_leader_change::unchanged;
  rm_leader_ = std::make_pair(address, id);
  return resource_manager_leader_change::connect;
}

std::uint64_t job_master_state::begin_resource_manager_connection(
  rpc::gateway gateway, const cluster::resource_manager_id& id, const std::string& address,
  std::string directory_key) {
  if (directory_key.empty())
    directory_key = address;
  rm_.emplace(resource_manager_connection{
    std::move(gateway), id, address, std::move(directory_key), {}, false});
  return ++rm_generation_;
}

bool job_master_state::resource_manager_registered(std::uint64_t generation,
                                                   const cluster::resource_id& resource_id) {
  if (!rm_ || generation != rm_generation_)
    return false;
  rm_->established = true;
  rm_->resource_id = resource_id;
  return true;
}

std::optional<resource_manager_connection> job_master_state::close_resource_manager_connection() {
  if (!rm_)
    return std::nullopt;
  ++rm_generation_;
  auto out = std::move(rm_);
  rm_.reset();
  return out;
}

std::optional<std::pair<leader::leader_address, cluster::resource_manager_id>>
job_master_state::reconnect_target() const {
  if (!rm_leader_ || is_globally_terminated())
    return std::nullopt;
  return rm_leader_;
}

void job_master_state::drop_peers() {
  task_managers_.clear();
  watched_task_managers_.clear();
  rm_.reset();
  rm_leader_.reset();
}

} // namespace flint::job_master
