/// `flint-bench rest [--clients N] [--requests R]`: the JobManager's REST endpoint under N
/// concurrent clients while a job runs. A JobManager process (REST on a free loopback port) and
/// two TaskManager processes run build/jobs/endless.so; then N threads, each with its own
/// keep-alive connection, send R requests each: first `GET /config` (answered by the REST
/// server alone: the baseline), then `GET /jobs/overview` (a list_jobs and a request_job_status
/// per job through the gateways). Prints one JSON line: the latency median, p99 and max of each,
/// requests per second, and the overview's median over the baseline's.

#include "apps/bench/bench_processes.hpp"
#include "apps/bench/benches.hpp"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace flint::bench {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct load_result {
  std::vector<double> latencies_ms;
  double seconds = 0;
  long failures = 0;
};

/// `clients` threads, each sending `requests` GETs of `path` on one connection.
load_result load(std::uint16_t port, const std::string& path, int clients, int requests) {
  std::vector<std::vector<double>> per_client(static_cast<std::size_t>(clients));
  std::atomic<long> failures{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(30, 0);
      ++ready;
      while (!go)
        std::this_thread::yield();
      for (int r = 0; r < requests; ++r) {
        auto t0 = clock_type::now();
        auto res = client.Get(path.c_str());
        auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
        if (!res || res->status != 200)
          ++failures;
        else
          per_client[static_cast<std::size_t>(c)].push_back(ms);
      }
    });
  while (ready < clients)
    std::this_thread::sleep_for(1ms);
  auto start = clock_type::now();
  go = true;
  for (auto& t : threads)
    t.join();
  load_result out;
  out.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  out.failures = failures;
  for (auto& v : per_client)
    out.latencies_ms.insert(out.latencies_ms.end(), v.begin(), v.end());
  std::sort(out.latencies_ms.begin(), out.latencies_ms.end());
  return out;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty())
    return 0;
  auto i = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1));
  return sorted[i];
}

} // namespace

int rest(int argc, char** argv) {
  int clients = 100, requests = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    long v = 0;
    if (a == "--clients" && i + 1 < argc && parse_long(argv[++i], v) && v > 0)
      clients = static_cast<int>(v);
    else if (a == "--requests" && i + 1 < argc && parse_long(argv[++i], v) && v > 0)
      requests = static_cast<int>(v);
    else {
      std::fprintf(stderr, "usage: flint-bench rest [--clients N] [--requests R]\n");
      return 2;
    }
  }
  auto bin = binary_dir();
  fs::path node = bin / "flint-node", cli = bin / "flint",
           endless = bin.parent_path() / "jobs" / "endless.so";
  for (const auto& p : {node, cli, endless})
    if (!fs::exists(p)) {
      std::fprintf(stderr, "flint-bench rest: %s is missing (build it first)\n", p.c_str());
      return 1;
    }
  auto dir = make_temp_dir("rest");
  if (!dir)
    return 1;
  auto config = *dir / "flink-conf.yaml";
  auto write_config = [&](const std::string& jm_port) {
    std::ofstream out(config);
    out << "jobmanager.rpc.address: 127.0.0.1\njobmanager.rpc.port: " << jm_port
        << "\ntaskmanager.host: 127.0.0.1\ntaskmanager.numberOfTaskSlots: 2\n"
        << "blob.storage.directory: " << (*dir / "blobs").string()
        << "\nrest.bind-address: 127.0.0.1\nrest.port: 0\n";
  };
  std::vector<pid_t> pids;
  auto start_node = [&](const std::string& name, const std::string& role) {
    auto out = *dir / (name + ".out");
    pids.push_back(spawn({node.string(), role, "--config", config.string(), "--log-level", "warn"},
                         out, *dir / (name + ".log")));
    return await_ready(pids.back(), out, 30s);
  };
  auto give_up = [&](const std::string& why) {
    std::fprintf(stderr, "flint-bench rest: %s (see %s)\n", why.c_str(), dir->c_str());
    stop_children(pids, 5s);
    return 1;
  };
  write_config("0");
  auto jm = start_node("jm", "jobmanager");
  if (!jm)
    return give_up("the JobManager did not start");
  write_config(ready_field(*jm, "rpc_port"));
  auto port = static_cast<std::uint16_t>(std::atoi(ready_field(*jm, "rest_port").c_str()));
  if (port == 0)
    return give_up("the JobManager serves no REST endpoint");
  for (const char* name : {"tm1", "tm2"})
    if (!start_node(name, "taskmanager"))
      return give_up(std::string("TaskManager ") + name + " did not start");
  auto rc = run_to_exit({cli.string(), "run", "--config", config.string(), "-d", "-p", "2",
                         endless.string(), "--rate", "1000"},
                        *dir / "run.out", *dir / "run.log", 30s);
  if (!rc || *rc != 0)
    return give_up("flint run -d endless.so failed");
  {
    httplib::Client c("127.0.0.1", port);
    auto until = clock_type::now() + 30s;
    for (;;) {
      auto r = c.Get("/jobs/overview");
      if (r && r->status == 200 && r->body.find("\"state\":\"RUNNING\"") != std::string::npos)
        break;
      if (clock_type::now() > until)
        return give_up("the job did not run within 30 s");
      std::this_thread::sleep_for(50ms);
    }
  }
  auto baseline = load(port, "/config", clients, requests);
  auto overview = load(port, "/jobs/overview", clients, requests);
  stop_children(pids, 5s);
  std::error_code ec;
  fs::remove_all(*dir, ec);
  auto rate = [](const load_result& r) {
    return static_cast<double>(r.latencies_ms.size()) / r.seconds;
  };
  double base_median = percentile(baseline.latencies_ms, 0.5);
  double overview_median = percentile(overview.latencies_ms, 0.5);
  std::printf(
    "{\"bench\":\"rest\",\"clients\":%d,\"requests_per_client\":%d,"
    "\"config_median_ms\":%.3f,\"config_p99_ms\":%.3f,\"config_max_ms\":%.3f,"
    "\"config_requests_per_s\":%.0f,\"config_failures\":%ld,"
    "\"overview_median_ms\":%.3f,\"overview_p99_ms\":%.3f,\"overview_max_ms\":%.3f,"
    "\"overview_requests_per_s\":%.0f,\"overview_failures\":%ld,\"overview_over_config\":%.2f}\n",
    clients, requests, base_median, percentile(baseline.latencies_ms, 0.99),
    percentile(baseline.latencies_ms, 1.0), rate(baseline), baseline.failures, overview_median,
    percentile(overview.latencies_ms, 0.99), percentile(overview.latencies_ms, 1.0), rate(overview),
    overview.failures, base_median > 0 ? overview_median / base_median : 0.0);
  return baseline.failures + overview.failures == 0 ? 0 : 1;
}

} // namespace flint::bench
