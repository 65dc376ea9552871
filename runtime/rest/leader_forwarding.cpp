// A standby JobManager's REST endpoint answers as the leader's: a call that needs the leader
// (its Dispatcher or ResourceManager) is sent on to the leading JobManager's REST endpoint and
// its answer returned (Flink's standby REST endpoints answer through the leader's gateways), or,
// when the leader cannot be asked from here, the client is redirected there (307, method and
// body kept). 503 stays while no leader is known.

#include <array>
#include <cctype>
#include <regex>

#include "runtime/rest/detail/rest_server_impl.hpp"

namespace flint::rest {

namespace {

/// Carried by a forwarded request: a JobManager that gets one answers it itself and never
/// forwards it again, so two nodes that each take the other for the leader cannot loop.
constexpr const char* forwarded_header = "X-Flint-Forwarded-By";

/// What is not passed on: hop-by-hop headers, the ones the client computes again, and what
/// httplib adds to requests it received (REMOTE_ADDR, ...).
bool passed_on(const std::string& name) {
  static const std::array<const char*, 14> dropped = {
    "host",        "content-length", "transfer-encoding", "connection", "keep-alive",
    "expect",      "accept-encoding", "te",               "trailer",    "upgrade",
    "remote_addr", "remote_port",    "local_addr",        "local_port"};
  std::string lower;
  for (char c : name)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* d : dropped)
    if (lower == d)
      return false;
  return lower.rfind("proxy-", 0) != 0;
}

/// A TaskManager's file (its log, stdout, a file of its log directory): as large as the file, so
/// the client is sent to the leader for it instead of the standby holding the whole answer.
bool is_file_download(const std::string& path) {
  static const std::regex file_route(R"(^(/v1)?/taskmanagers/[^/]+/(log|stdout|logs/[^/]+)$)");
  return std::regex_match(path, file_route);
}

} // namespace

void rest_server::impl::forward_to_leader(const httplib::Request& req, httplib::Response& res) {
  static const std::string no_leader_body = errors_json(no_leader_message);
  if (res.status != 503 || res.body != no_leader_body || req.has_header(forwarded_header))
    return;
  auto leader = cluster->leader_rest_url();
  if (!leader)
    return;
  const auto target = req.target.empty() ? req.path : req.target;
  // Without a TLS client set up for it, an https leader is reached by the client itself; so is a
  // file download.
  if (leader->rfind("http://", 0) == 0 && !is_file_download(req.path)) {
    httplib::Client client(*leader);
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(60, 0);
    client.set_write_timeout(10, 0);
    httplib::Request forwarded;
    forwarded.method = req.method;
    forwarded.path = target;
    for (const auto& [name, value] : req.headers)
      if (passed_on(name))
        forwarded.headers.emplace(name, value);
    forwarded.set_header(forwarded_header, options.bind_address);
    // The leader's audit lines name the client, not this JobManager.
    forwarded.set_header("X-Forwarded-For", req.remote_addr);
    forwarded.body = req.body;
    if (auto answer = client.send(forwarded)) {
      res.status = answer->status;
      auto type = answer->get_header_value("Content-Type");
      res.set_content(answer->body, type.empty() ? json_type : type.c_str());
      if (answer->has_header("Location"))
        res.set_header("Location", answer->get_header_value("Location"));
      return;
    } else {
      log->warn("Could not forward {} {} to the leading JobManager's REST endpoint {}: {}; "
                "redirecting the client there.",
                req.method, target, *leader, httplib::to_string(answer.error()));
    }
  }
  res.status = 307;
  res.set_header("Location", *leader + target);
  res.set_content(errors_json("This JobManager does not lead: the leader's REST endpoint is "
                              + *leader + "."),
                  json_type);
}

} // namespace flint::rest
