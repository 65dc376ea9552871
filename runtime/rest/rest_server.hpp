#pragma once
/// The JobManager's REST endpoint (Flink's WebMonitorEndpoint): Flink's REST paths and JSON
/// shapes over a cluster_view, the dashboard's files at `/`, and job library uploads. Errors
/// are Flink's `{"errors": [...]}` with its status codes. Its own threads (cpp-httplib); no CAF
/// here: the cluster_view asks the gateways.
///
/// REST follows the cluster's rule: with `security.ssl.internal.enabled` only an authenticated
/// client may change anything, so unless the endpoint itself authenticates its clients (mutual
/// TLS, `security.ssl.rest.authentication-enabled`) every call but a read (GET, HEAD, OPTIONS)
/// answers 403, judged by its method before its body is read.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/fwd.h>

#include "runtime/common/expected.hpp"
#include "runtime/rest/cluster_view.hpp"
#include "runtime/rest/rest_tls.hpp"

namespace flint::rest {

struct rest_options {
  /// Interface and port spec (a port, a range, "0") to bind.
  std::string bind_address = "localhost";
  std::string bind_port = "8081";
  /// Larger request bodies get 413.
  std::int64_t max_content_length = 104857600;
  /// Where uploaded job libraries go (made when missing).
  std::filesystem::path upload_dir;
  bool submit_enabled = true;
  /// What an upload or run is answered (403) while submission is off.
  std::string submit_disabled_reason =
    "Job submission through REST is disabled (web.submit.enable: false).";
  /// What GET /jobmanager/config lists.
  std::vector<std::pair<std::string, std::string>> configuration;
  /// The dashboard's refresh interval (Flink's web.refresh-interval).
  std::int64_t refresh_interval_ms = 3000;
  /// `heartbeat.interval`: a heartbeat older than twice this is overdue in the "why" view.
  std::int64_t heartbeat_interval_ms = 10000;
  /// The node's log file (Flink's `log.file`): GET /jobmanager/log serves it, its `.out`
  /// sibling is /jobmanager/stdout, and /jobmanager/logs lists the files of its directory (and
  /// serves them by name, nothing outside it). Empty: the node serves no log files.
  std::filesystem::path log_file;
  /// `web.checkpoints.history`: how many checkpoints /jobs/:id/checkpoints lists.
  std::size_t checkpoint_history = 10;
  /// `security.ssl.rest.*`: HTTPS, and with authentication mutual TLS.
  rest_tls_options tls;
  /// `security.ssl.internal.enabled`: without `tls.authenticates()` the endpoint serves reads
  /// only (every other call answers 403, naming the keys to set).
  bool internal_tls = false;
};

class rest_server {
public:
  static expected<std::unique_ptr<rest_server>> start(rest_options options,
                                                      std::shared_ptr<cluster_view> cluster,
                                                      std::shared_ptr<spdlog::logger> log);
  ~rest_server();
  rest_server(const rest_server&) = delete;
  rest_server& operator=(const rest_server&) = delete;

  std::uint16_t port() const noexcept;
  /// Stops serving and waits for the threads (and any savepoint still pending). Idempotent.
  void stop();

private:
  rest_server() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace flint::rest
