// The CLI's plain parts: Flink's `list` table, splitting flint's options from the job's, and
// where the configuration comes from.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <thread>

#include "apps/cli/cli_settings.hpp"
#include "apps/cli/command_line.hpp"
#include "apps/cli/job_list_format.hpp"
#include "apps/cli/rest_address.hpp"
#include "runtime/http/httplib.hpp"

using namespace flint;
using namespace flint::cli;

namespace {

dispatcher::job_details job(std::uint64_t id, const char* name, graph::job_status status,
                            std::int64_t start_ms) {
  dispatcher::job_details d;
  d.job_id = graph::job_id{0, id};
  d.name = name;
  d.status = status;
  d.start_time_ms = start_ms;
  return d;
}

} // namespace

TEST_CASE("flint list prints running and scheduled jobs oldest first between Flink's banners") {
  dispatcher::job_list jobs;
  jobs.jobs = {job(2, "later", graph::job_status::running, 1'764'417'300'000),
               job(1, "earlier", graph::job_status::restarting, 1'764'417'200'000),
               job(3, "waiting", graph::job_status::created, 1'764'417'250'000),
               job(4, "done", graph::job_status::finished, 1'764'417'100'000)};
  auto text = format_job_list(jobs, select_jobs(false, false, false), true);
  CHECK(text == "------------------ Running/Restarting Jobs -------------------\n"
                "29.11.2025 11:53:20 : 00000000000000000000000000000001 : earlier (RESTARTING)\n"
                "29.11.2025 11:55:00 : 00000000000000000000000000000002 : later (RUNNING)\n"
                "--------------------------------------------------------------\n"
                "----------------------- Scheduled Jobs -----------------------\n"
                "29.11.2025 11:54:10 : 00000000000000000000000000000003 : waiting (CREATED)\n"
                "--------------------------------------------------------------\n");
}

TEST_CASE("flint list -a adds the terminated jobs and empty sections say so") {
  dispatcher::job_list jobs;
  jobs.jobs = {job(4, "done", graph::job_status::finished, 1'764'417'100'000),
               job(5, "gone", graph::job_status::canceled, 1'764'417'000'000)};
  auto all = format_job_list(jobs, select_jobs(false, false, true), true);
  CHECK(all == "No running jobs.\n"
               "No scheduled jobs.\n"
               "---------------------- Terminated Jobs -----------------------\n"
               "29.11.2025 11:50:00 : 00000000000000000000000000000005 : gone (CANCELED)\n"
               "29.11.2025 11:51:40 : 00000000000000000000000000000004 : done (FINISHED)\n"
               "--------------------------------------------------------------\n");
  CHECK(format_job_list(jobs, select_jobs(true, false, false), true) == "No running jobs.\n");
  CHECK(format_job_list(jobs, select_jobs(false, true, false), true) == "No scheduled jobs.\n");
}

TEST_CASE("flint's options come before the job library and everything after it is the job's") {
  std::vector<std::string> values = {"-p", "-m", "--timeout", "--config", "-D"};
  auto s = split_at_library(
    {"-p", "2", "-d", "-m", "h:1", "-Dk=v", "job.so", "--input", "F", "-p", "3"}, values);
  CHECK(s.own == std::vector<std::string>{"-p", "2", "-d", "-m", "h:1", "-Dk=v", "job.so"});
  CHECK(s.job_args == std::vector<std::string>{"--input", "F", "-p", "3"});

  auto dashed = split_at_library({"--timeout", "5 s", "--", "-odd.so", "x"}, values);
  CHECK(dashed.own == std::vector<std::string>{"--timeout", "5 s", "--", "-odd.so"});
  CHECK(dashed.job_args == std::vector<std::string>{"x"});

  auto none = split_at_library({"-p", "2"}, values);
  CHECK(none.own == std::vector<std::string>{"-p", "2"});
  CHECK(none.job_args.empty());
}

TEST_CASE(
  "the configuration is --config, else $FLINT_CONF_DIR or $FLINK_CONF_DIR, else deploy/ of the "
  "build's repository; config.yaml before flink-conf.yaml") {
  auto root =
    std::filesystem::temp_directory_path() / ("flint_cli_unit_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "repo" / "build" / "bin");
  std::filesystem::create_directories(root / "repo" / "deploy");
  std::filesystem::create_directories(root / "conf");
  std::ofstream(root / "repo" / "deploy" / "flink-conf.yaml") << "jobmanager.rpc.port: 7000\n";
  std::ofstream(root / "conf" / "flink-conf.yaml") << "jobmanager.rpc.port: 7001\n";
  auto exe = (root / "repo" / "build" / "bin" / "flint").string();

  unsetenv("FLINT_CONF_DIR");
  unsetenv("FLINK_CONF_DIR");
  CHECK(find_config_file("", exe) == (root / "repo" / "deploy" / "flink-conf.yaml").string());
  CHECK(find_config_file("/given.yaml", exe) == "/given.yaml");
  setenv("FLINT_CONF_DIR", (root / "conf").c_str(), 1);
  CHECK(find_config_file("", exe) == (root / "conf" / "flink-conf.yaml").string());

  common_options opts;
  auto s = resolve(opts, exe);
  REQUIRE(s.has_value());
  CHECK(s->address.port == 7001);
  CHECK(s->ask_timeout == std::chrono::seconds(10)); // rpc.ask.timeout's default
  CHECK_FALSE(s->timeout.has_value());

  opts.jobmanager = "10.0.0.5:6200";
  opts.timeout = "750 ms";
  opts.dynamic = {"rpc.ask.timeout=3 s"};
  s = resolve(opts, exe);
  REQUIRE(s.has_value());
  CHECK(s->address.host == "10.0.0.5");
  CHECK(s->address.port == 6200);
  CHECK(s->ask_timeout == std::chrono::milliseconds(750));

  opts.timeout.clear();
  s = resolve(opts, exe);
  REQUIRE(s.has_value());
  CHECK(s->ask_timeout == std::chrono::seconds(3));

  // Flink 2's config.yaml (nested YAML) before flink-conf.yaml; FLINK_CONF_DIR when FLINT_'s unset.
  std::ofstream(root / "conf" / "config.yaml") << "jobmanager:\n  rpc:\n    port: 7002\n";
  CHECK(find_config_file("", exe) == (root / "conf" / "config.yaml").string());
  unsetenv("FLINT_CONF_DIR");
  setenv("FLINK_CONF_DIR", (root / "conf").c_str(), 1);
  s = resolve(common_options{}, exe);
  REQUIRE(s.has_value());
  CHECK(s->address.port == 7002);
  CHECK(find_config_file("/given.yaml", exe) == "/given.yaml");
  unsetenv("FLINK_CONF_DIR");

  std::filesystem::remove_all(root / "repo" / "deploy");
  CHECK(find_config_file("", exe).empty()); // built-in defaults
  std::filesystem::remove_all(root);
}

TEST_CASE(
  "flint status prints a job's restarts, failures newest first, and the slots a waiting job lacks") {
  job_master::job_status_response r;
  r.status = graph::job_status::running;
  r.restarts = 1;
  r.failures = {job_master::job_failure{1'764'417'300'000, "Map (2/2)",
                                        "task_executor/tm-2 @ host-2 (dataPort=6121)",
                                        "TaskManager with id tm-2 is no longer reachable."},
                job_master::job_failure{1'764'417'200'000, "", "", "no slot"}};
  r.tasks = 4;
  r.tasks_running = 2;
  r.slots_needed = 2;
  r.slots_assigned = 1;
  r.pending_slot_requests = {job_master::pending_slot_request{"SlotRequestId{0a}", 1500}};
  r.registered_task_managers = 1;
  resource_manager::resource_overview cluster{1, 2, 0, 1};
  auto text = format_job_status(graph::job_id{0, 1}, r, cluster, true);
  CHECK(text == "Job 00000000000000000000000000000001 is RUNNING.\n"
                "Restarts: 1, failures: 2\n"
                "  29.11.2025 11:55:00 Map (2/2) on task_executor/tm-2 @ host-2 (dataPort=6121): TaskManager with id "
                "tm-2 is no longer reachable.\n"
                "  29.11.2025 11:53:20 (global failure): no slot\n"
                "Tasks running: 2 of 4; slots assigned: 1 of 2 needed; TaskManagers registered with the job: 1\n"
                "Cluster: 0 of 2 slots free on 1 TaskManagers; 1 more needed\n"
                "  waiting for a slot: request SlotRequestId{0a} pending for 1500 ms\n");
  // A job that runs whole and never failed says only its status.
  job_master::job_status_response fine;
  fine.status = graph::job_status::running;
  fine.tasks = 4;
  fine.tasks_running = 4;
  CHECK(format_job_status(graph::job_id{0, 1}, fine, std::nullopt, true)
        == "Job 00000000000000000000000000000001 is RUNNING.\n");
}

TEST_CASE("flint status prints the checkpoint counts and the latest completed checkpoint") {
  job_master::job_status_response r;
  r.status = graph::job_status::running;
  r.tasks = 4;
  r.tasks_running = 4;
  r.checkpointing = true;
  r.checkpoints = {12, 1, 1, 12, 35, 46372, "/ckpt/j/chk-12/_metadata"};
  CHECK(format_job_status(graph::job_id{0, 1}, r, std::nullopt, true)
        == "Job 00000000000000000000000000000001 is RUNNING.\n"
           "Checkpoints: 12 completed, 1 failed, 1 in progress\n"
           "Latest completed checkpoint: 12 (35 ms, 46372 bytes, /ckpt/j/chk-12/_metadata)\n");
  r.checkpoints = {};
  CHECK(format_job_status(graph::job_id{0, 1}, r, std::nullopt, true)
        == "Job 00000000000000000000000000000001 is RUNNING.\n"
           "Checkpoints: 0 completed, 0 failed, 0 in progress\n");
}

TEST_CASE("the RPC port of a JobManager given by its REST address is read from /jobmanager/config") {
  auto found = rpc_address_from_rest_config(
    R"([{"key":"rest.port","value":"8081"},{"key":"jobmanager.rpc.port","value":"6123"}])",
    "jm.example");
  REQUIRE(found);
  CHECK(*found == config::host_port{"jm.example", 6123});
  // Not Flink's answer, or no usable port: the address is not taken as REST.
  CHECK_FALSE(rpc_address_from_rest_config("<html>not json</html>", "h"));
  CHECK_FALSE(rpc_address_from_rest_config(R"({"key":"jobmanager.rpc.port"})", "h"));
  CHECK_FALSE(rpc_address_from_rest_config(R"([{"key":"rest.port","value":"8081"}])", "h"));
  CHECK_FALSE(rpc_address_from_rest_config(R"([{"key":"jobmanager.rpc.port","value":"0"}])", "h"));
  CHECK_FALSE(
    rpc_address_from_rest_config(R"([{"key":"jobmanager.rpc.port","value":"61x"}])", "h"));
  CHECK_FALSE(
    rpc_address_from_rest_config(R"([{"key":"jobmanager.rpc.port","value":"70000"}])", "h"));
}

TEST_CASE("an address that speaks first (Flint's RPC service) is not asked over HTTP") {
  // A listening socket whose peer, once accepted, sends first as CAF's handshake does; and one
  // that waits for the client, as an HTTP server does.
  auto listen_on_loopback = [](int& fd) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    return static_cast<std::uint16_t>(ntohs(addr.sin_port));
  };
  int talker = -1;
  int waiter = -1;
  auto talker_port = listen_on_loopback(talker);
  auto waiter_port = listen_on_loopback(waiter);
  std::thread greet([&] {
    int c = ::accept(talker, nullptr, nullptr);
    if (c >= 0) {
      [[maybe_unused]] auto n = ::write(c, "\0\0\0\0", 4);
      char b;
      [[maybe_unused]] auto r = ::read(c, &b, 1); // until the client closes
      ::close(c);
    }
  });
  CHECK(speaks_first({"127.0.0.1", talker_port}, std::chrono::milliseconds(2000)));
  greet.join();
  CHECK_FALSE(speaks_first({"127.0.0.1", waiter_port}, std::chrono::milliseconds(200)));
  ::close(talker);
  ::close(waiter);
  // Nothing listens: neither.
  CHECK_FALSE(speaks_first({"127.0.0.1", waiter_port}, std::chrono::milliseconds(200)));
}

TEST_CASE("-m given an HTTPS REST endpoint (security.ssl.rest.*) finds its RPC port over TLS") {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("flint-cli-rest-tls-" + std::to_string(::getpid()));
  fs::remove_all(dir); // this test's own directory, named by its pid
  auto certs = [&](const fs::path& where, const std::string& names, const std::string& env = {}) {
    auto command = env + std::string(FLINT_SOURCE_DIR) + "/deploy/gen-certs.sh " + where.string()
                   + " " + names + " </dev/null >/dev/null 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
  };
  certs(dir, "localhost --client alice");
  certs(dir / "other", "--client mallory"); // another CA
  const auto server_pem = (dir / "localhost.pem").string();
  const auto ca = (dir / "ca.pem").string();
  // Mutual TLS as the REST endpoint with security.ssl.rest.authentication-enabled serves it.
  httplib::SSLServer server(server_pem.c_str(), server_pem.c_str(), ca.c_str());
  REQUIRE(server.is_valid());
  server.Get("/jobmanager/config", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"([{"key":"jobmanager.rpc.port","value":"6123"}])", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  REQUIRE(port > 0);
  std::thread serving([&] { server.listen_after_bind(); });
  // Joined on every way out, a failed REQUIRE too (a joinable thread's destructor terminates).
  auto stop_serving = [&] {
    server.stop();
    if (serving.joinable())
      serving.join();
  };
  struct guard {
    std::function<void()> f;
    ~guard() { f(); }
  } join_on_exit{stop_serving};
  const config::host_port given{"localhost", static_cast<std::uint16_t>(port)};

  config::configuration config;
  config.set("security.ssl.rest.enabled", "true");
  config.set("security.ssl.rest.authentication-enabled", "true");
  config.set("security.ssl.rest.truststore", ca);
  config.set("security.ssl.rest.keystore", (dir / "alice.pem").string());
  auto tls = rest_client_tls_from(config);
  REQUIRE(tls.has_value());
  CHECK(rpc_address_via_rest(given, std::chrono::seconds(5), *tls)
        == config::host_port{"localhost", 6123});
  // Plain HTTP, no client certificate, or a certificate of another CA: not an answer.
  CHECK_FALSE(rpc_address_via_rest(given, std::chrono::seconds(2)));
  auto anonymous = *tls;
  anonymous.authentication_enabled = false;
  CHECK_FALSE(rpc_address_via_rest(given, std::chrono::seconds(2), anonymous));
  auto stranger = *tls;
  stranger.keystore = (dir / "other" / "mallory.pem").string();
  CHECK_FALSE(rpc_address_via_rest(given, std::chrono::seconds(2), stranger));
  // A server the truststore did not sign is not trusted either.
  auto wrong_ca = *tls;
  wrong_ca.truststore = (dir / "other" / "ca.pem").string();
  CHECK_FALSE(rpc_address_via_rest(given, std::chrono::seconds(2), wrong_ca));
  // An encrypted key: read with security.ssl.rest.key-password; without it the handshake has no
  // certificate (and OpenSSL prompts nobody on the terminal).
  certs(dir, "--client bob", "GEN_CERTS_PASSWORD=bob-pw ");
  auto encrypted = *tls;
  encrypted.keystore = (dir / "bob.pem").string();
  encrypted.key_password = "bob-pw";
  CHECK(rpc_address_via_rest(given, std::chrono::seconds(5), encrypted)
        == config::host_port{"localhost", 6123});
  encrypted.key_password.clear();
  CHECK_FALSE(rpc_address_via_rest(given, std::chrono::seconds(2), encrypted));

  // HTTPS without a truststore verifies against the system's CAs, which did not sign this
  // endpoint: no answer (the CLI then takes the address as RPC), and no error before that.
  config::configuration half;
  half.set("security.ssl.rest.enabled", "true");
  auto system_cas = rest_client_tls_from(half);
  REQUIRE(system_cas.has_value());
  CHECK_FALSE(rpc_address_via_rest(given, std::chrono::seconds(2), *system_cas));
  stop_serving();
  fs::remove_all(dir);
}
