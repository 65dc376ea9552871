// The job's parts beyond its details and plan (Flink's job, checkpoint and vertex handlers):
// its result, stop-with-savepoint, configuration, metrics, accumulators, resource
// requirements, checkpoint statistics and triggers, and each vertex's subtasks.

#include <charconv>

#include "runtime/rest/detail/json_parts.hpp"
#include "runtime/rest/detail/rest_server_impl.hpp"

namespace flint::rest {

using namespace detail;

namespace {

std::optional<std::string> param(const httplib::Request& req, const char* key) {
  if (!req.has_param(key))
    return std::nullopt;
  return req.get_param_value(key);
}

/// A whole number of the path; nullopt (and 400, naming `what`) otherwise.
template <class T>
std::optional<T> number_of(const std::string& text, const char* what, httplib::Response& res) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
    fail(res, 400,
         "Bad request, could not parse parameters: " + std::string(what) + " '" + text
           + "' is not a whole number.");
    return std::nullopt;
  }
  return value;
}

void vertex_not_found(httplib::Response& res, const std::string& vertex, const job_view& j) {
  fail(res, 404, "JobVertex " + vertex + " not found in job " + j.details.job_id.to_string() + ".");
}

/// Flink's SerializedThrowable as its REST serializer writes it, without the Java-serialized
/// bytes (there is no Java exception to serialize).
json failure_cause(const std::string& message) {
  return {{"class", "org.apache.flink.util.FlinkException"},
          {"stack-trace", message},
          {"serialized-throwable", nullptr}};
}

} // namespace

void rest_server::impl::job_routes(versioned_routes& s) {
  // One job and its parts: the job id is checked and the job asked for first.
  auto job_route = [this](auto view) {
    return [this, view](const httplib::Request& req, httplib::Response& res) {
      auto id = job_id_of(req.matches[1], res);
      if (!id)
        return;
      auto job = this->job(*id);
      if (!job)
        return fail(res, job.error());
      view(req, res, *job);
    };
  };
  // A vertex of a job: 404 when the builder finds none.
  auto vertex_route = [&](auto build) {
    return job_route(
      [build](const httplib::Request& req, httplib::Response& res, const job_view& j) {
        auto body = build(req, j);
        if (!body)
          return vertex_not_found(res, req.matches[2], j);
        reply(res, 200, std::move(*body));
      });
  };

  s.get(R"(/jobs/([^/]+)/execution-result)",
        job_route([](const httplib::Request&, httplib::Response& res, const job_view& j) {
          std::optional<job_outcome> outcome;
          const auto& d = j.details;
          if (graph::is_globally_terminal(d.status)) {
            outcome = job_outcome{d.status, d.end_time_ms - d.start_time_ms, {}};
            if (d.status == graph::job_status::failed && !j.report.failures.empty())
              outcome->failure_cause = j.report.failures.front().cause;
          }
          reply(res, 200, job_execution_result_json(d.job_id, outcome));
        }));
  s.get(R"(/jobs/([^/]+)/config)",
        job_route([](const httplib::Request&, httplib::Response& res, const job_view& j) {
          reply(res, 200, job_config_json(j));
        }));
  s.get(R"(/jobs/([^/]+)/metrics)",
        job_route([](const httplib::Request& req, httplib::Response& res, const job_view& j) {
          reply(res, 200, job_metrics_json(j, param(req, "get")));
        }));
  s.get(R"(/jobs/([^/]+)/accumulators)",
        job_route([](const httplib::Request&, httplib::Response& res, const job_view&) {
          reply(res, 200, job_accumulators_json());
        }));
  s.get(R"(/jobs/([^/]+)/resource-requirements)",
        job_route([](const httplib::Request&, httplib::Response& res, const job_view& j) {
          reply(res, 200, job_resource_requirements_json(j));
        }));
  // The dashboard's cancel button (Flink kept the YARN proxy's GET).
  s.get(
    R"(/jobs/([^/]+)/yarn-cancel)", [this](const httplib::Request& req, httplib::Response& res) {
      auto id = job_id_of(req.matches[1], res);
      if (!id)
        return;
      log->info("Cancelling job {} as a REST client ({}) asked.", id->to_string(), client_of(req));
      if (auto ok = cluster->cancel_job(*id); !ok)
        return fail(res, ok.error());
      reply(res, 202, "{}");
    });
  s.post(R"(/jobs/([^/]+)/stop)", [this](const httplib::Request& req, httplib::Response& res) {
    auto id = job_id_of(req.matches[1], res);
    if (!id)
      return;
    const char* bad = "Request did not match expected format StopWithSavepointRequestBody.";
    auto body = json::parse(req.body.empty() ? std::string("{}") : req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object())
      return fail(res, 400, bad);
    std::string target;
    if (body.contains("targetDirectory") && !body["targetDirectory"].is_null()) {
      if (!body["targetDirectory"].is_string())
        return fail(res, 400, bad);
      target = body["targetDirectory"].get<std::string>();
    }
    bool drain = false;
    if (body.contains("drain") && !body["drain"].is_null()) {
      if (!body["drain"].is_boolean())
        return fail(res, 400, bad);
      drain = body["drain"].get<bool>();
    }
    if (auto known = this->job(*id); !known)
      return fail(res, known.error());
    auto trigger = random_hex(16);
    auto started = savepoints.trigger(*id, trigger, [this, job = *id, target, drain] {
      return cluster->trigger_savepoint(job, target, true, drain);
    });
    if (!started)
      return fail(res, started.error());
    log->info("Stopping job {} with a savepoint{} (trigger id {}) as a REST client ({}) asked.",
              id->to_string(), drain ? " and draining it (event time to its end)" : "", trigger,
              client_of(req));
    reply(res, 202, json{{"request-id", trigger}}.dump());
  });

  // Checkpoints: the fixed paths before the trigger id's.
  s.get(R"(/jobs/([^/]+)/checkpoints/config)",
        job_route([](const httplib::Request&, httplib::Response& res, const job_view& j) {
          auto body = checkpoint_config_json(j);
          if (!body)
            return fail(
              res, 404,
              "Checkpointing is not enabled for this job (" + j.details.job_id.to_string() + ").");
          reply(res, 200, std::move(*body));
        }));
  s.get(R"(/jobs/([^/]+)/checkpoints/details/([^/]+))",
        job_route([](const httplib::Request& req, httplib::Response& res, const job_view& j) {
          auto cid = number_of<std::int64_t>(req.matches[2], "checkpoint id", res);
          if (!cid)
            return;
          auto body = checkpoint_details_json(j, *cid);
          if (!body)
            return fail(res, 404,
                        "Could not find checkpointing statistics for checkpoint "
                          + std::to_string(*cid) + ".");
          reply(res, 200, std::move(*body));
        }));
  s.get(R"(/jobs/([^/]+)/checkpoints/details/([^/]+)/subtasks/([^/]+))",
        job_route([](const httplib::Request& req, httplib::Response& res, const job_view& j) {
          auto cid = number_of<std::int64_t>(req.matches[2], "checkpoint id", res);
          if (!cid)
            return;
          auto body = checkpoint_subtasks_json(j, *cid, req.matches[3]);
          if (!body)
            return fail(res, 404,
                        "There is no checkpoint statistics for task " + std::string(req.matches[3])
                          + " of checkpoint " + std::to_string(*cid) + ".");
          reply(res, 200, std::move(*body));
        }));
  s.post(
    R"(/jobs/([^/]+)/checkpoints)", [this](const httplib::Request& req, httplib::Response& res) {
      auto id = job_id_of(req.matches[1], res);
      if (!id)
        return;
      const char* bad = "Request did not match expected format CheckpointTriggerRequestBody.";
      auto body = json::parse(req.body.empty() ? std::string("{}") : req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object())
        return fail(res, 400, bad);
      if (body.contains("checkpointType") && !body["checkpointType"].is_null()) {
        if (!body["checkpointType"].is_string())
          return fail(res, 400, bad);
        auto type = body["checkpointType"].get<std::string>();
        if (type != "CONFIGURED")
          return fail(res, 400,
                      "Bad request: checkpointType " + type
                        + " is not supported: Flint takes checkpoints of the type the job "
                          "configures (CONFIGURED).");
      }
      if (auto known = this->job(*id); !known)
        return fail(res, known.error());
      auto trigger = random_hex(16);
      auto started = cluster->trigger_checkpoint(*id);
      operation_results::result r;
      r.job = *id;
      if (started)
        r.checkpoint_id = *started;
      else
        r.failure = started.error().message;
      checkpoint_triggers.put(trigger, std::move(r));
      log->info("Triggered a checkpoint of job {} (trigger id {}) as a REST client ({}) asked: {}.",
                id->to_string(), trigger, client_of(req),
                started ? "checkpoint " + std::to_string(*started) : started.error().message);
      reply(res, 202, json{{"request-id", trigger}}.dump());
    });
  s.get(R"(/jobs/([^/]+)/checkpoints/([^/]+))",
        job_route([this](const httplib::Request& req, httplib::Response& res, const job_view& j) {
          auto op = checkpoint_triggers.find(req.matches[2]);
          if (!op || op->job != j.details.job_id)
            return fail(res, 404,
                        "There is no checkpoint operation with trigger id "
                          + std::string(req.matches[2]) + " for job " + j.details.job_id.to_string()
                          + ".");
          json a;
          if (!op->failure.empty()) {
            a["status"] = {{"id", "COMPLETED"}};
            a["operation"] = {{"failureCause", failure_cause(op->failure)}};
            return reply(res, 200, a.dump());
          }
          // How it ended: from the job's checkpoint history.
          std::string status = "IN_PROGRESS", why;
          bool found = false;
          for (const auto& e : j.report.checkpoint_history)
            if (e.id == op->checkpoint_id) {
              found = true;
              status = e.status;
              why = e.failure_message;
            }
          if (!found && j.report.checkpoints.latest_id >= op->checkpoint_id)
            status = "COMPLETED";
          else if (!found && graph::is_globally_terminal(j.details.status)) {
            status = "FAILED";
            why = "The job ended before the checkpoint completed.";
          }
          if (status == "IN_PROGRESS") {
            a["status"] = {{"id", "IN_PROGRESS"}};
            a["operation"] = nullptr;
          } else if (status == "COMPLETED") {
            a["status"] = {{"id", "COMPLETED"}};
            a["operation"] = {{"checkpointId", op->checkpoint_id}};
          } else {
            a["status"] = {{"id", "COMPLETED"}};
            a["operation"] = {{"failureCause",
                               failure_cause("Checkpoint " + std::to_string(op->checkpoint_id)
                                             + " failed: " + why)}};
          }
          reply(res, 200, a.dump());
        }));

  // Vertices: the fixed paths before the subtask index's.
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/metrics)",
        vertex_route([](const httplib::Request& req, const job_view& j) {
          return subtasks_metrics_json(j, req.matches[2], param(req, "get"), param(req, "agg"),
                                       param(req, "subtasks"));
        }));
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/accumulators)",
        vertex_route([](const httplib::Request& req, const job_view& j) {
          return subtasks_accumulators_json(j, req.matches[2]);
        }));
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/([^/]+))",
        job_route([](const httplib::Request& req, httplib::Response& res, const job_view& j) {
          auto n = number_of<std::int32_t>(req.matches[3], "subtask index", res);
          if (!n)
            return;
          auto body = subtask_details_json(j, req.matches[2], *n, now_ms());
          if (!body)
            return fail(res, 404,
                        "Subtask " + std::string(req.matches[3]) + " of JobVertex "
                          + std::string(req.matches[2]) + " not found in job "
                          + j.details.job_id.to_string() + ".");
          reply(res, 200, std::move(*body));
        }));
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/subtasktimes)",
        vertex_route([](const httplib::Request& req, const job_view& j) {
          return subtask_times_json(j, req.matches[2], now_ms());
        }));
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/taskmanagers)",
        vertex_route([](const httplib::Request& req, const job_view& j) {
          return vertex_task_managers_json(j, req.matches[2], now_ms());
        }));
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/accumulators)",
        vertex_route([](const httplib::Request& req, const job_view& j) {
          return vertex_accumulators_json(j, req.matches[2]);
        }));
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/metrics)",
        vertex_route([](const httplib::Request& req, const job_view& j) {
          return vertex_metrics_json(j, req.matches[2], param(req, "get"));
        }));
  // Flink's list of the subtasks' currentInputWatermark metrics, from the figures their
  // TaskExecutors send with each heartbeat (Long.MIN_VALUE: none yet, as Flink shows it).
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/watermarks)",
        vertex_route([](const httplib::Request& req, const job_view& j) {
          return vertex_watermarks_json(j, req.matches[2]);
        }));
}

} // namespace flint::rest
