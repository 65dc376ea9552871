// The JobManager's REST endpoint against a real cluster in one process: a JobManager node with
// REST on a free loopback port and two TaskManager nodes. Every answer is read over HTTP and
// checked field by field against the shapes of Flink's REST reference. With TLS, certificates
// come from deploy/gen-certs.sh and every connection is real TLS.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <limits>
#include <tuple>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "api/api.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"
#include "apps/examples/wordcount/words.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/http/httplib.hpp"
#include "runtime/node/job_manager_node.hpp"
#include "runtime/node/node_settings.hpp"
#include "runtime/node/task_manager_node.hpp"
#include "runtime/streaming/streaming_environment.hpp"
#include "test/runtime/node/node_test_util.hpp"
#include "test/support/word_counts.hpp"

using namespace flint;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

using test::eventually;
using test::graphs_of;
using test::program;

std::filesystem::path scratch(const std::string& name) {
  auto p = std::filesystem::temp_directory_path()
    / ("flint_rest_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

/// Runs deploy/gen-certs.sh: `dir`/ca.pem and one `dir`/NAME.pem for each of `names`.
void make_certificates(const std::filesystem::path& dir, const std::string& names) {
  auto command =
    std::string(FLINT_SOURCE_DIR) + "/deploy/gen-certs.sh " + dir.string() + " " + names + " >/dev/null";
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command);
}

/// What a test cluster secures. `certs` holds gen-certs.sh's ca.pem, jm.pem, tm-a.pem, tm-b.pem
/// (internal TLS), localhost.pem (the REST endpoint's) and alice.pem (the REST client's).
struct cluster_security {
  std::filesystem::path certs;
  /// security.ssl.internal.enabled.
  bool internal_tls = false;
  /// security.ssl.rest.enabled and security.ssl.rest.authentication-enabled.
  bool rest_mutual_tls = false;
};

struct rest_cluster {
  std::filesystem::path dir;
  cluster_security security;
  std::unique_ptr<node::job_manager_node> jm;
  std::unique_ptr<node::task_manager_node> tm_a;
  std::unique_ptr<node::task_manager_node> tm_b;

  explicit rest_cluster(const std::string& name, std::int64_t max_content_length = 1 << 20,
                        cluster_security sec = {})
    : dir(scratch(name)), security(std::move(sec)) {
    node::job_manager_settings js;
    js.rpc_address = "127.0.0.1";
    js.bind_host = "127.0.0.1";
    js.rpc_port = 0;
    js.blob_storage_directory = dir / "blobs";
    // Heartbeats carry the running tasks' figures: often, so the test sees them soon.
    js.heartbeat.interval = 500ms;
    js.heartbeat.timeout = 10s;
    js.rest.enabled = true;
    js.rest.bind_address = "127.0.0.1";
    js.rest.bind_port = "0";
    js.rest.max_content_length = max_content_length;
    js.rest.upload_dir = dir / "uploads";
    js.configuration.set("parallelism.default", "2", "test");
    js.configuration.set("security.ssl.internal.key-password", "hunter2", "test");
    js.tls = internal_tls("jm");
    if (security.rest_mutual_tls) {
      js.rest.tls.enabled = true;
      js.rest.tls.keystore = (security.certs / "localhost.pem").string();
      js.rest.tls.truststore = (security.certs / "ca.pem").string();
      js.rest.tls.authentication_enabled = true;
    }
    jm = std::make_unique<node::job_manager_node>(js);
    auto started = jm->start();
    REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
    REQUIRE(jm->rest_port() != 0);
    tm_a = make_tm("tm-a");
    tm_b = make_tm("tm-b");
    REQUIRE(eventually(
      [&] {
        auto o = get("/overview");
        return o.status == 200 && o.body["taskmanagers"] == 2 && o.body["slots-total"] == 4;
      },
      20s));
  }

  ~rest_cluster() {
    tm_a.reset();
    tm_b.reset();
    jm.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  std::unique_ptr<node::task_manager_node> make_tm(const std::string& id) {
    node::task_manager_settings ts;
    ts.jobmanager_address = "127.0.0.1";
    ts.jobmanager_port = jm->rpc_port();
    ts.host = "127.0.0.1";
    ts.bind_host = "127.0.0.1";
    ts.resource_id = id;
    ts.number_of_slots = 2;
    ts.heartbeat.interval = 500ms;
    ts.heartbeat.timeout = 10s;
    ts.tls = internal_tls(id);
    node::task_manager_node_services services;
    services.make_invokables = [](caf::actor_system&, streaming::streaming_environment& env,
                                  const std::string&, node::job_manager_locator) {
      return streaming::make_stream_task_factory(env);
    };
    services.write_stdout = [](std::string_view) {};
    auto tm = std::make_unique<node::task_manager_node>(ts, services);
    auto started = tm->start();
    REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
    return tm;
  }

  /// security.ssl.internal.* of node `name`: off unless the test asked for it.
  rpc::tls_options internal_tls(const std::string& name) const {
    rpc::tls_options t;
    if (!security.internal_tls)
      return t;
    t.enabled = true;
    t.keystore = (security.certs / (name + ".pem")).string();
    t.truststore = (security.certs / "ca.pem").string();
    return t;
  }

  /// A client of the REST endpoint; with REST mutual TLS one that presents alice's certificate
  /// and checks the endpoint's ("localhost", signed by the cluster CA).
  httplib::Client client() const {
    if (security.rest_mutual_tls) {
      const auto alice = (security.certs / "alice.pem").string();
      httplib::Client c("https://localhost:" + std::to_string(jm->rest_port()), alice, alice);
      c.set_ca_cert_path((security.certs / "ca.pem").string().c_str());
      c.enable_server_certificate_verification(true);
      c.set_read_timeout(10, 0);
      c.set_connection_timeout(5, 0);
      return c;
    }
    httplib::Client c("127.0.0.1", jm->rest_port());
    c.set_read_timeout(10, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }

  struct answer {
    int status = 0;
    json body;
    std::string text;
    std::string content_type;
  };

  static answer read(const httplib::Result& r) {
    answer a;
    if (!r)
      return a;
    a.status = r->status;
    a.text = r->body;
    a.content_type = r->get_header_value("Content-Type");
    a.body = json::parse(r->body, nullptr, false);
    return a;
  }

  answer get(const std::string& path) const {
    auto c = client();
    return read(c.Get(path.c_str()));
  }

  void add_program(const program& p) {
    tm_a->streaming().add_program(p.stream, p.job);
    tm_b->streaming().add_program(p.stream, p.job);
  }

  void submit(const program& p) {
    caf::scoped_actor self{jm->system(), true};
    auto r = jm->dispatcher_gateway().ask_blocking<dispatcher::submit_job>(
      *self, rpc::client_identity{"rest_test", nullptr, 10s},
      dispatcher::submit_job_request{*p.job});
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  }

  std::string state_of(const graph::job_id& id) const {
    auto a = get("/jobs/" + id.to_string());
    return a.status == 200 ? a.body["state"].get<std::string>() : "";
  }
};

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

/// WordCount at parallelism 2 over a file.
program wordcount(const std::filesystem::path& input, const std::filesystem::path& output) {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  examples::build_wordcount(env, {input.string(), output.string()});
  return graphs_of(env);
}

/// A job that runs until cancelled: a paced sequence, keyed, summed, dropped.
program endless() {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  env.generate_sequence(0, std::numeric_limits<std::int64_t>::max())
    .map([](std::int64_t x) {
      std::this_thread::sleep_for(1ms);
      return std::tuple<std::int64_t, std::int64_t>{x % 16, 1};
    })
    .key_by<0>()
    .sum<1>()
    .filter([](const std::tuple<std::int64_t, std::int64_t>&) { return false; })
    .print();
  return graphs_of(env);
}

void check_error_body(const rest_cluster::answer& a) {
  REQUIRE(a.body.is_object());
  REQUIRE(a.body.contains("errors"));
  REQUIRE(a.body["errors"].is_array());
  REQUIRE(a.body["errors"].size() == 1);
  CHECK(a.body["errors"][0].is_string());
}

} // namespace

TEST_CASE(
  "REST: a finished WordCount's overview, details, plan, vertices, exceptions and "
  "checkpoints in Flink's shapes") {
  rest_cluster c("finished");
  const auto text = test::sample_text(64 * 1024);
  write_text(c.dir / "input.txt", text);
  auto p = wordcount(c.dir / "input.txt", c.dir / "output");
  c.add_program(p);
  c.submit(p);
  const auto jid = p.job->job_id.to_string();
  REQUIRE(eventually([&] { return c.state_of(p.job->job_id) == "FINISHED"; }, 60s));

  auto jobs = c.get("/jobs");
  REQUIRE(jobs.status == 200);
  CHECK(jobs.content_type.find("application/json") == 0);
  REQUIRE(jobs.body["jobs"].size() == 1);
  CHECK(jobs.body["jobs"][0]["id"] == jid);
  CHECK(jobs.body["jobs"][0]["status"] == "FINISHED");

  auto overview = c.get("/jobs/overview");
  REQUIRE(overview.status == 200);
  const auto& o = overview.body["jobs"][0];
  CHECK(o["jid"] == jid);
  CHECK(o["name"] == p.job->name);
  CHECK(o["state"] == "FINISHED");
  CHECK(o["start-time"].is_number_integer());
  CHECK(o["end-time"].get<std::int64_t>() >= o["start-time"].get<std::int64_t>());
  CHECK(o["duration"].get<std::int64_t>()
        == o["end-time"].get<std::int64_t>() - o["start-time"].get<std::int64_t>());
  CHECK(o["last-modification"].is_number_integer());
  std::int64_t tasks = 0;
  for (const auto& v : p.job->vertices)
    tasks += v.parallelism;
  CHECK(o["tasks"]["total"] == tasks);
  CHECK(o["tasks"]["finished"] == tasks);
  for (const char* k : {"created", "scheduled", "deploying", "running", "canceling", "canceled",
                        "failed", "reconciling", "initializing"})
    CHECK(o["tasks"][k] == 0);

  auto details = c.get("/jobs/" + jid);
  REQUIRE(details.status == 200);
  const auto& d = details.body;
  CHECK(d["jid"] == jid);
  CHECK(d["state"] == "FINISHED");
  CHECK(d["isStoppable"] == false);
  CHECK(d["now"].is_number_integer());
  CHECK(d["timestamps"]["FINISHED"] == d["end-time"]);
  REQUIRE(d["vertices"].size() == p.job->vertices.size());
  for (std::size_t i = 0; i < p.job->vertices.size(); ++i) {
    const auto& v = d["vertices"][i];
    CHECK(v["status"] == "FINISHED");
    CHECK(v["start-time"].get<std::int64_t>() > 0);
    CHECK(v["end-time"].get<std::int64_t>() >= v["start-time"].get<std::int64_t>());
    CHECK(v["tasks"]["FINISHED"] == v["parallelism"]);
    CHECK(v["metrics"].contains("read-records"));
    CHECK(v["metrics"]["read-records-complete"].is_boolean());
  }
  CHECK(d["status-counts"]["FINISHED"] == p.job->vertices.size());
  // The tasks' final figures reached the JobManager: the source chain sent one record per word,
  // the keyed sum received them all.
  std::int64_t words = 0;
  for (const auto& [w, n] : test::plain_count(text))
    words += n;
  const auto& source = d["vertices"][0]["metrics"];
  const auto& sink = d["vertices"][d["vertices"].size() - 1]["metrics"];
  CHECK(source["write-records"] == words);
  CHECK(source["write-records-complete"] == true);
  CHECK(source["write-bytes"].get<std::int64_t>() > 0);
  CHECK(sink["read-records"] == words);
  CHECK(sink["read-bytes"].get<std::int64_t>() > 0);
  CHECK(sink["read-records-complete"] == true);
  CHECK(d["plan"]["jid"] == jid);

  auto plan = c.get("/jobs/" + jid + "/plan");
  REQUIRE(plan.status == 200);
  REQUIRE(plan.body["plan"]["nodes"].size() == p.job->vertices.size());
  for (const auto& n : plan.body["plan"]["nodes"]) {
    CHECK(n["id"].is_string());
    CHECK(n["parallelism"].is_number_integer());
    CHECK(n["description"].is_string());
    if (n.contains("inputs"))
      for (const auto& in : n["inputs"]) {
        CHECK(in["ship_strategy"].is_string());
        CHECK(in["exchange"].is_string());
      }
  }
  // The keyed edge is HASH, as Flink's plan shows it.
  CHECK(plan.text.find("\"ship_strategy\":\"HASH\"") != std::string::npos);

  const std::string vid = d["vertices"][0]["id"];
  auto vertex = c.get("/jobs/" + jid + "/vertices/" + vid);
  REQUIRE(vertex.status == 200);
  CHECK(vertex.body["id"] == vid);
  REQUIRE(vertex.body["subtasks"].size() == d["vertices"][0]["parallelism"].get<std::size_t>());
  for (const auto& st : vertex.body["subtasks"]) {
    CHECK(st["status"] == "FINISHED");
    // Flink's state timestamps: DEPLOYING to FINISHED, within the job's run.
    CHECK(st["start-time"].get<std::int64_t>() >= d["start-time"].get<std::int64_t>());
    CHECK(st["end-time"].get<std::int64_t>() >= st["start-time"].get<std::int64_t>());
    CHECK(st["duration"]
          == st["end-time"].get<std::int64_t>() - st["start-time"].get<std::int64_t>());
    CHECK(st["attempt"] == 0);
    CHECK(st["host"] == "127.0.0.1");
    auto tm = st["taskmanager-id"].get<std::string>();
    CHECK((tm == "tm-a" || tm == "tm-b"));
  }
  auto backpressure = c.get("/jobs/" + jid + "/vertices/" + vid + "/backpressure");
  REQUIRE(backpressure.status == 200);
  CHECK(backpressure.body["status"] == "ok");
  CHECK(backpressure.body["subtasks"].size() == vertex.body["subtasks"].size());
  for (const auto& st : backpressure.body["subtasks"]) {
    CHECK(st["ratio"].is_number());
    CHECK(st["backpressure-level"].is_string());
  }
  auto no_vertex = c.get("/jobs/" + jid + "/vertices/00000000000000000000000000000000");
  CHECK(no_vertex.status == 404);
  check_error_body(no_vertex);

  auto exceptions = c.get("/jobs/" + jid + "/exceptions");
  REQUIRE(exceptions.status == 200);
  CHECK(exceptions.body["root-exception"].is_null());
  CHECK(exceptions.body["exceptionHistory"]["entries"].empty());
  CHECK(exceptions.body["exceptionHistory"]["truncated"] == false);

  auto checkpoints = c.get("/jobs/" + jid + "/checkpoints");
  REQUIRE(checkpoints.status == 200);
  CHECK(checkpoints.body["counts"]["completed"] == 0);
  CHECK(checkpoints.body["latest"]["completed"].is_null());

  auto cluster_overview = c.get("/overview");
  REQUIRE(cluster_overview.status == 200);
  CHECK(cluster_overview.body["jobs-finished"] == 1);
  CHECK(cluster_overview.body["jobs-running"] == 0);
  CHECK(cluster_overview.body["slots-available"] == 4);
  CHECK(cluster_overview.body["flink-version"].is_string());
}

TEST_CASE("REST: a running job is watched and cancelled through REST, its TaskManagers listed") {
  rest_cluster c("cancel");
  auto p = endless();
  c.add_program(p);
  c.submit(p);
  const auto jid = p.job->job_id.to_string();
  REQUIRE(eventually(
    [&] {
      auto a = c.get("/jobs/" + jid);
      return a.status == 200 && a.body["state"] == "RUNNING"
        && a.body["status-counts"]["RUNNING"] == p.job->vertices.size();
    },
    30s));
  // While it runs, the heartbeats bring the tasks' figures: the source sends more and more.
  REQUIRE(eventually(
    [&] {
      auto a = c.get("/jobs/" + jid);
      return a.status == 200 && a.body["vertices"][0]["metrics"]["write-records"] > 0
        && a.body["vertices"][0]["metrics"]["write-records-complete"] == false;
    },
    30s));
  auto running = c.get("/jobs/overview");
  CHECK(running.body["jobs"][0]["state"] == "RUNNING");
  CHECK(running.body["jobs"][0]["end-time"] == -1);
  CHECK(running.body["jobs"][0]["tasks"]["running"] == running.body["jobs"][0]["tasks"]["total"]);

  auto tms = c.get("/taskmanagers");
  REQUIRE(tms.status == 200);
  REQUIRE(tms.body["taskmanagers"].size() == 2);
  std::int64_t free = 0;
  for (const auto& tm : tms.body["taskmanagers"]) {
    CHECK(tm["slotsNumber"] == 2);
    CHECK(tm["dataPort"].get<int>() > 0);
    CHECK(tm["path"].is_string());
    free += tm["freeSlots"].get<std::int64_t>();
  }
  CHECK(free == 2); // the job's two slots are taken
  CAPTURE(tms.text);
  auto one = c.get("/taskmanagers/tm-a");
  REQUIRE(one.status == 200);
  CHECK(one.body["id"] == "tm-a");
  auto unknown_tm = c.get("/taskmanagers/tm-x");
  CHECK(unknown_tm.status == 404);
  check_error_body(unknown_tm);

  auto http = c.client();
  auto cancel = rest_cluster::read(http.Patch(("/jobs/" + jid + "?mode=cancel").c_str()));
  CHECK(cancel.status == 202);
  REQUIRE(eventually([&] { return c.state_of(p.job->job_id) == "CANCELED"; }, 30s));
  auto again = rest_cluster::read(http.Patch(("/jobs/" + jid + "?mode=cancel").c_str()));
  CHECK(again.status == 409);
  check_error_body(again);
}

TEST_CASE("REST: bad requests get Flink's error body and the right status, and nothing leaks") {
  rest_cluster c("bad", 64 * 1024);
  auto unknown = c.get("/jobs/0123456789abcdef0123456789abcdef");
  CHECK(unknown.status == 404);
  check_error_body(unknown);
  CHECK(unknown.body["errors"][0].get<std::string>().find("0123456789abcdef0123456789abcdef")
        != std::string::npos);
  auto malformed_id = c.get("/jobs/not-a-job");
  CHECK(malformed_id.status == 400);
  check_error_body(malformed_id);
  auto no_route = c.get("/no/such/path");
  CHECK(no_route.status == 404);
  check_error_body(no_route);

  auto http = c.client();
  auto bad_json = rest_cluster::read(http.Post("/jobs/0123456789abcdef0123456789abcdef/savepoints",
                                               "{\"target-directory\": ", "application/json"));
  CHECK(bad_json.status == 400);
  check_error_body(bad_json);

  // An upload over rest.server.max-content-length.
  httplib::MultipartFormDataItems big = {
    {"jarfile", std::string(128 * 1024, 'x'), "big.so", "application/octet-stream"}};
  auto too_large = rest_cluster::read(http.Post("/jars/upload", big));
  CHECK(too_large.status == 413);
  check_error_body(too_large);

  // CVE-2020-17518: a file name that climbs out of the upload directory.
  const auto outside = c.dir / "escaped.so";
  httplib::MultipartFormDataItems climbing = {
    {"jarfile", "payload", "../../escaped.so", "application/octet-stream"}};
  auto refused = rest_cluster::read(http.Post("/jars/upload", climbing));
  CHECK(refused.status == 400);
  check_error_body(refused);
  CHECK_FALSE(std::filesystem::exists(outside));
  CHECK_FALSE(std::filesystem::exists(c.dir / "uploads" / ".." / "escaped.so"));
  // A plain name is stored under a name of the server's making, inside the upload directory.
  httplib::MultipartFormDataItems good = {
    {"jarfile", "payload", "wordcount.so", "application/octet-stream"}};
  auto stored = rest_cluster::read(http.Post("/jars/upload", good));
  REQUIRE(stored.status == 200);
  CHECK(stored.body["status"] == "success");
  std::filesystem::path stored_at = stored.body["filename"].get<std::string>();
  CHECK(stored_at.parent_path() == c.dir / "uploads");
  auto listed = c.get("/jars");
  REQUIRE(listed.body["files"].size() == 1);
  CHECK(listed.body["files"][0]["name"] == "wordcount.so");
  // A claim mode Flink does not know is refused before anything runs.
  for (const char* key : {"claimMode", "restoreMode"}) {
    auto bad_mode = rest_cluster::read(
      http.Post(("/jars/" + listed.body["files"][0]["id"].get<std::string>() + "/run").c_str(),
                std::string("{\"") + key + "\": \"LEGACY\"}", "application/json"));
    CHECK(bad_mode.status == 400);
    check_error_body(bad_mode);
    CHECK(bad_mode.text.find(key) != std::string::npos);
  }

  // CVE-2020-17519: a double-encoded path that climbs to /etc/passwd.
  for (const char* path : {"/jobmanager/logs/..%252f..%252f..%252f..%252fetc%252fpasswd",
                           "/jobmanager/logs/..%2f..%2f..%2fetc%2fpasswd", "/../../etc/passwd",
                           "/%2e%2e/%2e%2e/etc/passwd"}) {
    CAPTURE(path);
    auto a = c.get(path);
    CHECK(a.status >= 400);
    CHECK(a.text.find("root:") == std::string::npos);
  }

  // The shipped dashboard is served from the binary.
  auto index = c.get("/");
  CHECK(index.status == 200);
  CHECK(index.content_type.find("text/html") == 0);
  CHECK(index.text.find("app.js") != std::string::npos);
  auto script = c.get("/app.js");
  CHECK(script.status == 200);
  CHECK(script.content_type.find("text/javascript") == 0);

  // Secrets are hidden in /jobmanager/config.
  auto config = c.get("/jobmanager/config");
  REQUIRE(config.status == 200);
  bool saw_parallelism = false;
  for (const auto& e : config.body) {
    if (e["key"] == "parallelism.default")
      saw_parallelism = e["value"] == "2";
    if (e["key"] == "security.ssl.internal.key-password")
      CHECK(e["value"] == "******");
  }
  CHECK(saw_parallelism);
  CHECK(config.text.find("hunter2") == std::string::npos);
}

TEST_CASE("REST: half-open clients do not keep others from being answered") {
  rest_cluster c("slow");
  // Eight connections that send half a request line and then nothing.
  std::vector<int> stalled;
  for (int i = 0; i < 8; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(c.jm->rest_port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    const char partial[] = "GET /overview HT";
    CHECK(::send(fd, partial, sizeof(partial) - 1, 0) > 0);
    stalled.push_back(fd);
  }
  for (int i = 0; i < 5; ++i) {
    auto a = c.get("/overview");
    CHECK(a.status == 200);
  }
  for (int fd : stalled)
    ::close(fd);
}

TEST_CASE("REST with internal TLS on: PATCH cancel and POST savepoints answer 403, reads stay "
          "open, and the job runs on") {
  const auto certs = scratch("tls_reads_certs");
  make_certificates(certs, "jm tm-a tm-b");
  rest_cluster c("tls_reads", 1 << 20, {certs, true, false});
  auto p = endless();
  c.add_program(p);
  c.submit(p);
  const auto jid = p.job->job_id.to_string();
  REQUIRE(eventually([&] { return c.state_of(p.job->job_id) == "RUNNING"; }, 30s));

  auto http = c.client();
  auto cancel = rest_cluster::read(http.Patch(("/jobs/" + jid + "?mode=cancel").c_str()));
  CHECK(cancel.status == 403);
  check_error_body(cancel);
  CAPTURE(cancel.text);
  CHECK(cancel.text.find("security.ssl.rest.authentication-enabled") != std::string::npos);
  auto savepoint = rest_cluster::read(
    http.Post(("/jobs/" + jid + "/savepoints").c_str(), "{}", "application/json"));
  CHECK(savepoint.status == 403);
  check_error_body(savepoint);

  // A cancel that went through would show at once: the Dispatcher answers after the job
  // switched to CANCELLING.
  CHECK(c.state_of(p.job->job_id) == "RUNNING");
  auto checkpoints = c.get("/jobs/" + jid + "/checkpoints");
  CHECK(checkpoints.status == 200);
  CHECK(checkpoints.body["counts"]["completed"] == 0);
  std::error_code ec;
  std::filesystem::remove_all(certs, ec);
}

TEST_CASE("REST with mutual TLS: a client without a certificate the cluster CA signed is refused "
          "in the TLS handshake, one with such a certificate cancels the job (202)") {
  const auto certs = scratch("rest_mtls_certs");
  make_certificates(certs, "jm tm-a tm-b localhost alice");
  const auto other_ca = scratch("rest_mtls_other_ca");
  make_certificates(other_ca, "mallory");
  rest_cluster c("rest_mtls", 1 << 20, {certs, true, true});
  auto p = endless();
  c.add_program(p);
  c.submit(p);
  const auto jid = p.job->job_id.to_string();
  const auto cancel_path = "/jobs/" + jid + "?mode=cancel";
  REQUIRE(eventually([&] { return c.state_of(p.job->job_id) == "RUNNING"; }, 30s));
  const auto port = c.jm->rest_port();
  const auto ca = (certs / "ca.pem").string();

  {
    httplib::SSLClient anonymous("localhost", port);
    anonymous.set_ca_cert_path(ca.c_str());
    anonymous.enable_server_certificate_verification(true);
    anonymous.set_read_timeout(5, 0);
    auto r = anonymous.Patch(cancel_path.c_str());
    CHECK_FALSE(r);
    auto read = anonymous.Get("/jobs");
    CHECK_FALSE(read);
  }
  {
    const auto mallory = (other_ca / "mallory.pem").string();
    httplib::SSLClient stranger("localhost", port, mallory, mallory);
    stranger.set_ca_cert_path(ca.c_str());
    stranger.enable_server_certificate_verification(true);
    stranger.set_read_timeout(5, 0);
    CHECK_FALSE(stranger.Patch(cancel_path.c_str()));
  }
  {
    httplib::Client plain("127.0.0.1", port);
    plain.set_read_timeout(5, 0);
    auto r = plain.Patch(cancel_path.c_str());
    CHECK((!r || r->status >= 400));
  }
  CHECK(c.state_of(p.job->job_id) == "RUNNING");

  const auto alice = (certs / "alice.pem").string();
  httplib::SSLClient trusted("localhost", port, alice, alice);
  trusted.set_ca_cert_path(ca.c_str());
  trusted.enable_server_certificate_verification(true);
  trusted.set_read_timeout(10, 0);
  auto cancel = trusted.Patch(cancel_path.c_str());
  REQUIRE(cancel);
  CHECK(cancel->status == 202);
  REQUIRE(eventually([&] { return c.state_of(p.job->job_id) == "CANCELED"; }, 30s));
  std::error_code ec;
  std::filesystem::remove_all(certs, ec);
  std::filesystem::remove_all(other_ca, ec);
}

TEST_CASE("REST TLS settings: authentication without REST TLS and unreadable files stop the "
          "JobManager before it starts, naming the key") {
  config::configuration cfg;
  cfg.set("security.ssl.rest.authentication-enabled", "true", "test");
  auto lone = node::read_job_manager_settings(cfg);
  REQUIRE_FALSE(lone);
  CHECK(lone.error().message.find("security.ssl.rest.enabled") != std::string::npos);

  cfg.set("security.ssl.rest.enabled", "true", "test");
  cfg.set("security.ssl.rest.keystore", "/nonexistent/rest.pem", "test");
  cfg.set("security.ssl.rest.truststore", "/nonexistent/ca.pem", "test");
  cfg.set("security.ssl.rest.key-password", "hunter2", "test");
  auto read = node::read_job_manager_settings(cfg);
  REQUIRE_MESSAGE(read.has_value(), read.error().to_string());
  CHECK(read->rest.tls.authenticates());
  CHECK(read->rest.tls.keystore == "/nonexistent/rest.pem");
  CHECK(read->rest.tls.key_password == "hunter2");

  const auto dir = scratch("rest_tls_bad_files");
  auto js = *read;
  js.rpc_address = "127.0.0.1";
  js.bind_host = "127.0.0.1";
  js.rpc_port = 0;
  js.blob_storage_directory = dir / "blobs";
  js.rest.bind_address = "127.0.0.1";
  js.rest.bind_port = "0";
  node::job_manager_node jm(js);
  auto started = jm.start();
  REQUIRE_FALSE(started);
  CAPTURE(started.error().message);
  CHECK(started.error().message.find("security.ssl.rest.keystore") != std::string::npos);

  // A keystore that holds a certificate and key, but a truststore that holds none.
  make_certificates(dir / "certs", "localhost");
  js.rest.tls.keystore = (dir / "certs" / "localhost.pem").string();
  js.rest.tls.key_password.clear();
  js.rest.tls.truststore = (dir / "certs" / "ca-key.pem").string();
  node::job_manager_node jm2(js);
  auto again = jm2.start();
  REQUIRE_FALSE(again);
  CAPTURE(again.error().message);
  CHECK(again.error().message.find("security.ssl.rest.truststore") != std::string::npos);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
