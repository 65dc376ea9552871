#pragma once
/// The REST endpoint's insides, shared by the files that register its routes (rest_server.cpp,
/// job_routes.cpp, jar_routes.cpp, node_routes.cpp): the answer helpers and the endpoint's
/// state. Included by those files only (it brings httplib and nlohmann::json).

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "runtime/http/http_service.hpp"
#include "runtime/http/httplib.hpp"
#include "runtime/rest/rest_json.hpp"
#include "runtime/rest/rest_server.hpp"
#include "runtime/rest/savepoint_operations.hpp"

namespace flint::rest {

namespace detail {

using json = nlohmann::ordered_json;

inline constexpr const char* json_type = "application/json; charset=UTF-8";

inline std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

inline void reply(httplib::Response& res, int status, std::string body) {
  res.status = status;
  res.set_content(std::move(body), json_type);
}

inline void fail(httplib::Response& res, int status, const std::string& message) {
  reply(res, status, errors_json(message));
}

/// A request that only reads: what stays open when changes are refused.
inline bool is_read(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

/// The request announces a body (which a refusal leaves unread).
inline bool carries_body(const httplib::Request& req) {
  if (req.has_header("Transfer-Encoding"))
    return true;
  auto length = req.get_header_value("Content-Length");
  return !length.empty() && length.find_first_not_of('0') != std::string::npos;
}

/// Refuses `req` before its body is read. A body that was announced stays unread in the
/// connection, where it would be taken for the next request: the connection ends with the
/// answer. (httplib decides keep-alive from the request alone; a content provider that returns
/// false once it has written everything is the one way a handler can end the connection.)
inline void refuse(const httplib::Request& req, httplib::Response& res, int status,
                   const std::string& message) {
  if (!carries_body(req))
    return fail(res, status, message);
  auto body = std::make_shared<const std::string>(errors_json(message));
  res.status = status;
  res.set_header("Connection", "close");
  res.set_content_provider(body->size(), json_type,
                           [body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                             sink.write(body->data() + offset, length);
                             return false;
                           });
}

/// Who asked, for the log: the peer's address and, with mutual TLS, its certificate's subject.
inline std::string client_of(const httplib::Request& req) {
  auto who = req.remote_addr + ":" + std::to_string(req.remote_port);
  if (auto subject = verified_client(req.ssl); !subject.empty())
    who += ", " + subject;
  return who;
}

/// The status code of a gateway error, as Flink's handlers map their exceptions.
inline int status_of(const error& e) {
  switch (e.code) {
    case errc::not_found: return 404;
    case errc::invalid_argument:
    case errc::malformed_message: return 400;
    case errc::illegal_state:
    case errc::rejected: return 409;
    case errc::unreachable:
    case errc::fencing_token_mismatch:
    case errc::timeout: return 503;
    default: return 500;
  }
}

inline void fail(httplib::Response& res, const error& e) {
  fail(res, status_of(e), e.message);
}

/// A job id of the path; a malformed one is a bad request, as in Flink.
inline std::optional<graph::job_id> job_id_of(const std::string& text, httplib::Response& res) {
  auto id = graph::job_id::from_string(text);
  if (!id) {
    fail(res, 400,
         "Bad request, could not parse parameters: Cannot parse JobID '" + text
           + "': it must be 32 hexadecimal characters.");
    return std::nullopt;
  }
  return *id;
}

inline std::string random_hex(std::size_t bytes) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) {
    auto b = rng() & 0xff;
    out += digits[b >> 4];
    out += digits[b & 0xf];
  }
  return out;
}

/// An uploaded library's own name, or nullopt when it is not a plain file name: a name with a
/// directory part (CVE-2020-17518 wrote "../../x" outside the upload directory), a hidden or
/// empty one, or one without Flint's library suffix.
inline std::optional<std::string> library_file_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name.front() == '.')
    return std::nullopt;
  for (char c : name)
    if (c == '/' || c == '\\' || c == '\0' || static_cast<unsigned char>(c) < 0x20)
      return std::nullopt;
  if (name.size() < 4 || name.substr(name.size() - 3) != ".so")
    return std::nullopt;
  return name;
}

/// Registers each route at its path and at `/v1` + its path: Flink serves its REST API under
/// both, and its Java clients (RestClusterClient, hence the Kubernetes operator) call `/v1/...`.
/// Refusals do not depend on the path (`admit` judges the method), so both are guarded alike.
class versioned_routes {
public:
  /// `after` (if set) runs after every handler, with its answer (a standby forwards answers that
  /// need the leader: leader_forwarding.cpp).
  explicit versioned_routes(httplib::Server& server, httplib::Server::Handler after = {})
    : server_(server),
      after_(std::move(after)) {}

  void get(const std::string& path, const httplib::Server::Handler& h) {
    server_.Get(path, wrap(h)).Get("/v1" + path, wrap(h));
  }
  void post(const std::string& path, const httplib::Server::Handler& h) {
    server_.Post(path, wrap(h)).Post("/v1" + path, wrap(h));
  }
  void patch(const std::string& path, const httplib::Server::Handler& h) {
    server_.Patch(path, wrap(h)).Patch("/v1" + path, wrap(h));
  }
  void del(const std::string& path, const httplib::Server::Handler& h) {
    server_.Delete(path, wrap(h)).Delete("/v1" + path, wrap(h));
  }

private:
  httplib::Server::Handler wrap(const httplib::Server::Handler& h) const {
    if (!after_)
      return h;
    return [h, after = after_](const httplib::Request& req, httplib::Response& res) {
      h(req, res);
      after(req, res);
    };
  }

  httplib::Server& server_;
  httplib::Server::Handler after_;
};

/// The outcomes of operations Flink's clients poll by trigger id that end at once (checkpoint
/// triggers, savepoint disposals): the newest 1024 kept.
class operation_results {
public:
  struct result {
    graph::job_id job;
    /// The checkpoint a trigger started; -1 for other operations.
    std::int64_t checkpoint_id = -1;
    /// Why it failed; empty when it did not.
    std::string failure;
  };

  void put(const std::string& trigger, result r) {
    std::lock_guard<std::mutex> lock(mutex_);
    results_.emplace_back(trigger, std::move(r));
    while (results_.size() > 1024)
      results_.pop_front();
  }
  std::optional<result> find(const std::string& trigger) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [t, r] : results_)
      if (t == trigger)
        return r;
    return std::nullopt;
  }

private:
  mutable std::mutex mutex_;
  std::deque<std::pair<std::string, result>> results_;
};

} // namespace detail

// The route files are this header's only includers.
using namespace detail;

struct rest_server::impl {
  rest_options options;
  std::shared_ptr<cluster_view> cluster;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<http::http_service> service;

  /// Why a call that changes something is refused (403); empty when changes are open.
  std::string changes_refused;

  savepoint_operations savepoints;
  /// Checkpoint triggers and savepoint disposals, by trigger id.
  detail::operation_results checkpoint_triggers;
  detail::operation_results disposals;

  /// Refusals are logged at most once a second, with the number left out in between: a flood
  /// of refused calls does not flood the log.
  std::mutex refusal_log_mutex;
  std::chrono::steady_clock::time_point last_refusal_logged{};
  std::uint64_t refusals_not_logged = 0;

  void log_refusal(const httplib::Request& req) {
    std::uint64_t not_logged = 0;
    {
      std::lock_guard<std::mutex> lock(refusal_log_mutex);
      auto now = std::chrono::steady_clock::now();
      if (last_refusal_logged.time_since_epoch().count() != 0
          && now - last_refusal_logged < std::chrono::seconds(1)) {
        ++refusals_not_logged;
        return;
      }
      last_refusal_logged = now;
      not_logged = std::exchange(refusals_not_logged, 0);
    }
    log->warn(
      "Refused {} {} from {}: REST serves reads only (security.ssl.internal.enabled is "
      "on and REST does not authenticate its clients){}.",
      req.method, req.path, client_of(req),
      not_logged == 0
        ? std::string()
        : "; " + std::to_string(not_logged) + " more refused since the last such line");
  }

  /// False (and `res` answered) for a request refused before routing: one without the verified
  /// client certificate mutual TLS asks for, or one that changes something while changes are
  /// refused.
  bool admit(const httplib::Request& req, httplib::Response& res) {
    if (options.tls.authenticates() && verified_client(req.ssl).empty()) {
      refuse(req, res, 401,
             "This REST endpoint requires a client certificate its truststore "
             "(security.ssl.rest.truststore) signed.");
      return false;
    }
    if (changes_refused.empty() || is_read(req.method))
      return true;
    log_refusal(req);
    refuse(req, res, 403, req.method + " " + req.path + " is refused: " + changes_refused);
    return false;
  }

  expected<job_view> job(const graph::job_id& id) {
    auto report = cluster->job_status(id);
    if (!report)
      return report.error();
    auto jobs = cluster->list_jobs();
    if (!jobs)
      return jobs.error();
    for (const auto& d : jobs->jobs)
      if (d.job_id == id)
        return job_view{d, std::move(*report)};
    return make_error(errc::not_found, "Job " + id.to_string() + " not found");
  }

  /// The jobs that have not ended, with their status reports (what a TaskManager's slots hold).
  std::vector<job_view> running_jobs() {
    std::vector<job_view> views;
    auto jobs = cluster->list_jobs();
    if (!jobs)
      return views;
    for (const auto& d : jobs->jobs) {
      if (graph::is_globally_terminal(d.status))
        continue;
      if (auto report = cluster->job_status(d.job_id))
        views.push_back(job_view{d, std::move(*report)});
    }
    return views;
  }

  /// The node's newest trace records (at most one fetch's worth), oldest first.
  std::vector<trace::record> recent_trace() {
    auto probe = cluster->fetch_trace({0, 1});
    if (!probe)
      return {};
    auto end = probe->recorded;
    auto from = end > trace::max_fetch_records ? end - trace::max_fetch_records : 0;
    auto page = cluster->fetch_trace({from, trace::max_fetch_records});
    return page ? std::move(page->records) : std::vector<trace::record>{};
  }

  void routes(httplib::Server& s);
  /// The job's parts beyond its details (job_routes.cpp): result, stop, configuration,
  /// metrics, checkpoints, vertices' subtasks.
  void job_routes(detail::versioned_routes& s);
  /// The JobManager's and TaskManagers' own views and savepoint disposal (node_routes.cpp).
  void node_routes(detail::versioned_routes& s);
  /// On a JobManager that does not lead, an answer that needed the leader (503, Flink's
  /// leader-election message) is replaced by the leader's own answer to the same request, or by
  /// a 307 redirect to it when the leader cannot be asked from here (leader_forwarding.cpp).
  void forward_to_leader(const httplib::Request& req, httplib::Response& res);
  void serve_asset(const httplib::Request& req, httplib::Response& res);
  void upload(const httplib::Request& req, httplib::Response& res);
  void list_uploads(httplib::Response& res);
  /// POST /jars/:id/run (jar_routes.cpp).
  void run(const httplib::Request& req, httplib::Response& res);
  /// GET or POST /jars/:id/plan (jar_routes.cpp).
  void plan(const httplib::Request& req, httplib::Response& res);
  /// The run a /jars/:id/run or /plan request asks for, from its body or else its query (as
  /// Flink's JarHandlerUtils reads them); nullopt (and `res` answered) when it is malformed.
  std::optional<library_run> library_run_of(const httplib::Request& req, httplib::Response& res,
                                            const char* body_name);
  /// The uploaded library named `id` in the upload directory; nullopt (and 404) otherwise.
  std::optional<std::filesystem::path> upload_named(const std::string& id, httplib::Response& res);
};

} // namespace flint::rest
