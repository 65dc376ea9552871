// The JobManager's own views (its metrics, log files, environment, threads), a TaskManager's
// (what the JobManager knows of it), and savepoint disposal.

#include <fstream>

#include "runtime/rest/detail/json_parts.hpp"
#include "runtime/rest/detail/rest_server_impl.hpp"
#include "runtime/rest/node_files.hpp"

namespace flint::rest {

using namespace detail;

namespace {

/// Streams `file` as text (logs can be large: read as sent, not held whole).
void serve_file(httplib::Response& res, const std::filesystem::path& file) {
  auto in = std::make_shared<std::ifstream>(file, std::ios::binary);
  if (!*in)
    return fail(res, 404, "The file " + file.filename().string() + " cannot be read.");
  res.status = 200;
  res.set_content_provider("text/plain; charset=UTF-8", [in](std::size_t, httplib::DataSink& sink) {
    char buffer[64 * 1024];
    in->read(buffer, sizeof buffer);
    auto n = in->gcount();
    if (n > 0)
      sink.write(buffer, static_cast<std::size_t>(n));
    if (!*in)
      sink.done();
    return true;
  });
}

} // namespace

void rest_server::impl::node_routes(versioned_routes& s) {
  const auto log_dir = options.log_file.parent_path();

  s.get("/jobmanager/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    auto jobs = cluster->list_jobs();
    if (!jobs)
      return fail(res, jobs.error());
    auto resources = cluster->resource_overview();
    if (!resources)
      return fail(res, resources.error());
    std::int64_t running = 0;
    for (const auto& d : jobs->jobs)
      running += graph::is_globally_terminal(d.status) ? 0 : 1;
    // Flink's JobManager metrics.
    std::vector<std::pair<std::string, std::string>> metrics = {
      {"numRegisteredTaskManagers", std::to_string(resources->number_task_managers)},
      {"numRunningJobs", std::to_string(running)},
      {"taskSlotsAvailable", std::to_string(resources->number_free_slots)},
      {"taskSlotsTotal", std::to_string(resources->number_registered_slots)}};
    reply(
      res, 200,
      metric_list_json(metrics,
                       req.has_param("get") ? std::optional<std::string>(req.get_param_value("get"))
                                            : std::nullopt));
  });
  s.get("/jobmanager/log", [this](const httplib::Request&, httplib::Response& res) {
    if (options.log_file.empty())
      return fail(res, 404, "The JobManager has no log file: it logs to its standard error.");
    serve_file(res, options.log_file);
  });
  s.get("/jobmanager/stdout", [this](const httplib::Request&, httplib::Response& res) {
    auto out = options.log_file;
    if (out.empty() || !std::filesystem::is_regular_file(out.replace_extension(".out")))
      return fail(res, 404, "The file STDOUT does not exist on the JobManager.");
    serve_file(res, out);
  });
  s.get("/jobmanager/logs", [log_dir](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, log_list_json(log_dir));
  });
  // (.+): a name with a '/' (%2F decoded) reaches this route to be refused, not the dashboard's.
  s.get(R"(/jobmanager/logs/(.+))", [log_dir](const httplib::Request& req, httplib::Response& res) {
    std::string name = req.matches[1];
    if (!is_plain_file_name(name))
      return fail(
        res, 400,
        "Bad request: '" + name + "' is not the name of a file in the JobManager's log directory.");
    auto file = file_in(log_dir, name);
    if (!file)
      return fail(res, 404, "The file " + name + " does not exist on the JobManager.");
    serve_file(res, *file);
  });
  s.get("/jobmanager/environment", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, environment_json());
  });
  s.get("/jobmanager/thread-dump", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, thread_dump_json());
  });

  // A TaskManager's: the JobManager answers what it knows (its registration and the slots its
  // jobs hold there). Its files and threads are its own process's, which the JobManager cannot
  // read yet: those answer 404 naming why.
  auto task_manager_route = [this](auto view) {
    return [this, view](const httplib::Request& req, httplib::Response& res) {
      auto resources = cluster->resource_overview();
      if (!resources)
        return fail(res, resources.error());
      std::string id = req.matches[1];
      auto known =
        std::any_of(resources->task_managers.begin(), resources->task_managers.end(),
                    [&](const auto& tm) { return task_manager_id(tm.resource_id) == id; });
      if (!known)
        return fail(res, 404, "Could not find TaskExecutor " + id + ".");
      view(req, res, id);
    };
  };
  auto not_served = [](const std::string& what, const std::string& id) {
    return "The " + what + " of TaskManager " + id
      + " is not available through the JobManager: Flint's TaskManagers do not yet upload "
        "their files or thread dumps to it (read them on the TaskManager's host).";
  };
  s.get(
    R"(/taskmanagers/([^/]+)/metrics)",
    task_manager_route([](const httplib::Request& req, httplib::Response& res, const std::string&) {
      // The JobManager receives no TaskManager metrics (they go to its own reporter).
      reply(res, 200,
            metric_list_json({},
                             req.has_param("get")
                               ? std::optional<std::string>(req.get_param_value("get"))
                               : std::nullopt));
    }));
  s.get(R"(/taskmanagers/([^/]+)/log)",
        task_manager_route(
          [not_served](const httplib::Request&, httplib::Response& res, const std::string& id) {
            fail(res, 404, not_served("log file", id));
          }));
  s.get(R"(/taskmanagers/([^/]+)/stdout)",
        task_manager_route(
          [not_served](const httplib::Request&, httplib::Response& res, const std::string& id) {
            fail(res, 404, not_served("stdout file", id));
          }));
  s.get(R"(/taskmanagers/([^/]+)/logs)",
        task_manager_route(
          [not_served](const httplib::Request&, httplib::Response& res, const std::string& id) {
            fail(res, 404, not_served("log directory", id));
          }));
  s.get(R"(/taskmanagers/([^/]+)/logs/(.+))",
        task_manager_route(
          [not_served](const httplib::Request& req, httplib::Response& res, const std::string& id) {
            std::string name = req.matches[2];
            if (!is_plain_file_name(name))
              return fail(res, 400,
                          "Bad request: '" + name
                            + "' is not the name of a file in the TaskManager's log directory.");
            fail(res, 404, not_served("log file " + name, id));
          }));
  s.get(R"(/taskmanagers/([^/]+)/thread-dump)",
        task_manager_route(
          [not_served](const httplib::Request&, httplib::Response& res, const std::string& id) {
            fail(res, 404, not_served("thread dump", id));
          }));

  s.post("/savepoint-disposal", [this](const httplib::Request& req, httplib::Response& res) {
    const char* bad = "Request did not match expected format SavepointDisposalRequest.";
    auto body = json::parse(req.body.empty() ? std::string("{}") : req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || !body.contains("savepoint-path")
        || !body["savepoint-path"].is_string())
      return fail(res, 400, bad);
    auto path = body["savepoint-path"].get<std::string>();
    auto trigger = random_hex(16);
    auto done = cluster->dispose_savepoint(path);
    operation_results::result r;
    if (!done)
      r.failure = done.error().message;
    disposals.put(trigger, std::move(r));
    if (done)
      log->info("Disposed of savepoint {} as a REST client ({}) asked.", path, client_of(req));
    else
      log->warn("Could not dispose of savepoint {} as a REST client ({}) asked: {}", path,
                client_of(req), done.error().message);
    reply(res, 200, json{{"request-id", trigger}}.dump());
  });
  s.get(
    R"(/savepoint-disposal/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      auto op = disposals.find(req.matches[1]);
      if (!op)
        return fail(
          res, 404,
          "There is no savepoint disposal with trigger id " + std::string(req.matches[1]) + ".");
      json a;
      a["status"] = {{"id", "COMPLETED"}};
      if (op->failure.empty())
        a["operation"] = json::object();
      else
        a["operation"] = {{"failure-cause",
                           {{"class", "org.apache.flink.util.FlinkException"},
                            {"stack-trace", op->failure},
                            {"serialized-throwable", nullptr}}}};
      reply(res, 200, a.dump());
    });
}

} // namespace flint::rest
