#include "runtime/actors/dispatcher/dispatcher.hpp"

#include "runtime/actors/job_master/failover_settings.hpp"

#include "runtime/common/logging.hpp"
#include "runtime/ha/ha_stores.hpp"
#include "runtime/ha/job_graph_store.hpp"
#include "runtime/ha/job_result_store.hpp"

#include <mutex>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace flint::dispatcher {

/// The Dispatcher's election and leader id, read from its JobMasters' threads: a JobManager that
/// wakes after its ZooKeeper session expired must not act as leader on what it dequeues, so each
/// check asks the election (session and latch), not a flag that the revocation sets later.
struct dispatcher::leadership_probe {
  std::mutex mtx;
  leader::leader_election_service* election = nullptr;
  rpc::fencing_token token;

  void set(leader::leader_election_service* e, const rpc::fencing_token& id) {
    std::lock_guard<std::mutex> guard(mtx);
    election = e;
    token = id;
  }
  bool leads() {
    std::lock_guard<std::mutex> guard(mtx);
    return election != nullptr && election->has_leadership(token);
  }
};

dispatcher::dispatcher(caf::actor_config& cfg, rpc::endpoint_context ctx, dispatcher_config config,
                       dispatcher_services services)
  : rpc::rpc_endpoint(cfg, std::move(ctx)),
    config_(std::move(config)),
    services_(std::move(services)),
    log_(make_endpoint_logger(endpoint_id())),
    leadership_(std::make_shared<leadership_probe>()) {}

dispatcher::~dispatcher() = default;

void dispatcher::grant_leadership(const rpc::fencing_token& session_id) {
  caf::anon_send(caf::actor_cast<caf::actor>(this), rpc::run_atom::value,
                 std::function<void()>([this, session_id] {
                   set_token(session_id);
                   leadership_->set(election_.get(), session_id);
                   log_->info("Dispatcher {} was granted leadership with leader id {}.",
                              endpoint_id(), session_id.to_string());
                   // Jobs first, then the address: a client that finds this leader finds them.
                   recover_jobs();
                   if (election_)
                     election_->confirm_leadership(
                       session_id, {endpoint_id(), caf::actor_cast<caf::actor>(this), {}, 0});
                 }));
}

void dispatcher::revoke_leadership() {
  caf::anon_send(caf::actor_cast<caf::actor>(this), rpc::run_atom::value,
                 std::function<void()>([this] {
                   set_token({});
                   leadership_->set(nullptr, {});
                   suspend_jobs();
                 }));
}

void dispatcher::suspend_jobs() {
  // Flink's Dispatcher leader process closing on revocation: its JobMasters stop, their jobs stay
  // in the HA stores untouched (not terminal), and whoever leads next recovers them.
  for (auto& [id, job] : jobs_) {
    log_->info("Stopping the JobMaster for job {} ({}): the Dispatcher lost leadership.",
               job.graph.name, id.to_string());
    for (auto& waiting : job.waiting_for_result)
      waiting(make_error(errc::illegal_state,
                         "The Dispatcher lost leadership; job " + id.to_string()
                           + " continues under the next leader."));
    stop_job_master(job);
    state_.suspend_job(id);
  }
  jobs_.clear();
}

rpc::gateway dispatcher::job_master_gateway(const graph::job_id& id, const running_job& job) const {
  return rpc::gateway(job.job_master, std::string(job_master::endpoint_prefix) + id.to_string(),
                      job.job_master_id);
}

void dispatcher::on_start() {
  using rpc::fencing;

  handle_async<submit_job>(
    fencing::fenced, [this](submit_job_request req, rpc::reply_to<rpc::ack> reply) mutable {
      auto id = req.job_graph.job_id;
      log_->info("Received JobGraph submission '{}' ({}).", req.job_graph.name, id.to_string());
      // A job whose restart or failover settings are bad is refused here, naming the key.
      if (auto failover =
            job_master::make_failover_settings(config_.job_master.configuration, req.job_graph);
          !failover) {
        reply(make_error(errc::invalid_argument,
                         "Job " + id.to_string() + " was refused: " + failover.error().message));
        return;
      }
      if (services_.stores != nullptr) {
        auto& results = services_.stores->job_results();
        if (auto done = results.has_job_result_entry(id); !done || *done) {
          reply(done ? make_error(errc::rejected,
                                  "Job has already been submitted and reached a "
                                  "globally terminal state: "
                                    + id.to_string())
                     : done.error());
          return;
        }
      }
      if (state_.is_running(id) || state_.is_archived(id)) {
        reply(make_error(
          errc::rejected,
          "Job has already been submitted: " + id.to_string() + " (" + req.job_graph.name + ")"));
        return;
      }
      // Stored before it runs (Flink's Dispatcher#persistAndRunJob): a next leader recovers it.
      if (services_.stores != nullptr)
        if (auto put = services_.stores->job_graphs().put(req.job_graph); !put) {
          reply(make_error(put.error().code,
                           "Could not store job " + id.to_string()
                             + " in the JobGraphStore: " + put.error().message));
          return;
        }
      auto started = run_job(std::move(req.job_graph));
      if (!started && services_.stores != nullptr)
        (void)services_.stores->job_graphs().remove(id);
      if (!started)
        reply(started.error());
      else
        reply(rpc::ack{});
    });

  handle_async<list_jobs>(fencing::fenced, [this](rpc::ack, rpc::reply_to<job_list> reply) mutable {
    // Running jobs report their current status; the reply waits for all of them.
    struct gather {
      rpc::reply_to<job_list> reply;
      std::size_t left = 0;
    };
    auto g = std::make_shared<gather>(gather{std::move(reply), 0});
    for (auto& [id, job] : jobs_)
      if (job.job_master)
        ++g->left;
    if (g->left == 0) {
      g->reply(state_.list());
      return;
    }
    for (auto& [id, job] : jobs_) {
      if (!job.job_master)
        continue;
      job_master_gateway(id, job).ask<job_master::request_job_status>(
        *this, rpc::ack{},
        [this, g, job_id = id](expected<job_master::job_status_response> status) mutable {
          if (status)
            state_.set_status(job_id, status->status);
          if (--g->left == 0)
            g->reply(state_.list());
        });
    }
  });

  handle_async<cancel_job>(
    fencing::fenced, [this](job_id_request req, rpc::reply_to<rpc::ack> reply) mutable {
      auto i = jobs_.find(req.job_id);
      if (i == jobs_.end()) {
        if (auto d = state_.details(req.job_id))
          reply(make_error(errc::illegal_state,
                           "Job " + req.job_id.to_string() + " is already in terminal state "
                             + std::string(graph::to_string(d->status)) + "."));
        else
          reply(make_error(errc::not_found, "Job " + req.job_id.to_string() + " not found."));
        return;
      }
      if (!i->second.job_master) {
        // No JobMaster yet: the job ends here.
        job_reached_terminal_state({req.job_id, graph::job_status::canceled, {}, {}, 0});
        reply(rpc::ack{});
        return;
      }
      job_master_gateway(req.job_id, i->second)
        .ask<job_master::cancel>(*this, rpc::ack{},
                                 [reply](expected<rpc::ack> r) mutable { reply(std::move(r)); });
    });

  handle_async<trigger_savepoint>(
    fencing::fenced,
    [this](trigger_savepoint_request req,
           rpc::reply_to<job_master::savepoint_response> reply) mutable {
      auto i = jobs_.find(req.job_id);
      if (i == jobs_.end() || !i->second.job_master) {
        reply(make_error(errc::not_found,
                         "Job " + req.job_id.to_string() + " is not running: no savepoint."));
        return;
      }
      // A savepoint takes as long as its state takes to write: the JobMaster answers when it is
      // complete or failed (its own checkpoint time-out bounds it).
      job_master_gateway(req.job_id, i->second)
        .ask<job_master::trigger_savepoint>(
          *this, job_master::trigger_savepoint_request{req.target_directory, req.stop, req.drain},
          [reply](expected<job_master::savepoint_response> r) mutable { reply(std::move(r)); },
          std::chrono::hours(1));
    });

  handle_async<trigger_checkpoint>(
    fencing::fenced,
    [this](job_id_request req, rpc::reply_to<job_master::checkpoint_triggered> reply) mutable {
      auto i = jobs_.find(req.job_id);
      if (i == jobs_.end() || !i->second.job_master) {
        reply(make_error(errc::not_found,
                         "Job " + req.job_id.to_string() + " is not running: no checkpoint."));
        return;
      }
      job_master_gateway(req.job_id, i->second)
        .ask<job_master::trigger_checkpoint>(
          *this, rpc::ack{},
          [reply](expected<job_master::checkpoint_triggered> r) mutable { reply(std::move(r)); });
    });

  handle_async<request_job_status>(
    fencing::fenced,
    [this](job_id_request req, rpc::reply_to<job_master::job_status_response> reply) mutable {
      auto i = jobs_.find(req.job_id);
      if (i != jobs_.end() && i->second.job_master) {
        job_master_gateway(req.job_id, i->second)
          .ask<job_master::request_job_status>(
            *this, rpc::ack{},
            [reply](expected<job_master::job_status_response> r) mutable { reply(std::move(r)); });
        return;
      }
      if (auto archived = state_.final_report(req.job_id)) {
        reply(std::move(*archived));
        return;
      }
      if (auto d = state_.details(req.job_id)) {
        job_master::job_status_response running;
        running.status = d->status;
        reply(std::move(running));
        return;
      }
      reply(make_error(errc::not_found, "Job " + req.job_id.to_string() + " not found."));
    });

  handle_async<request_job_result>(
    fencing::fenced, [this](job_id_request req, rpc::reply_to<job_result> reply) mutable {
      if (auto r = state_.result(req.job_id)) {
        reply(*r);
        return;
      }
      auto i = jobs_.find(req.job_id);
      if (i == jobs_.end()) {
        reply(make_error(errc::not_found, "Job " + req.job_id.to_string() + " not found."));
        return;
      }
      i->second.waiting_for_result.push_back(std::move(reply));
    });

  // Flink's Dispatcher#onStop: stop the running JobMasters and terminate only once they did.
  set_down_handler([this](caf::down_msg& down) {
    stopping_job_masters_.erase(down.source);
    if (exit_reason_ && stopping_job_masters_.empty())
      quit(*exit_reason_);
  });
  set_exit_handler([this](caf::exit_msg& msg) {
    if (!msg.reason)
      return; // a normal exit of a linked actor: not ours (CAF's default handler ignores it too)
    if (exit_reason_ || msg.reason == caf::exit_reason::kill) {
      quit(msg.reason);
      return;
    }
    exit_reason_ = msg.reason;
    for (auto& [id, job] : jobs_)
      stop_job_master(job);
    if (stopping_job_masters_.empty()) {
      quit(*exit_reason_);
      return;
    }
    // A JobMaster that does not go within its time is not waited for longer.
    schedule_run_async([this] { quit(*exit_reason_); }, std::chrono::seconds(10));
  });

  election_ = services_.ha->dispatcher_election();
  election_->start(*this);
}

expected<unit> dispatcher::run_job(graph::job_graph graph) {
  auto id = graph.job_id;
  auto now = services_.now_ms ? services_.now_ms() : 0;
  if (auto added = state_.add_job(graph, now); !added)
    return added.error();
  auto& job = jobs_[id];
  job.graph = std::move(graph);
  job.runner = std::make_unique<job_master_runner>(
    *this, "job_master_runner/" + id.to_string(), services_.ha->job_master_election(id),
    [this, id](const rpc::fencing_token& token) { start_job_master(id, token); },
    [this, id] {
      if (auto i = jobs_.find(id); i != jobs_.end() && i->second.job_master)
        stop_job_master(i->second);
    });
  job.runner->start();
  return unit{};
}

void dispatcher::recover_jobs() {
  if (services_.stores == nullptr)
    return;
  auto& graphs = services_.stores->job_graphs();
  auto& results = services_.stores->job_results();
  auto ids = graphs.job_ids();
  if (!ids) {
    log_->error("Could not list the jobs of the JobGraphStore: {}; no job recovered.",
                ids.error().message);
    return;
  }
  auto now = services_.now_ms ? services_.now_ms() : 0;
  // Results left dirty by a leader that ended before its cleanup did: this leader answers for
  // the job and finishes the cleanup.
  if (auto dirty = results.dirty_results(); dirty) {
    for (const auto& entry : *dirty) {
      std::string name = "(finished under an earlier leader)";
      if (auto graph = graphs.recover(entry.job); graph)
        name = graph->name;
      log_->info("Job {} reached {} under an earlier leader: cleaning up.", entry.job.to_string(),
                 graph::to_string(entry.status));
      state_.archive_result(entry.job, name, entry.status, entry.failure_cause,
                            entry.net_runtime_ms, now);
      if (auto removed = graphs.remove(entry.job); removed)
        (void)results.mark_result_as_clean(entry.job);
    }
  } else {
    log_->warn("Could not read the dirty results of the JobResultStore: {}", dirty.error().message);
  }
  log_->info("Recovering {} job(s) from the JobGraphStore.", ids->size());
  for (const auto& id : *ids) {
    if (jobs_.count(id) > 0 || state_.is_archived(id))
      continue;
    auto done = results.has_job_result_entry(id);
    if (!done) {
      // Not knowing whether it ended, it is not run: a globally terminated job never runs again.
      log_->error("Could not tell whether job {} already ended ({}); not recovering it now.",
                  id.to_string(), done.error().message);
      continue;
    }
    if (*done) {
      log_->info("Job {} reached a globally terminal state before: not run again.", id.to_string());
      (void)graphs.remove(id);
      continue;
    }
    auto graph = graphs.recover(id);
    if (!graph && graph.error().code != errc::malformed_message
        && graph.error().code != errc::invalid_argument) {
      // Unreachable storage or ZooKeeper: the job is not lost, only not recoverable now.
      log_->error("Could not read job {} from the JobGraphStore now: {}", id.to_string(),
                  graph.error().message);
      continue;
    }
    if (!graph) {
      auto cause = "Could not recover job " + id.to_string() + ": " + graph.error().message;
      log_->error("{}", cause);
      state_.archive_result(id, "(unrecoverable job graph)", graph::job_status::failed, cause, 0,
                            now);
      // Recorded as failed so that no later leader tries again; its stored graph stays for
      // whoever wants to look at it.
      (void)results.create_dirty_result({id, graph::job_status::failed, cause, 0});
      (void)results.mark_result_as_clean(id);
      continue;
    }
    log_->info("Recovered job {} ({}).", graph->name, id.to_string());
    if (auto started = run_job(std::move(*graph)); !started)
      log_->error("Could not run recovered job {}: {}", id.to_string(), started.error().message);
  }
}

void dispatcher::clean_up_job(const job_master::job_master_result& result,
                              std::int64_t net_runtime_ms) {
  if (services_.stores == nullptr)
    return;
  auto& results = services_.stores->job_results();
  // The JobMaster recorded it before its checkpoints went (illegal_state: there is an entry).
  if (auto dirty = results.create_dirty_result(
        {result.job, result.status, result.failure_cause, net_runtime_ms});
      !dirty && dirty.error().code != errc::illegal_state) {
    // Without the result recorded the graph stays: a next leader would run the job again
    // rather than lose it.
    log_->error("Could not record the result of job {} in the JobResultStore: {}",
                result.job.to_string(), dirty.error().message);
    return;
  }
  if (auto removed = services_.stores->job_graphs().remove(result.job); !removed) {
    log_->warn("Could not remove job {} from the JobGraphStore: {}", result.job.to_string(),
               removed.error().message);
    return;
  }
  (void)results.mark_result_as_clean(result.job);
}

void dispatcher::start_job_master(const graph::job_id& id, const rpc::fencing_token& token) {
  auto i = jobs_.find(id);
  if (i == jobs_.end())
    return;
  auto& job = i->second;
  if (job.job_master)
    stop_job_master(job);
  auto self = caf::actor_cast<caf::actor>(this);
  job_master::job_master_services services;
  services.ha = services_.ha;
  services.directory = services_.directory;
  services.stores = services_.stores;
  if (election_)
    services.leads = [probe = leadership_] { return probe->leads(); };
  services.on_terminal = [self, this](job_master::job_master_result result) {
    caf::anon_send(self, rpc::run_atom::value,
                   std::function<void()>([this, result] { job_reached_terminal_state(result); }));
  };
  rpc::endpoint_context ctx{std::string(job_master::endpoint_prefix) + id.to_string(), recorder(),
                            rpc_settings()};
  job.job_master =
    spawn<job_master::job_master>(ctx, job.graph, token, config_.job_master, std::move(services));
  job.job_master_id = token;
  if (services_.directory != nullptr)
    services_.directory->put(ctx.endpoint_id, job.job_master);
  job.runner->confirm(token, {ctx.endpoint_id, job.job_master, {}, 0});
}

void dispatcher::stop_job_master(running_job& job) {
  if (!job.job_master)
    return;
  if (services_.directory != nullptr)
    services_.directory->remove(std::string(job_master::endpoint_prefix)
                                + job.graph.job_id.to_string());
  monitor(job.job_master);
  stopping_job_masters_.insert(job.job_master.address());
  send_exit(job.job_master, caf::exit_reason::user_shutdown);
  job.job_master = caf::actor{};
}

void dispatcher::job_reached_terminal_state(const job_master::job_master_result& result) {
  auto i = jobs_.find(result.job);
  if (i == jobs_.end())
    return;
  if (election_ && !leadership_->leads()) {
    // Nothing goes to the HA stores from a Dispatcher that lost its session: the job is the
    // next leader's, whatever this one's JobMaster saw.
    log_->warn("Ignoring the terminal state {} of job {}: this Dispatcher no longer leads.",
               graph::to_string(result.status), result.job.to_string());
    return;
  }
  auto now = services_.now_ms ? services_.now_ms() : 0;
  if (auto done = state_.finish_job(result.job, result.status, result.failure_cause, now); !done)
    return;
  auto report = result.report;
  report.failures = result.failures;
  report.restarts = result.restarts;
  report.plan = result.plan;
  report.vertices = result.vertices;
  state_.set_final_report(result.job, std::move(report));
  auto job_result = *state_.result(result.job);
  clean_up_job(result, job_result.net_runtime_ms);
  for (auto& waiting : i->second.waiting_for_result)
    waiting(job_result);
  stop_job_master(i->second);
  jobs_.erase(i); // the runner leaves the job's election
}

void dispatcher::on_exit() {
  for (auto& [id, job] : jobs_)
    stop_job_master(job);
  jobs_.clear();
  stopping_job_masters_.clear();
  leadership_->set(nullptr, {});
  if (election_)
    election_->stop();
  election_.reset();
  rpc::rpc_endpoint::on_exit();
}

} // namespace flint::dispatcher
