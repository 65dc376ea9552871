// The REST endpoint's own rules, over real sockets, against a fake cluster_view that records what
// it is asked and holds each savepoint until the test lets it complete: which calls are refused
// with internal TLS on (and that the refusal comes before the body), and that savepoint requests
// cannot pile up threads in the JobManager; that every path is served under /v1 too, and a
// request without a body needs no Content-Length.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "runtime/http/httplib.hpp"
#include "runtime/rest/rest_server.hpp"
#include "runtime/rest/savepoint_operations.hpp"

using namespace flint;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

/// Polls `cond` every 20 ms until it holds or `timeout` passed.
template <class F>
bool eventually(F cond, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

const graph::job_id the_job{0x0123456789abcdefULL, 0x0123456789abcdefULL};

/// A cluster of one running job. Records cancels, savepoints and runs; each savepoint waits
/// until `complete_savepoints` is called.
class fake_cluster_view final : public rest::cluster_view {
public:
  expected<dispatcher::job_list> list_jobs() override {
    dispatcher::job_list list;
    dispatcher::job_details d;
    d.job_id = the_job;
    d.name = "endless";
    d.status = graph::job_status::running;
    list.jobs.push_back(d);
    return list;
  }
  expected<job_master::job_status_response> job_status(const graph::job_id& job) override {
    if (job != the_job)
      return make_error(errc::not_found, "Job " + job.to_string() + " not found");
    job_master::job_status_response r;
    r.status = graph::job_status::running;
    return r;
  }
  expected<unit> cancel_job(const graph::job_id& job) override {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_.push_back(job);
    return unit{};
  }
  expected<resource_manager::resource_overview> resource_overview() override {
    return resource_manager::resource_overview{};
  }
  expected<std::string> trigger_savepoint(const graph::job_id&, const std::string&, bool,
                                          bool) override {
    std::unique_lock<std::mutex> lock(mutex_);
    ++savepoints_;
    auto round = completed_rounds_;
    released_.wait(lock, [&] { return completed_rounds_ > round; });
    return std::string("file:/tmp/savepoint-") + std::to_string(round);
  }
  expected<std::int64_t> trigger_checkpoint(const graph::job_id&) override {
    return make_error(errc::illegal_state, "The fake cluster takes no checkpoints.");
  }
  expected<unit> dispose_savepoint(const std::string&) override {
    return make_error(errc::invalid_argument, "The fake cluster has no savepoints.");
  }
  expected<trace::fetch_trace_response> fetch_trace(const trace::fetch_trace_request&) override {
    return trace::fetch_trace_response{};
  }
  expected<graph::job_id> run_library(const rest::library_run& run) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++runs_;
    last_run_ = run;
    return the_job;
  }
  expected<std::string> plan_library(const rest::library_run& run) override {
    std::lock_guard<std::mutex> lock(mutex_);
    last_run_ = run;
    return std::string(R"({"jid":"x","name":"planned","nodes":[]})");
  }
  /// What the last run or plan asked for.
  rest::library_run last_run() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_run_;
  }

  /// Lets every savepoint asked so far complete (asked: counted in `savepoints()`).
  void complete_savepoints() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++completed_rounds_;
    released_.notify_all();
  }
  std::size_t cancels() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cancelled_.size();
  }
  int savepoints() {
    std::lock_guard<std::mutex> lock(mutex_);
    return savepoints_;
  }
  int runs() {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_;
  }

private:
  std::mutex mutex_;
  std::condition_variable released_;
  std::vector<graph::job_id> cancelled_;
  int savepoints_ = 0;
  int runs_ = 0;
  int completed_rounds_ = 0;
  rest::library_run last_run_;
};

/// The threads of this process (the JobManager's, here), as the kernel lists them.
std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

struct rest_fixture {
  std::shared_ptr<fake_cluster_view> view = std::make_shared<fake_cluster_view>();
  std::filesystem::path dir;
  std::unique_ptr<rest::rest_server> server;

  explicit rest_fixture(bool internal_tls, rest::rest_tls_options tls = {}) {
    dir = std::filesystem::temp_directory_path()
      / ("flint_rest_server_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    rest::rest_options o;
    o.bind_address = "127.0.0.1";
    o.bind_port = "0";
    o.upload_dir = dir / "uploads";
    o.internal_tls = internal_tls;
    o.tls = std::move(tls);
    auto log = std::make_shared<spdlog::logger>(
      "rest", std::make_shared<spdlog::sinks::null_sink_mt>());
    auto started = rest::rest_server::start(std::move(o), view, log);
    REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
    server = std::move(*started);
  }
  ~rest_fixture() {
    view->complete_savepoints(); // none may outlive the test
    server.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", server->port());
    c.set_read_timeout(10, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }

  /// A plain socket to the endpoint; its reads give up after `timeout`.
  int connect_raw(std::chrono::seconds timeout) const {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    timeval tv{static_cast<time_t>(timeout.count()), 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server->port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    return fd;
  }
};

/// Everything the server sends until it ends the connection or `fd`'s read timeout passes;
/// `closed` tells which. (A server that closes with request bytes unread resets the connection:
/// what it sent before is still read, then the reset.)
std::string read_all(int fd, bool& closed) {
  std::string got;
  char buf[4096];
  closed = false;
  for (;;) {
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n == 0) {
      closed = true;
      return got;
    }
    if (n < 0) {
      closed = errno == ECONNRESET;
      return got;
    }
    got.append(buf, static_cast<std::size_t>(n));
  }
}

json errors_of(const httplib::Result& r) {
  REQUIRE(r);
  auto body = json::parse(r->body, nullptr, false);
  REQUIRE(body.is_object());
  REQUIRE(body["errors"].is_array());
  REQUIRE(body["errors"].size() == 1);
  return body["errors"][0];
}

} // namespace

TEST_CASE("REST with internal TLS on and no REST authentication: every call that changes "
          "something answers 403 naming the keys to set, reads stay open, the cluster is not "
          "asked") {
  rest_fixture f(true);
  auto http = f.client();
  const auto job = "/jobs/" + the_job.to_string();

  auto jobs = http.Get("/jobs");
  REQUIRE(jobs);
  CHECK(jobs->status == 200);
  auto details = http.Get(job.c_str());
  REQUIRE(details);
  CHECK(details->status == 200);

  auto cancel = http.Patch((job + "?mode=cancel").c_str());
  REQUIRE(cancel);
  CHECK(cancel->status == 403);
  auto why = errors_of(cancel).get<std::string>();
  CAPTURE(why);
  CHECK(why.find("security.ssl.internal.enabled") != std::string::npos);
  CHECK(why.find("security.ssl.rest.authentication-enabled") != std::string::npos);
  CHECK(why.find("security.ssl.rest.enabled") != std::string::npos);

  auto savepoint = http.Post((job + "/savepoints").c_str(), R"({"cancel-job": false})",
                             "application/json");
  REQUIRE(savepoint);
  CHECK(savepoint->status == 403);
  errors_of(savepoint);

  httplib::MultipartFormDataItems library = {
    {"jarfile", "payload", "wordcount.so", "application/octet-stream"}};
  auto upload = http.Post("/jars/upload", library);
  REQUIRE(upload);
  CHECK(upload->status == 403);
  auto run = http.Post("/jars/x_wordcount.so/run", "{}", "application/json");
  REQUIRE(run);
  CHECK(run->status == 403);
  auto remove = http.Delete("/jars/x_wordcount.so");
  REQUIRE(remove);
  CHECK(remove->status == 403);
  // A method or path no route knows is no way around it.
  auto put = http.Put(job.c_str(), "{}", "application/json");
  REQUIRE(put);
  CHECK(put->status == 403);

  // The dashboard hides what it may not do.
  auto config = http.Get("/config");
  REQUIRE(config);
  CHECK(json::parse(config->body)["features"]["web-submit"] == false);
  CHECK(json::parse(config->body)["features"]["web-cancel"] == false);

  CHECK(f.view->cancels() == 0);
  CHECK(f.view->savepoints() == 0);
  CHECK(f.view->runs() == 0);
  CHECK_FALSE(std::filesystem::exists(f.dir / "uploads"));
}

TEST_CASE("REST with internal TLS off: the same calls reach the cluster") {
  rest_fixture f(false);
  auto http = f.client();
  auto cancel = http.Patch(("/jobs/" + the_job.to_string() + "?mode=cancel").c_str());
  REQUIRE(cancel);
  CHECK(cancel->status == 202);
  CHECK(f.view->cancels() == 1);
}

TEST_CASE("REST refuses a call by its method and path before reading its body") {
  rest_fixture f(true);
  const std::string head = "POST /jars/upload HTTP/1.1\r\n"
                           "Host: 127.0.0.1\r\n"
                           "Content-Type: multipart/form-data; boundary=xyz\r\n"
                           "Content-Length: 104857600\r\n";

  SUBCASE("a 100 MB upload of which only the headers and 1 KiB are sent is answered at once") {
    int fd = f.connect_raw(5s);
    auto request = head + "\r\n" + std::string(1024, 'x');
    REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL)
            == static_cast<ssize_t>(request.size()));
    auto began = std::chrono::steady_clock::now();
    bool closed = false;
    auto answer = read_all(fd, closed);
    auto took = std::chrono::steady_clock::now() - began;
    ::close(fd);
    CAPTURE(answer);
    CHECK(answer.rfind("HTTP/1.1 403", 0) == 0);
    CHECK(answer.find("Connection: close") != std::string::npos);
    CHECK(answer.find("security.ssl.rest.authentication-enabled") != std::string::npos);
    // The server ended the connection itself instead of waiting for the rest of the body (it
    // would otherwise wait for its 5 s read timeout and then answer something else).
    CHECK(closed);
    CHECK(took < 3s);
  }

  SUBCASE("a client that waits for 100-continue is refused and never sends its body") {
    int fd = f.connect_raw(5s);
    auto request = head + "Expect: 100-continue\r\n\r\n";
    REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL)
            == static_cast<ssize_t>(request.size()));
    bool closed = false;
    auto answer = read_all(fd, closed);
    ::close(fd);
    CAPTURE(answer);
    CHECK(answer.rfind("HTTP/1.1 403", 0) == 0);
    CHECK(answer.find("100 Continue") == std::string::npos);
    CHECK(closed);
  }

  SUBCASE("a refused body is not taken for the next request on the connection") {
    int fd = f.connect_raw(5s);
    const std::string smuggled = "GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    auto request = "DELETE /jars/x_wordcount.so HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
      + std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled;
    REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL)
            == static_cast<ssize_t>(request.size()));
    bool closed = false;
    auto answer = read_all(fd, closed);
    ::close(fd);
    CAPTURE(answer);
    CHECK(answer.rfind("HTTP/1.1 403", 0) == 0);
    CHECK(answer.find("HTTP/1.1 200") == std::string::npos);
    CHECK(closed);
  }

  // The endpoint serves on.
  auto jobs = f.client().Get("/jobs");
  REQUIRE(jobs);
  CHECK(jobs->status == 200);
  CHECK(f.view->runs() == 0);
}

TEST_CASE("REST: one savepoint per job is pending at a time, and the thread that waits for it "
          "ends with it (200 savepoint POSTs leave the thread count where it was)") {
  rest_fixture f(false);
  auto http = f.client();
  const auto path = "/jobs/" + the_job.to_string() + "/savepoints";
  // Once a request is served, httplib's pool has all its threads (it makes them before it
  // accepts).
  REQUIRE(http.Get("/jobs"));
  const auto before = thread_count();

  std::string trigger;
  int accepted = 0, conflicts = 0;
  for (int i = 0; i < 200; ++i) {
    auto r = http.Post(path.c_str(), "{}", "application/json");
    REQUIRE(r);
    if (r->status == 202) {
      ++accepted;
      trigger = json::parse(r->body)["request-id"].get<std::string>();
    } else if (r->status == 409) {
      ++conflicts;
      if (conflicts == 1) {
        auto why = errors_of(r).get<std::string>();
        CAPTURE(why);
        CHECK(why.find("already in progress") != std::string::npos);
      }
    }
  }
  CHECK(accepted == 1);
  CHECK(conflicts == 199);
  // One thread waits for the one pending savepoint; no request added another.
  CHECK(thread_count() <= before + 1);
  REQUIRE(eventually([&] { return f.view->savepoints() == 1; }, 10s));

  auto pending = http.Get((path + "/" + trigger).c_str());
  REQUIRE(pending);
  CHECK(json::parse(pending->body)["status"]["id"] == "IN_PROGRESS");

  f.view->complete_savepoints();
  REQUIRE(eventually(
    [&] {
      auto r = http.Get((path + "/" + trigger).c_str());
      return r && json::parse(r->body)["status"]["id"] == "COMPLETED";
    },
    10s));
  auto done = http.Get((path + "/" + trigger).c_str());
  REQUIRE(done);
  CHECK(json::parse(done->body)["operation"]["location"] == "file:/tmp/savepoint-0");
  // The waiting thread has ended with its savepoint.
  CHECK(eventually([&] { return thread_count() == before; }, 10s));

  // The job may have its next savepoint now.
  auto next = http.Post(path.c_str(), "{}", "application/json");
  REQUIRE(next);
  CHECK(next->status == 202);
  REQUIRE(eventually([&] { return f.view->savepoints() == 2; }, 10s));
  f.view->complete_savepoints();
  CHECK(eventually([&] { return thread_count() == before; }, 10s));
}

TEST_CASE("savepoint operations: one pending per job, jobs independent, failures kept, the "
          "oldest results forgotten, stop waits for the pending and refuses new ones") {
  rest::savepoint_operations ops(2);
  const graph::job_id other{1, 2};
  std::promise<expected<std::string>> first, second;
  auto first_result = first.get_future().share();
  auto second_result = second.get_future().share();
  REQUIRE(ops.trigger(the_job, "a", [first_result] { return first_result.get(); }));
  auto again = ops.trigger(the_job, "b", [] { return expected<std::string>(std::string("x")); });
  REQUIRE_FALSE(again);
  CHECK(again.error().code == errc::illegal_state);
  CHECK(again.error().message.find("trigger id a") != std::string::npos);
  REQUIRE(ops.trigger(other, "c", [second_result] { return second_result.get(); }));
  CHECK_FALSE(ops.find(other, "a")); // a trigger id belongs to its job
  CHECK_FALSE(ops.find(the_job, "a")->done);

  first.set_value(make_error(errc::rejected, "checkpoint declined"));
  REQUIRE(eventually([&] { return ops.find(the_job, "a")->done; }, 10s));
  CHECK(ops.find(the_job, "a")->failure == "checkpoint declined");
  REQUIRE(ops.trigger(the_job, "d", [] { return expected<std::string>(std::string("/sp/d")); }));
  REQUIRE(eventually([&] { return ops.find(the_job, "d")->done; }, 10s));
  CHECK(ops.find(the_job, "d")->location == "/sp/d");
  // Two results are kept: the third completed forgets the first.
  second.set_value(std::string("/sp/c"));
  REQUIRE(eventually([&] { auto c = ops.find(other, "c"); return c && c->done; }, 10s));
  CHECK_FALSE(ops.find(the_job, "a"));
  CHECK(ops.find(the_job, "d"));

  std::promise<expected<std::string>> last;
  auto last_result = last.get_future().share();
  REQUIRE(ops.trigger(the_job, "e", [last_result] { return last_result.get(); }));
  std::thread release([&] { last.set_value(std::string("/sp/e")); });
  ops.stop(); // returns once "e" is done, whenever it is released
  CHECK(ops.find(the_job, "e")->done);
  release.join();
  auto late = ops.trigger(other, "f", [] { return expected<std::string>(std::string("/sp/f")); });
  REQUIRE_FALSE(late);
  CHECK(late.error().code == errc::unreachable);
}

TEST_CASE("REST over HTTPS: without client authentication anyone may read and, with internal TLS "
          "on, nothing changes; with it, a client certificate the truststore signed may cancel") {
  const auto certs = std::filesystem::temp_directory_path()
    / ("flint_rest_server_test_certs_" + std::to_string(::getpid()));
  std::filesystem::remove_all(certs);
  const auto make = std::string(FLINT_SOURCE_DIR) + "/deploy/gen-certs.sh " + certs.string()
    + " localhost alice >/dev/null";
  REQUIRE(std::system(make.c_str()) == 0);
  const auto ca = (certs / "ca.pem").string();
  const auto alice = (certs / "alice.pem").string();
  const auto cancel = "/jobs/" + the_job.to_string() + "?mode=cancel";
  rest::rest_tls_options tls;
  tls.enabled = true;
  tls.keystore = (certs / "localhost.pem").string();
  tls.truststore = ca;

  SUBCASE("HTTPS only") {
    rest_fixture f(true, tls);
    httplib::SSLClient anyone("localhost", f.server->port());
    anyone.set_ca_cert_path(ca.c_str());
    anyone.enable_server_certificate_verification(true);
    auto jobs = anyone.Get("/jobs");
    REQUIRE(jobs);
    CHECK(jobs->status == 200);
    auto refused = anyone.Patch(cancel.c_str());
    REQUIRE(refused);
    CHECK(refused->status == 403);
    // A certificate changes nothing while REST does not ask for one.
    httplib::SSLClient with_certificate("localhost", f.server->port(), alice, alice);
    with_certificate.set_ca_cert_path(ca.c_str());
    auto still = with_certificate.Patch(cancel.c_str());
    REQUIRE(still);
    CHECK(still->status == 403);
    CHECK(f.view->cancels() == 0);
  }
  SUBCASE("mutual TLS") {
    tls.authentication_enabled = true;
    rest_fixture f(true, tls);
    httplib::SSLClient anyone("localhost", f.server->port());
    anyone.set_ca_cert_path(ca.c_str());
    anyone.set_read_timeout(5, 0);
    CHECK_FALSE(anyone.Get("/jobs"));
    httplib::SSLClient trusted("localhost", f.server->port(), alice, alice);
    trusted.set_ca_cert_path(ca.c_str());
    trusted.enable_server_certificate_verification(true);
    auto cancelled = trusted.Patch(cancel.c_str());
    REQUIRE(cancelled);
    CHECK(cancelled->status == 202);
    CHECK(f.view->cancels() == 1);
  }
  SUBCASE("security.ssl.protocol and security.ssl.algorithms hold on REST too") {
    tls.protocol = "TLSv1.3";
    rest_fixture f(true, tls);
    httplib::SSLClient tls12("localhost", f.server->port());
    tls12.set_ca_cert_path(ca.c_str());
    tls12.set_read_timeout(5, 0);
    SSL_CTX_set_max_proto_version(tls12.ssl_context(), TLS1_2_VERSION);
    CHECK_FALSE(tls12.Get("/jobs"));
    httplib::SSLClient tls13("localhost", f.server->port());
    tls13.set_ca_cert_path(ca.c_str());
    auto jobs = tls13.Get("/jobs");
    REQUIRE(jobs);
    CHECK(jobs->status == 200);
  }
  SUBCASE("an unknown suite stops REST from starting, naming the key") {
    tls.algorithms = "NO_SUCH_SUITE";
    auto checked = rest::check_tls_files(tls);
    REQUIRE_FALSE(checked);
    CHECK(checked.error().message.find("security.ssl.algorithms") != std::string::npos);
  }
  std::error_code ec;
  std::filesystem::remove_all(certs, ec);
}

TEST_CASE("REST serves every path under /v1 as well, as Flink's Java clients call it, while /v1 "
          "alone and other versions are not found") {
  rest_fixture f(false);
  auto http = f.client();
  const auto job = "/jobs/" + the_job.to_string();

  for (const std::string path : {"/config", "/overview", "/jobs", "/taskmanagers"}) {
    CAPTURE(path);
    auto plain = http.Get(path.c_str());
    auto versioned = http.Get(("/v1" + path).c_str());
    REQUIRE(plain);
    REQUIRE(versioned);
    CHECK(versioned->status == 200);
    CHECK(versioned->body == plain->body);
  }
  auto overview = http.Get("/v1/jobs/overview"); // its durations move on: not compared
  REQUIRE(overview);
  CHECK(overview->status == 200);
  auto details = http.Get(("/v1" + job).c_str());
  REQUIRE(details);
  CHECK(details->status == 200);
  CHECK(json::parse(details->body)["jid"] == the_job.to_string());

  auto cancel = http.Patch(("/v1" + job + "?mode=cancel").c_str());
  REQUIRE(cancel);
  CHECK(cancel->status == 202);
  CHECK(f.view->cancels() == 1);

  for (const std::string path : {"/v1", "/v1/", "/v2/jobs", "/v1/v1/jobs", "/v1/nothing"}) {
    CAPTURE(path);
    auto r = http.Get(path.c_str());
    REQUIRE(r);
    CHECK(r->status == 404);
    errors_of(r);
  }
}

TEST_CASE("REST with internal TLS on and no REST authentication refuses changes under /v1 as "
          "under the root") {
  rest_fixture f(true);
  auto http = f.client();
  const auto job = "/v1/jobs/" + the_job.to_string();
  auto cancel = http.Patch((job + "?mode=cancel").c_str());
  REQUIRE(cancel);
  CHECK(cancel->status == 403);
  CHECK(errors_of(cancel).get<std::string>().find("security.ssl.rest.authentication-enabled")
        != std::string::npos);
  auto savepoint = http.Post((job + "/savepoints").c_str(), "{}", "application/json");
  REQUIRE(savepoint);
  CHECK(savepoint->status == 403);
  auto reads = http.Get(job.c_str());
  REQUIRE(reads);
  CHECK(reads->status == 200);
  CHECK(f.view->cancels() == 0);
  CHECK(f.view->savepoints() == 0);
}

TEST_CASE("REST serves a PATCH or POST sent without a body and without Content-Length, as "
          "Flink's docs send it with curl") {
  rest_fixture f(false);
  // The answer to `request` on a connection the client keeps open (as curl does).
  auto ask = [&](const std::string& request) {
    int fd = f.connect_raw(4s);
    REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL)
            == static_cast<ssize_t>(request.size()));
    std::string got;
    char buf[4096];
    // Headers and the JSON body (small, one or two reads).
    while (got.find("\r\n\r\n") == std::string::npos || got.back() != '}') {
      auto n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0)
        break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return got;
  };
  const auto job = "/jobs/" + the_job.to_string();

  for (const std::string prefix : {"", "/v1"}) {
    CAPTURE(prefix);
    auto began = std::chrono::steady_clock::now();
    auto cancel = ask("PATCH " + prefix + job
                      + "?mode=cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/7.88.1\r\n"
                        "Accept: */*\r\n\r\n");
    CAPTURE(cancel);
    CHECK(cancel.rfind("HTTP/1.1 202", 0) == 0);
    CHECK(std::chrono::steady_clock::now() - began < 2s);
  }
  CHECK(f.view->cancels() == 2);

  auto savepoint =
    ask("POST " + job + "/savepoints HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n");
  CAPTURE(savepoint);
  CHECK(savepoint.rfind("HTTP/1.1 202", 0) == 0);
  CHECK(savepoint.find("request-id") != std::string::npos);
  // Asked before the fixture lets savepoints complete, or the one asked later would wait on.
  CHECK(eventually([&] { return f.view->savepoints() == 1; }, 5s));
}

TEST_CASE("REST: /jars/:id/run and /plan take jobId, programArgsList, parallelism, savepointPath, "
          "claimMode, allowNonRestoredState and flinkConfiguration from the body, else the query") {
  rest_fixture f(false);
  std::filesystem::create_directories(f.dir / "uploads");
  std::ofstream(f.dir / "uploads" / "x_job.so") << "library";
  auto http = f.client();
  const std::string id = "0123456789abcdef0123456789abcdef";
  auto body = nlohmann::json{{"jobId", id},
                             {"programArgsList", {"--input", "a b"}},
                             {"parallelism", 3},
                             {"savepointPath", "/sp/savepoint-1"},
                             {"claimMode", "CLAIM"},
                             {"allowNonRestoredState", true},
                             {"flinkConfiguration", {{"restart-strategy.type", "none"}}},
                             {"entryClass", "sequential"}};
  // The body wins over the query.
  auto run = http.Post("/v1/jars/x_job.so/run?parallelism=7", body.dump(), "application/json");
  REQUIRE(run);
  CHECK(run->status == 200);
  CHECK(nlohmann::json::parse(run->body)["jobid"].is_string());
  auto r = f.view->last_run();
  REQUIRE(r.job_id.has_value());
  CHECK(r.job_id->to_string() == id);
  CHECK(r.args == std::vector<std::string>{"--input", "a b"});
  CHECK(r.parallelism == 3);
  CHECK(r.savepoint_path == "/sp/savepoint-1");
  CHECK(r.claim_mode == graph::recovery_claim_mode::claim);
  CHECK(r.allow_non_restored_state);
  CHECK(r.configuration
        == std::vector<std::pair<std::string, std::string>>{{"restart-strategy.type", "none"}});
  CHECK(r.entry == "sequential");

  // The query alone, as Flink's REST reference lists it.
  auto queried = http.Post(
    "/jars/x_job.so/run?programArg=--input,file.txt&parallelism=2&savepointPath=/sp/2"
    "&allowNonRestoredState=true",
    "", "application/json");
  REQUIRE(queried);
  CHECK(queried->status == 200);
  r = f.view->last_run();
  CHECK(r.args == std::vector<std::string>{"--input", "file.txt"});
  CHECK(r.parallelism == 2);
  CHECK(r.savepoint_path == "/sp/2");
  CHECK(r.allow_non_restored_state);
  CHECK_FALSE(r.job_id.has_value());

  auto plan = http.Get("/jars/x_job.so/plan?program-args=--a%20b&parallelism=4");
  REQUIRE(plan);
  CHECK(plan->status == 200);
  CHECK(nlohmann::json::parse(plan->body)["plan"]["name"] == "planned");
  r = f.view->last_run();
  CHECK(r.args == std::vector<std::string>{"--a", "b"});
  CHECK(r.parallelism == 4);

  // Malformed values get Flink's errors body, and nothing runs.
  auto runs = f.view->runs();
  for (const auto* bad :
       {R"({"jobId": "xyz"})", R"({"parallelism": 0})", R"({"flinkConfiguration": {"a": 1}})",
        R"({"claimMode": "SOMETIMES"})", R"({"programArgsList": "not a list"})",
        R"({"entryClass": 7})"}) {
    auto refused = http.Post("/jars/x_job.so/run", bad, "application/json");
    REQUIRE(refused);
    CHECK_MESSAGE(refused->status == 400, bad);
    CHECK(nlohmann::json::parse(refused->body)["errors"].is_array());
  }
  auto bad_query = http.Post("/jars/x_job.so/run?parallelism=many", "", "application/json");
  REQUIRE(bad_query);
  CHECK(bad_query->status == 400);
  CHECK(f.view->runs() == runs);
  auto missing = http.Post("/jars/no_such.so/plan", "{}", "application/json");
  REQUIRE(missing);
  CHECK(missing->status == 404);
}
