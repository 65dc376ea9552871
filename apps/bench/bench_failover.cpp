/// `flint-bench failover [--rounds R] [--quick] [--heartbeat-interval-ms N] [--heartbeat-timeout-ms N]
/// [--timeout-s S] [--rate N] [--keep-logs]`: the time from losing a TaskManager to the job RUNNING
/// again, on loopback with real processes (flint-node, flint and jobs/endless.so beside this
/// binary). Each round starts a fresh cluster in a temp dir — a JobManager under fixed-delay (1000
/// attempts, no delay) and three one-slot TaskManagers — runs the endless job with -p 2 (one
/// TaskManager spare) and then loses a busy TaskManager:
///   connection_drop    `kill -9`: the JobMaster's monitor of the TaskExecutor fires at once;
///   heartbeat_timeout  `kill -STOP`: the connection stays open, only heartbeat.timeout notices
///                      (the baseline: Flink notices a lost TaskManager this way, after 50 s).
/// Recovery ends when the job switched from RESTARTING to RUNNING and every task of the new
/// attempt logged RUNNING on its TaskManager. The phases come from the nodes' log timestamps
/// (milliseconds): detect (kill to "Disconnect TaskExecutor"), restart_decision (to the job's
/// RESTARTING), cancel (to the last CANCELED/FAILED of the old attempt), slots (to the last
/// "Deploying ... (attempt #n)") and deploy_to_running (to the last task RUNNING).
/// Prints a JSON line per round and a summary per mode.

#include "apps/bench/benches.hpp"

#include "apps/bench/bench_processes.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <unistd.h>

namespace flint::bench {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* usage_text =
  "usage: flint-bench failover [--rounds R] [--quick] [--heartbeat-interval-ms N] "
  "[--heartbeat-timeout-ms N] [--timeout-s S] [--rate N] [--keep-logs]\n";

struct options {
  int rounds = 3;
  long heartbeat_interval_ms = 200;
  long heartbeat_timeout_ms = 2000;
  /// From the kill until the job must run again.
  long timeout_s = 60;
  /// Steady running before the kill.
  long settle_ms = 500;
  /// Records per second per source subtask (endless.so --rate).
  long rate = 1000;
  bool keep_logs = false;
};

enum class detection { connection_drop, heartbeat_timeout };

const char* to_string(detection d) {
  return d == detection::connection_drop ? "connection_drop" : "heartbeat_timeout";
}

/// The times of recovery after a kill, as far as the logs show them.
struct recovery {
  std::optional<double> detect, restarting, cancelled, job_running, last_deploy, tasks_running;
  int attempt = 0; ///< the attempt now deployed
  std::string cause;
  bool done = false;
};

recovery read_recovery(const fs::path& jm_log, const std::vector<fs::path>& tm_logs,
                       const std::string& victim, double kill_ms) {
  recovery r;
  auto jm = read_log(jm_log);
  auto d = deployed(jm);
  if (d.ids.empty() || d.ids.rbegin()->first == 0)
    r.attempt = 0;
  else
    r.attempt = d.ids.rbegin()->first;
  // Log times have millisecond resolution: a line of the kill's millisecond counts as after it.
  double after = std::floor(kill_ms);
  // "Disconnect TaskExecutor task_executor/<resource id> because: <cause>".
  const std::string disconnect = "Disconnect TaskExecutor ", because = " because: ";
  for (const auto& l : jm) {
    if (l.ms < after)
      continue;
    const auto& t = l.text;
    auto at = t.find(disconnect);
    auto cause = at == std::string::npos ? at : t.find(because, at);
    if (cause != std::string::npos && !r.detect && cause >= victim.size()
        && t.compare(cause - victim.size(), victim.size(), victim) == 0) {
      r.detect = l.ms;
      r.cause = t.substr(cause + because.size());
    } else if (t.find("switched from state RUNNING to RESTARTING") != std::string::npos
               && !r.restarting) {
      r.restarting = l.ms;
    } else if (t.find("switched from state RESTARTING to RUNNING") != std::string::npos) {
      r.job_running = l.ms;
    } else if (auto at = t.find(") switched from "); at != std::string::npos && r.attempt > 0
               && (t.find(" to CANCELED", at) != std::string::npos
                   || t.find(" to FAILED", at) != std::string::npos)) {
      auto n = attempt_number(attempt_before(t, at));
      if (n >= 0 && n < r.attempt)
        r.cancelled = l.ms;
    }
  }
  if (r.attempt == 0 || d.ids[r.attempt].size() != d.ids[0].size())
    return r;
  r.last_deploy = d.last_ms[r.attempt];
  auto running = running_tasks(tm_logs);
  double last = 0;
  for (const auto& id : d.ids[r.attempt]) {
    auto i = running.find(id);
    if (i == running.end())
      return r;
    last = std::max(last, i->second);
  }
  r.tasks_running = last;
  // One region: the restart goes through the job's RESTARTING and back to RUNNING.
  r.done = !r.restarting || (r.job_running && *r.job_running >= *r.restarting);
  return r;
}

// ---- one cluster -----------------------------------------------------------------------------

struct binaries {
  fs::path node, cli, endless;
};

/// A JobManager and three one-slot TaskManagers in `dir`; stops every process it started.
class cluster {
public:
  cluster(const binaries& bin, const options& o, fs::path dir)
    : bin_(bin),
      o_(o),
      dir_(std::move(dir)) {}
  ~cluster() { stop(); }
  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;

  /// Starts the nodes and the endless job and waits until its tasks run on two TaskManagers.
  std::string start() {
    fs::create_directories(dir_);
    write_config(0);
    auto jm = start_node("jm", "jobmanager");
    if (!jm)
      return "the JobManager did not start (" + (dir_ / "jm.log").string() + ")";
    write_config(std::atoi(ready_field(*jm, "rpc_port").c_str()));
    for (const char* name : {"tm1", "tm2", "tm3"}) {
      auto tm = start_node(name, "taskmanager");
      if (!tm)
        return std::string("TaskManager ") + name + " did not start";
      tms_.push_back({name, ready_field(*tm, "resource_id"), pids_.back()});
    }
    auto rc = run_to_exit({bin_.cli.string(), "run", "--config", config().string(), "-p", "2", "-d",
                           bin_.endless.string(), "--rate", std::to_string(o_.rate)},
                          dir_ / "run.out", dir_ / "run.log", 30s);
    if (!rc)
      return "flint run -d did not return within 30 s";
    if (*rc != 0)
      return "flint run -d exited " + std::to_string(*rc) + ": " + read_file(dir_ / "run.log");
    auto until = std::chrono::steady_clock::now() + 30s;
    while (!all_running()) {
      if (std::chrono::steady_clock::now() >= until)
        return "the job's tasks were not RUNNING on two TaskManagers within 30 s";
      std::this_thread::sleep_for(20ms);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(o_.settle_ms));
    return {};
  }

  struct task_manager {
    std::string name, resource_id;
    pid_t pid;
  };

  /// A TaskManager with a running task.
  const task_manager* busy() const {
    for (const auto& tm : tms_)
      if (read_file(log(tm.name)).find("switched from INITIALIZING to RUNNING")
          != std::string::npos)
        return &tm;
    return nullptr;
  }

  fs::path log(const std::string& name) const { return dir_ / (name + ".log"); }
  std::vector<fs::path> tm_logs() const {
    std::vector<fs::path> logs;
    for (const auto& tm : tms_)
      logs.push_back(log(tm.name));
    return logs;
  }

  void stop() { stop_children(pids_, 5s); }

private:
  fs::path config() const { return dir_ / "flink-conf.yaml"; }

  void write_config(int jm_port) {
    std::ofstream out(config());
    out << "jobmanager.rpc.address: 127.0.0.1\n"
        << "jobmanager.rpc.port: " << jm_port << "\n"
        << "taskmanager.host: 127.0.0.1\n"
        << "taskmanager.numberOfTaskSlots: 1\n"
        << "blob.storage.directory: " << (dir_ / "blobs").string() << "\n"
        << "heartbeat.interval: " << o_.heartbeat_interval_ms << " ms\n"
        << "heartbeat.timeout: " << o_.heartbeat_timeout_ms << " ms\n"
        << "restart-strategy.type: fixed-delay\n"
        << "restart-strategy.fixed-delay.attempts: 1000\n"
        << "restart-strategy.fixed-delay.delay: 0 ms\n";
  }

  /// Starts a node and returns its ready line.
  std::optional<std::string> start_node(const std::string& name, const std::string& role) {
    auto out = dir_ / (name + ".out");
    pids_.push_back(spawn({bin_.node.string(), role, "--config", config().string(), "--log-level",
                           "info", "--log-file", log(name).string()},
                          out, dir_ / (name + ".err")));
    return await_ready(pids_.back(), out, 30s);
  }

  /// Every deployed task RUNNING, on two TaskManagers.
  bool all_running() const {
    auto d = deployed(read_log(log("jm")));
    if (d.ids[0].empty())
      return false;
    std::set<std::string> busy_tms;
    for (const auto& tm : tms_) {
      auto running = running_tasks({log(tm.name)});
      for (const auto& id : d.ids[0])
        if (running.count(id) != 0)
          busy_tms.insert(tm.name);
    }
    auto running = running_tasks(tm_logs());
    for (const auto& id : d.ids[0])
      if (running.count(id) == 0)
        return false;
    return busy_tms.size() == 2;
  }

  binaries bin_;
  options o_;
  fs::path dir_;
  std::vector<pid_t> pids_;
  std::vector<task_manager> tms_;
};

// ---- rounds ----------------------------------------------------------------------------------

struct phases {
  double detect = 0, restart_decision = 0, cancel = 0, slots = 0, deploy_to_running = 0;
};

struct round_result {
  double kill_to_running_ms = 0;
  phases p;
  int attempt = 0;
  std::string victim, cause, error;
};

std::string phases_json(const phases& p) {
  char buf[256];
  std::snprintf(
    buf, sizeof(buf),
    "{\"detect\":%.0f,\"restart_decision\":%.0f,\"cancel\":%.0f,\"slots\":%.0f,\"deploy_to_running\":%.0f}",
    p.detect, p.restart_decision, p.cancel, p.slots, p.deploy_to_running);
  return buf;
}

/// One fresh cluster, one lost TaskManager.
round_result run_round(const binaries& bin, const options& o, detection mode, const fs::path& dir) {
  round_result r;
  cluster c(bin, o, dir);
  if (r.error = c.start(); !r.error.empty())
    return r;
  const auto* victim = c.busy();
  if (victim == nullptr) {
    r.error = "no busy TaskManager to lose";
    return r;
  }
  r.victim = victim->name;
  double kill_ms = wall_ms();
  kill(victim->pid, mode == detection::connection_drop ? SIGKILL : SIGSTOP);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  recovery rec;
  for (;;) {
    rec = read_recovery(c.log("jm"), c.tm_logs(), victim->resource_id, kill_ms);
    if (rec.done || std::chrono::steady_clock::now() >= until)
      break;
    std::this_thread::sleep_for(10ms);
  }
  kill(victim->pid, SIGKILL);
  r.cause = rec.cause;
  r.attempt = rec.attempt;
  if (!rec.done) {
    r.error = "the job was not RUNNING again " + std::to_string(o.timeout_s) + " s after the kill ("
      + (rec.detect ? "" : "the loss was never detected; ") + "last attempt deployed #"
      + std::to_string(rec.attempt) + "); logs in " + dir.string();
    return r;
  }
  double end = std::max(*rec.tasks_running, rec.job_running.value_or(0));
  r.kill_to_running_ms = end - kill_ms;
  // Each phase ends at its own mark; a mark the logs lack (a restart without RESTARTING) takes the
  // previous one's time, so the phases always add up to the total.
  double t = kill_ms;
  auto step = [&t](std::optional<double> mark) {
    double from = t;
    t = std::max(t, mark.value_or(t));
    return t - from;
  };
  r.p.detect = step(rec.detect);
  r.p.restart_decision = step(rec.restarting);
  r.p.cancel = step(rec.cancelled);
  r.p.slots = step(rec.last_deploy);
  r.p.deploy_to_running = step(end);
  return r;
}

struct mode_result {
  stats total;
  phases p; ///< medians
  std::string error;
};

mode_result run_mode(const binaries& bin, const options& o, detection mode, const fs::path& dir) {
  mode_result m;
  std::vector<double> totals;
  std::vector<phases> all;
  for (int i = 0; i < o.rounds; ++i) {
    auto r =
      run_round(bin, o, mode, dir / (std::string(to_string(mode)) + "-" + std::to_string(i)));
    std::printf(
      "{\"bench\":\"failover\",\"kind\":\"round\",\"detection\":\"%s\",\"round\":%d,\"victim\":\"%s\"",
      to_string(mode), i, r.victim.c_str());
    if (r.error.empty())
      std::printf(
        ",\"kill_to_running_ms\":%.0f,\"phases_ms\":%s,\"attempt\":%d,\"cause\":\"%s\"}\n",
        r.kill_to_running_ms, phases_json(r.p).c_str(), r.attempt, json_escape(r.cause).c_str());
    else
      std::printf(",\"error\":\"%s\"}\n", json_escape(r.error).c_str());
    std::fflush(stdout);
    if (!r.error.empty()) {
      m.error = r.error;
      return m;
    }
    totals.push_back(r.kill_to_running_ms);
    all.push_back(r.p);
  }
  m.total = summarize(totals);
  auto med = [&all](double phases::*f) {
    std::vector<double> v;
    for (const auto& p : all)
      v.push_back(p.*f);
    return summarize(v).median;
  };
  m.p = {med(&phases::detect), med(&phases::restart_decision), med(&phases::cancel),
         med(&phases::slots), med(&phases::deploy_to_running)};
  return m;
}

void print_summary(const options& o, detection mode, const mode_result& m,
                   const mode_result* baseline) {
  std::printf(
    "{\"bench\":\"failover\",\"kind\":\"summary\",\"detection\":\"%s\",\"rounds\":%d,"
    "\"heartbeat_interval_ms\":%ld,\"heartbeat_timeout_ms\":%ld,\"rate\":%ld",
    to_string(mode), o.rounds, o.heartbeat_interval_ms, o.heartbeat_timeout_ms, o.rate);
  if (!m.error.empty()) {
    std::printf(",\"error\":\"%s\"}\n", json_escape(m.error).c_str());
    return;
  }
  std::printf(
    ",\"kill_to_running_ms\":{\"median\":%.0f,\"min\":%.0f,\"max\":%.0f},\"phases_ms\":%s,"
    "\"over_heartbeat_timeout\":%.3f",
    m.total.median, m.total.min, m.total.max, phases_json(m.p).c_str(),
    m.total.median / static_cast<double>(o.heartbeat_timeout_ms));
  if (baseline != nullptr && baseline->error.empty() && baseline->total.median > 0)
    std::printf(
      ",\"baseline\":\"heartbeat_timeout\",\"baseline_median_ms\":%.0f,\"over_baseline\":%.3f",
      baseline->total.median, m.total.median / baseline->total.median);
  std::printf("}\n");
}

int usage_error(const std::string& why) {
  std::fprintf(stderr, "flint-bench failover: %s\n%s", why.c_str(), usage_text);
  return 2;
}

} // namespace

int failover(int argc, char** argv) {
  options o;
  bool quick = false;
  std::optional<long> rounds, timeout_s;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    long n = 0;
    auto number = [&](long min) {
      if (!parse_long(v, n) || n < min)
        return false;
      ++i;
      return true;
    };
    if (a == "--quick") {
      quick = true;
    } else if (a == "--keep-logs") {
      o.keep_logs = true;
    } else if (a == "--rounds") {
      if (!number(1))
        return usage_error("--rounds needs a whole number of at least 1");
      rounds = n;
    } else if (a == "--heartbeat-interval-ms") {
      if (!number(1))
        return usage_error("--heartbeat-interval-ms needs a positive whole number");
      o.heartbeat_interval_ms = n;
    } else if (a == "--heartbeat-timeout-ms") {
      if (!number(1))
        return usage_error("--heartbeat-timeout-ms needs a positive whole number");
      o.heartbeat_timeout_ms = n;
    } else if (a == "--timeout-s") {
      if (!number(1))
        return usage_error("--timeout-s needs a positive whole number");
      timeout_s = n;
    } else if (a == "--rate") {
      if (!number(1))
        return usage_error("--rate needs a positive whole number");
      o.rate = n;
    } else if (a == "--help" || a == "-h") {
      std::printf("%s", usage_text);
      return 0;
    } else {
      return usage_error("unknown argument '" + a + "'");
    }
  }
  if (o.heartbeat_timeout_ms < o.heartbeat_interval_ms)
    return usage_error("--heartbeat-timeout-ms must not be shorter than --heartbeat-interval-ms");
  if (quick) {
    o.rounds = 1;
    o.timeout_s = 20;
    o.settle_ms = 200;
  }
  if (rounds)
    o.rounds = static_cast<int>(*rounds);
  if (timeout_s)
    o.timeout_s = *timeout_s;

  std::error_code ec;
  auto bin_dir = binary_dir();
  binaries bin{bin_dir / "flint-node", bin_dir / "flint",
               bin_dir.parent_path() / "jobs" / "endless.so"};
  for (const auto& p : {bin.node, bin.cli, bin.endless})
    if (access(p.c_str(), R_OK) != 0) {
      std::fprintf(
        stderr,
        "flint-bench failover: %s is missing (build flint-node, flint and flint_job_endless)\n",
        p.c_str());
      return 1;
    }
  auto made = make_temp_dir("failover");
  if (!made)
    return 1;
  fs::path dir = *made;

  auto dropped = run_mode(bin, o, detection::connection_drop, dir);
  auto timed_out = run_mode(bin, o, detection::heartbeat_timeout, dir);
  print_summary(o, detection::connection_drop, dropped, &timed_out);
  print_summary(o, detection::heartbeat_timeout, timed_out, nullptr);
  std::fflush(stdout);
  bool ok = dropped.error.empty() && timed_out.error.empty();
  if (ok && !o.keep_logs)
    fs::remove_all(dir, ec);
  else
    std::fprintf(stderr, "flint-bench failover: logs in %s\n", dir.c_str());
  return ok ? 0 : 1;
}

} // namespace flint::bench
