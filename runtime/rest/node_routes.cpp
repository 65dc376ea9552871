// The JobManager's own views (its metrics, log files, environment, threads), a TaskManager's
// (what the JobManager knows of it, and its log files and threads as its TaskExecutor sends
// them), and savepoint disposal.

#include <algorithm>
#include <functional>

#include "runtime/rest/detail/json_parts.hpp"
#include "runtime/rest/detail/rest_server_impl.hpp"
#include "runtime/rest/node_files.hpp"

namespace flint::rest {

using namespace detail;

namespace {

/// Where a served file's pieces come from: the piece at an offset and the file's size then.
using chunk_source = std::function<expected<node_files::file_chunk>(std::int64_t offset)>;

/// Serves a file piece by piece as text (logs can be large: read as sent, never held whole). The
/// first piece is read before answering, so a file that cannot be read gets its error status;
/// the answer ends at the size the first piece reported (a log still growing is cut there).
void serve_file(httplib::Response& res, const chunk_source& source) {
  auto first = source(0);
  if (!first)
    return fail(res, first.error());
  struct progress {
    std::int64_t size;
    std::int64_t offset = 0;
    std::vector<char> pending;
  };
  auto p = std::make_shared<progress>(progress{first->size, 0, std::move(first->data)});
  res.status = 200;
  res.set_content_provider("text/plain; charset=UTF-8",
                           [p, source](std::size_t, httplib::DataSink& sink) {
                             if (p->pending.empty() && p->offset < p->size) {
                               auto next = source(p->offset);
                               // A piece that cannot be read breaks the answer off (no final
                               // chunk), so the client sees a failed download, not a short file.
                               if (!next)
                                 return false;
                               p->pending = std::move(next->data);
                             }
                             if (p->pending.empty() || p->offset >= p->size) {
                               sink.done();
                               return true;
                             }
                             auto n = std::min<std::int64_t>(
                               static_cast<std::int64_t>(p->pending.size()), p->size - p->offset);
                             sink.write(p->pending.data(), static_cast<std::size_t>(n));
                             p->offset += n;
                             p->pending.clear();
                             return true;
                           });
}

/// This node's own file, in pieces of 1 MiB.
chunk_source local_file(const std::filesystem::path& file) {
  return [file](std::int64_t offset) {
    return node_files::read_file_chunk(file, offset, std::int64_t{1} << 20);
  };
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
    serve_file(res, local_file(options.log_file));
  });
  s.get("/jobmanager/stdout", [this](const httplib::Request&, httplib::Response& res) {
    auto out = node_files::stdout_file_of(options.log_file);
    if (out.empty() || !std::filesystem::is_regular_file(out))
      return fail(res, 404, "The file STDOUT does not exist on the JobManager.");
    serve_file(res, local_file(out));
  });
  s.get("/jobmanager/logs", [log_dir](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, log_list_json(node_files::list_log_files(log_dir)));
  });
  // (.+): a name with a '/' (%2F decoded) reaches this route to be refused, not the dashboard's.
  s.get(R"(/jobmanager/logs/(.+))", [log_dir](const httplib::Request& req, httplib::Response& res) {
    std::string name = req.matches[1];
    if (!node_files::is_plain_file_name(name))
      return fail(
        res, 400,
        "Bad request: '" + name + "' is not the name of a file in the JobManager's log directory.");
    auto file = node_files::file_in(log_dir, name);
    if (!file)
      return fail(res, 404, "The file " + name + " does not exist on the JobManager.");
    serve_file(res, local_file(*file));
  });
  s.get("/jobmanager/environment", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, environment_json());
  });
  s.get("/jobmanager/thread-dump", [](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, thread_dump_json(node_files::thread_dump()));
  });

  // A TaskManager's: what the JobManager knows of it (its registration, the slots its jobs hold
  // there), and its own files and threads, which the TaskExecutor sends when asked (Flink's
  // TaskManagerLogFileHandler, TaskManagerLogListHandler, TaskManagerThreadDumpHandler).
  auto task_manager_route = [this](auto view) {
    return [this, view](const httplib::Request& req, httplib::Response& res) {
      auto resources = cluster->resource_overview();
      if (!resources)
        return fail(res, resources.error());
      std::string id = req.matches[1];
      auto tm = std::find_if(resources->task_managers.begin(), resources->task_managers.end(),
                             [&](const auto& t) { return task_manager_id(t.resource_id) == id; });
      if (tm == resources->task_managers.end())
        return fail(res, 404, "Could not find TaskExecutor " + id + ".");
      view(req, res, tm->address);
    };
  };
  auto task_manager_file_route = [this, task_manager_route](task_manager_file file) {
    return task_manager_route([this, file](const httplib::Request& req, httplib::Response& res,
                                           const std::string& address) {
      auto which = file;
      if (which.type.empty()) {
        which.name = req.matches[2];
        if (!node_files::is_plain_file_name(which.name))
          return fail(res, 400,
                      "Bad request: '" + which.name
                        + "' is not the name of a file in the TaskManager's log directory.");
      }
      auto view = cluster;
      serve_file(res, [view, address, which](std::int64_t offset) -> expected<node_files::file_chunk> {
        auto chunk = view->task_manager_file_chunk(address, which, offset);
        if (!chunk)
          return chunk.error();
        return node_files::file_chunk{chunk->size, std::move(chunk->data)};
      });
    });
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
  s.get(R"(/taskmanagers/([^/]+)/log)", task_manager_file_route({"LOG", {}}));
  s.get(R"(/taskmanagers/([^/]+)/stdout)", task_manager_file_route({"STDOUT", {}}));
  // (.+): a name with a '/' (%2F decoded) reaches this route to be refused.
  s.get(R"(/taskmanagers/([^/]+)/logs/(.+))", task_manager_file_route({}));
  s.get(R"(/taskmanagers/([^/]+)/logs)",
        task_manager_route(
          [this](const httplib::Request&, httplib::Response& res, const std::string& address) {
            auto logs = cluster->task_manager_logs(address);
            if (!logs)
              return fail(res, logs.error());
            std::vector<node_files::log_file_info> list;
            for (const auto& l : logs->logs)
              list.push_back({l.name, l.size, l.mtime});
            reply(res, 200, log_list_json(list));
          }));
  s.get(R"(/taskmanagers/([^/]+)/thread-dump)",
        task_manager_route(
          [this](const httplib::Request&, httplib::Response& res, const std::string& address) {
            auto dump = cluster->task_manager_thread_dump(address);
            if (!dump)
              return fail(res, dump.error());
            std::vector<node_files::thread_info> threads;
            for (const auto& t : dump->thread_infos)
              threads.push_back({t.thread_name, t.stringified_thread_info});
            reply(res, 200, thread_dump_json(threads));
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
