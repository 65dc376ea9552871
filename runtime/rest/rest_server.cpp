#include "runtime/rest/rest_server.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/elf_symbols.hpp"
#include "runtime/common/job_entry_symbols.hpp"
#include "runtime/common/node_files.hpp"
#include "runtime/http/http_service.hpp"
#include "runtime/http/httplib.hpp"
#include "runtime/rest/detail/rest_server_impl.hpp"
#include "runtime/rest/rest_json.hpp"
#include "runtime/rest/savepoint_operations.hpp"
#include "runtime/rest/web_assets.hpp"

namespace flint::rest {

using namespace detail;

void rest_server::impl::serve_asset(const httplib::Request& req, httplib::Response& res) {
  // The files are a table compiled in: a path is looked up, never opened, so no path of a
  // request (CVE-2020-17519's "..%252f" included) reaches the file system.
  auto asset = find_web_asset(req.path);
  if (!asset) {
    fail(res, 404, "Not found: " + req.path);
    return;
  }
  res.status = 200;
  res.set_content(reinterpret_cast<const char*>(asset->data), asset->size,
                  std::string(asset->content_type).c_str());
}

void rest_server::impl::upload(const httplib::Request& req, httplib::Response& res) {
  if (!options.submit_enabled) {
    fail(res, 403, options.submit_disabled_reason);
    return;
  }
  if (!req.is_multipart_form_data() || !req.has_file("jarfile")) {
    fail(res, 400, "Exactly 1 file must be sent, as the multipart form field 'jarfile'.");
    return;
  }
  auto file = req.get_file_value("jarfile");
  auto name = library_file_name(file.filename);
  if (!name) {
    log->warn("Refusing the upload of '{}': not a plain job library file name (*.so)",
              file.filename);
    fail(res, 400,
         "The uploaded file's name must be a plain file name ending in .so, not '" + file.filename
           + "'.");
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(options.upload_dir, ec);
  // Flink's <uuid>_<name>: the directory part comes from us alone.
  auto target = options.upload_dir / (random_hex(16) + "_" + *name);
  {
    std::ofstream out(target, std::ios::binary);
    out.write(file.content.data(), static_cast<std::streamsize>(file.content.size()));
    if (!out) {
      std::filesystem::remove(target, ec);
      fail(res, 500, "Could not store the upload in " + options.upload_dir.string());
      return;
    }
  }
  log->info("Stored the uploaded job library {} ({} bytes)", target.string(), file.content.size());
  reply(res, 200, json{{"filename", target.string()}, {"status", "success"}}.dump());
}

namespace {

/// Flink's JarListInfo "entry": the library's entries by the names `entryClass` and `flint run
/// -c` take (the default FLINT_JOB_ENTRY as flint_job_main, then each FLINT_JOB_NAMED_ENTRY),
/// read from its symbol table: an upload is not loaded to be listed. None for a file that is not
/// a library.
json library_entries(const std::filesystem::path& file) {
  json entries = json::array();
  auto image = node_files::read_file_chunk(file, 0, std::int64_t{1} << 30);
  if (!image)
    return entries;
  const std::string_view bytes(image->data.data(), image->data.size());
  auto main = exported_functions(bytes, FLINT_JOB_MAIN_SYMBOL);
  if (main && std::find(main->begin(), main->end(), FLINT_JOB_MAIN_SYMBOL) != main->end())
    entries.push_back({{"name", FLINT_JOB_MAIN_SYMBOL}, {"description", nullptr}});
  if (auto named = exported_functions(bytes, FLINT_JOB_NAMED_ENTRY_PREFIX))
    for (const auto& name : *named)
      entries.push_back({{"name", name.substr(std::string_view(FLINT_JOB_NAMED_ENTRY_PREFIX).size())},
                         {"description", nullptr}});
  return entries;
}

} // namespace

void rest_server::impl::list_uploads(httplib::Response& res) {
  json files = json::array();
  std::error_code ec;
  for (std::filesystem::directory_iterator i(options.upload_dir, ec), end; !ec && i != end;
       i.increment(ec)) {
    if (!i->is_regular_file())
      continue;
    auto id = i->path().filename().string();
    auto cut = id.find('_');
    auto written = std::filesystem::last_write_time(i->path(), ec);
    // file_clock to system time by the two clocks' distance now (no clock_cast in g++ 12).
    std::int64_t uploaded = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()
                              - (std::filesystem::file_time_type::clock::now() - written))
                              .count();
    json file;
    file["id"] = id;
    file["name"] = cut == std::string::npos ? id : id.substr(cut + 1);
    file["uploaded"] = uploaded;
    file["entry"] = library_entries(i->path());
    files.push_back(std::move(file));
  }
  reply(res, 200, json{{"address", ""}, {"files", std::move(files)}}.dump());
}

std::optional<std::filesystem::path> rest_server::impl::upload_named(const std::string& id,
                                                                     httplib::Response& res) {
  // Only a name this directory holds: no separator, no "..".
  if (id.find('/') == std::string::npos && id.find("..") == std::string::npos
      && std::filesystem::is_regular_file(options.upload_dir / id))
    return options.upload_dir / id;
  fail(res, 404, "Jar file " + id + " does not exist in " + options.upload_dir.string() + ".");
  return std::nullopt;
}

void rest_server::impl::routes(httplib::Server& server) {
  versioned_routes s{server, [this](const httplib::Request& req, httplib::Response& res) {
                       forward_to_leader(req, res);
                     }};
  s.get("/config", [this](const httplib::Request&, httplib::Response& res) {
    reply(res, 200,
          dashboard_config_json(options.submit_enabled && changes_refused.empty(),
                                changes_refused.empty(), options.refresh_interval_ms));
  });
  s.get("/overview", [this](const httplib::Request&, httplib::Response& res) {
    auto jobs = cluster->list_jobs();
    if (!jobs)
      return fail(res, jobs.error());
    auto resources = cluster->resource_overview();
    if (!resources)
      return fail(res, resources.error());
    reply(res, 200, cluster_overview_json(*jobs, *resources));
  });
  s.get("/jobs", [this](const httplib::Request&, httplib::Response& res) {
    auto jobs = cluster->list_jobs();
    if (!jobs)
      return fail(res, jobs.error());
    reply(res, 200, jobs_json(*jobs));
  });
  s.get("/jobs/overview", [this](const httplib::Request&, httplib::Response& res) {
    auto jobs = cluster->list_jobs();
    if (!jobs)
      return fail(res, jobs.error());
    std::vector<job_view> views;
    for (const auto& d : jobs->jobs) {
      auto report = cluster->job_status(d.job_id);
      views.push_back(job_view{d, report ? std::move(*report) : job_master::job_status_response{}});
    }
    reply(res, 200, jobs_overview_json(views, now_ms()));
  });
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
  s.get(R"(/jobs/([^/]+))",
        job_route([](const httplib::Request&, httplib::Response& res, const job_view& j) {
          reply(res, 200, job_details_json(j, now_ms()));
        }));
  s.get(R"(/jobs/([^/]+)/plan)",
        job_route([](const httplib::Request&, httplib::Response& res, const job_view& j) {
          reply(res, 200, job_plan_json(j));
        }));
  s.get(R"(/jobs/([^/]+)/exceptions)",
        job_route([](const httplib::Request&, httplib::Response& res, const job_view& j) {
          reply(res, 200, job_exceptions_json(j));
        }));
  s.get(R"(/jobs/([^/]+)/checkpoints)",
        job_route([this](const httplib::Request&, httplib::Response& res, const job_view& j) {
          reply(res, 200, job_checkpoints_json(j, options.checkpoint_history));
        }));
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+))",
        job_route([](const httplib::Request& req, httplib::Response& res, const job_view& j) {
          auto body = vertex_details_json(j, req.matches[2], now_ms());
          if (!body)
            return fail(res, 404,
                        "JobVertex " + std::string(req.matches[2]) + " not found in job "
                          + j.details.job_id.to_string() + ".");
          reply(res, 200, std::move(*body));
        }));
  s.get(R"(/jobs/([^/]+)/vertices/([^/]+)/backpressure)",
        job_route([](const httplib::Request& req, httplib::Response& res, const job_view& j) {
          auto body = vertex_backpressure_json(j, req.matches[2], now_ms());
          if (!body)
            return fail(res, 404,
                        "JobVertex " + std::string(req.matches[2]) + " not found in job "
                          + j.details.job_id.to_string() + ".");
          reply(res, 200, std::move(*body));
        }));
  s.patch(R"(/jobs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    auto id = job_id_of(req.matches[1], res);
    if (!id)
      return;
    auto mode = req.has_param("mode") ? req.get_param_value("mode") : std::string("cancel");
    if (mode != "cancel")
      return fail(res, 400,
                  "Bad request, could not parse parameters: invalid mode '" + mode
                    + "' (only 'cancel' is supported).");
    log->info("Cancelling job {} as a REST client ({}) asked.", id->to_string(), client_of(req));
    if (auto ok = cluster->cancel_job(*id); !ok)
      return fail(res, ok.error());
    reply(res, 202, "{}");
  });
  s.post(
    R"(/jobs/([^/]+)/savepoints)", [this](const httplib::Request& req, httplib::Response& res) {
      auto id = job_id_of(req.matches[1], res);
      if (!id)
        return;
      auto body = json::parse(req.body.empty() ? std::string("{}") : req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object())
        return fail(res, 400, "Request did not match expected format SavepointTriggerRequestBody.");
      std::string target;
      bool stop = false;
      if (body.contains("target-directory")) {
        if (!body["target-directory"].is_string() && !body["target-directory"].is_null())
          return fail(res, 400,
                      "Request did not match expected format SavepointTriggerRequestBody.");
        if (body["target-directory"].is_string())
          target = body["target-directory"].get<std::string>();
      }
      if (body.contains("cancel-job")) {
        if (!body["cancel-job"].is_boolean())
          return fail(res, 400,
                      "Request did not match expected format SavepointTriggerRequestBody.");
        stop = body["cancel-job"].get<bool>();
      }
      if (auto known = this->job(*id); !known)
        return fail(res, known.error());
      auto trigger = random_hex(16);
      auto started = savepoints.trigger(*id, trigger, [this, job = *id, target, stop] {
        return cluster->trigger_savepoint(job, target, stop);
      });
      if (!started)
        return fail(res, started.error());
      log->info("Triggering a savepoint of job {} (trigger id {}) as a REST client ({}) asked.",
                id->to_string(), trigger, client_of(req));
      reply(res, 202, json{{"request-id", trigger}}.dump());
    });
  s.get(R"(/jobs/([^/]+)/savepoints/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          auto id = job_id_of(req.matches[1], res);
          if (!id)
            return;
          auto op = savepoints.find(*id, req.matches[2]);
          if (!op)
            return fail(res, 404,
                        "There is no savepoint operation with trigger id "
                          + std::string(req.matches[2]) + " for job " + id->to_string() + ".");
          json j;
          if (!op->done) {
            j["status"] = {{"id", "IN_PROGRESS"}};
            j["operation"] = nullptr;
          } else {
            j["status"] = {{"id", "COMPLETED"}};
            if (op->failure.empty())
              j["operation"] = {{"location", op->location}};
            else
              j["operation"] = {{"failure-cause",
                                 {{"class", "org.apache.flink.util.FlinkException"},
                                  {"stack-trace", op->failure}}}};
          }
          reply(res, 200, j.dump());
        });
  s.get(R"(/jobs/([^/]+)/why)", [this](const httplib::Request& req, httplib::Response& res) {
    auto id = job_id_of(req.matches[1], res);
    if (!id)
      return;
    auto job = this->job(*id);
    if (!job)
      return fail(res, job.error());
    std::optional<resource_manager::resource_overview> resources;
    if (auto o = cluster->resource_overview())
      resources = std::move(*o);
    reply(res, 200,
          job_why_json(*job, resources, recent_trace(), now_ms(), options.heartbeat_interval_ms));
  });
  s.get("/trace", [this](const httplib::Request& req, httplib::Response& res) {
    trace::fetch_trace_request ask;
    try {
      if (req.has_param("from"))
        ask.from_sequence = std::stoull(req.get_param_value("from"));
      ask.max_records = req.has_param("max")
        ? static_cast<std::uint32_t>(std::min<unsigned long long>(
          std::stoull(req.get_param_value("max")), trace::max_fetch_records))
        : trace::default_fetch_records;
    } catch (const std::exception&) {
      return fail(res, 400, "Bad request, could not parse parameters: from and max are numbers.");
    }
    auto page = cluster->fetch_trace(ask);
    if (!page)
      return fail(res, page.error());
    if (req.has_param("job")) {
      // The records of one job: those its endpoints ("job_master/<jid>") sent or received.
      auto jid = req.get_param_value("job");
      std::erase_if(page->records, [&](const trace::record& r) {
        return r.from.find(jid) == std::string::npos && r.to.find(jid) == std::string::npos;
      });
    }
    reply(res, 200, trace_json(*page));
  });
  s.get("/taskmanagers", [this](const httplib::Request&, httplib::Response& res) {
    auto resources = cluster->resource_overview();
    if (!resources)
      return fail(res, resources.error());
    reply(res, 200, task_managers_json(*resources));
  });
  s.get(R"(/taskmanagers/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    auto resources = cluster->resource_overview();
    if (!resources)
      return fail(res, resources.error());
    auto body = task_manager_json(*resources, req.matches[1], running_jobs());
    if (!body)
      return fail(res, 404, "Could not find TaskExecutor " + std::string(req.matches[1]) + ".");
    reply(res, 200, std::move(*body));
  });
  s.get("/jobmanager/config", [this](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, key_values_json(options.configuration));
  });
  s.post("/jars/upload",
         [this](const httplib::Request& req, httplib::Response& res) { upload(req, res); });
  s.get("/jars", [this](const httplib::Request&, httplib::Response& res) { list_uploads(res); });
  s.post(R"(/jars/([^/]+)/run)",
         [this](const httplib::Request& req, httplib::Response& res) { run(req, res); });
  s.get(R"(/jars/([^/]+)/plan)",
        [this](const httplib::Request& req, httplib::Response& res) { plan(req, res); });
  s.post(R"(/jars/([^/]+)/plan)",
         [this](const httplib::Request& req, httplib::Response& res) { plan(req, res); });
  s.del(R"(/jars/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    auto path = upload_named(req.matches[1], res);
    if (!path)
      return;
    std::error_code ec;
    std::filesystem::remove(*path, ec);
    reply(res, 200, "{}");
  });
  job_routes(s);
  node_routes(s);
  server.Get(
    ".*", [this](const httplib::Request& req, httplib::Response& res) { serve_asset(req, res); });
}

expected<std::unique_ptr<rest_server>> rest_server::start(rest_options options,
                                                          std::shared_ptr<cluster_view> cluster,
                                                          std::shared_ptr<spdlog::logger> log) {
  std::unique_ptr<rest_server> r(new rest_server);
  r->impl_ = std::make_unique<impl>();
  auto& m = *r->impl_;
  m.options = std::move(options);
  m.cluster = std::move(cluster);
  m.log = std::move(log);
  if (m.options.internal_tls && !m.options.tls.authenticates())
    m.changes_refused =
      "security.ssl.internal.enabled is true, so only authenticated clients may change the "
      "cluster, and this REST endpoint does not authenticate its clients. Reads stay open. To "
      "cancel, stop, savepoint or submit through REST, set security.ssl.rest.enabled: true and "
      "security.ssl.rest.authentication-enabled: true with security.ssl.rest.keystore and "
      "security.ssl.rest.truststore (PEM); or use the flint CLI, which speaks mutual TLS.";
  std::unique_ptr<httplib::Server> server;
  if (m.options.tls.enabled) {
    error setup_failure = make_error(errc::internal, "cannot set up TLS for the REST endpoint");
    auto tls_server = std::make_unique<httplib::SSLServer>([&](SSL_CTX& ctx) {
      auto ok = configure_server_context(ctx, m.options.tls);
      if (!ok)
        setup_failure = ok.error();
      return ok.has_value();
    });
    if (!tls_server->is_valid())
      return setup_failure;
    server = std::move(tls_server);
  } else {
    server = std::make_unique<httplib::Server>();
  }
  // httplib serves a connection on one thread for as long as it is kept alive, and a slow or
  // half-open client holds its thread until the read times out: enough threads for a hundred
  // dashboards or scripts at once (flint-bench rest), and short keep-alives so that idle
  // connections give their threads back.
  server->new_task_queue = [] { return new httplib::ThreadPool(128); };
  server->set_read_timeout(5, 0);
  server->set_write_timeout(5, 0);
  server->set_keep_alive_timeout(2);
  // Headers and body go out in two writes: without TCP_NODELAY the second waits for the
  // client's delayed ACK (40 ms a response).
  server->set_tcp_nodelay(true);
  server->set_payload_max_length(static_cast<std::size_t>(m.options.max_content_length));
  auto* self = &m;
  // Judged on the request line and headers, before any body is read: curl's
  // "Expect: 100-continue" is answered with the refusal, so its body is never sent; otherwise
  // the pre-routing handler runs before httplib reads the body.
  server->set_expect_100_continue_handler(
    [self](const httplib::Request& req, httplib::Response& res) {
      return self->admit(req, res) ? 100 : res.status;
    });
  server->set_pre_routing_handler([self](const httplib::Request& req, httplib::Response& res) {
    if (!self->admit(req, res))
      return httplib::Server::HandlerResponse::Handled;
    // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 6.3),
    // but httplib 0.11 reads every POST, PUT, PATCH and DELETE body until the connection ends:
    // `curl -X PATCH .../jobs/<id>?mode=cancel` waited for the read timeout and got 400. Said in
    // the headers, httplib reads none. (`req` is httplib's own mutable request, lent as const.)
    if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding"))
      const_cast<httplib::Request&>(req).set_header("Content-Length", "0");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server->set_error_handler([self](const httplib::Request& req, httplib::Response& res) {
    // Already answered (a body, or a refusal's content provider).
    if (!res.body.empty() || res.has_header("Content-Type"))
      return;
    if (res.status == 413)
      fail(res, 413,
           "Request body is larger than rest.server.max-content-length ("
             + std::to_string(self->options.max_content_length) + " bytes).");
    else if (res.status == 404)
      fail(res, 404, "Not found: " + req.path);
    else
      fail(res, res.status, "Request failed with HTTP status " + std::to_string(res.status) + ".");
  });
  server->set_exception_handler(
    [self](const httplib::Request& req, httplib::Response& res, std::exception_ptr e) {
      std::string what = "unknown error";
      try {
        if (e)
          std::rethrow_exception(e);
      } catch (const std::exception& x) {
        what = x.what();
      } catch (...) {
      }
      self->log->error("REST handler for {} {} failed: {}", req.method, req.path, what);
      fail(res, 500, "Internal server error: " + what);
    });
  m.routes(*server);
  auto service =
    http::http_service::start(std::move(server), m.options.bind_address, m.options.bind_port,
                              "rest.bind-port", "the REST endpoint");
  if (!service)
    return service.error();
  m.service = std::move(*service);
  return r;
}

std::uint16_t rest_server::port() const noexcept {
  return impl_ && impl_->service ? impl_->service->port() : 0;
}

void rest_server::stop() {
  if (!impl_)
    return;
  if (impl_->service)
    impl_->service->stop();
  impl_->savepoints.stop();
}

rest_server::~rest_server() {
  stop();
}

} // namespace flint::rest
