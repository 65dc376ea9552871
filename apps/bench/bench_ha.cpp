/// `flint-bench ha [--rounds R] [--session-timeout-ms N] [--timeout-s S] [--rate N] [--keep-logs]`:
/// JobManager failover with ZooKeeper HA on loopback with real processes — the time from losing
/// the leading JobManager to the standby leading and the job RUNNING again under it.
///
/// Each round starts, per mode, a fresh cluster in a temp dir: a real ZooKeeper server
/// (deploy/zookeeper.sh with ZK_TICK_TIME=500, on a free port), two JobManagers (the first leads;
/// each has its own blob.storage.directory, so the standby serves the job library from the HA
/// storage), three one-slot TaskManagers and the endless job (jobs/endless.so) with -p 2 and a
/// checkpoint every 200 ms, submitted by `flint run -d` without -m (it finds the Dispatcher through
/// ZooKeeper). Once a checkpoint completed the leader is lost:
///   kill9     `kill -9`: its ZooKeeper session, and with it the leader latch, only expires after
///             high-availability.zookeeper.client.session-timeout;
///   graceful  SIGTERM (the baseline): the leader removes its latch as it shuts down, so the
///             standby is elected without waiting for a session to expire.
/// Figures, from the kill, out of the nodes' log timestamps (milliseconds): election_ms (the
/// standby's "Dispatcher dispatcher was granted leadership"), job_running_ms (its "switched from
/// state CREATED to RUNNING" for the recovered job), tasks_running_ms (every task the new leader
/// deployed logged "switched from INITIALIZING to RUNNING" on a TaskManager after the kill) and
/// recovery_ms (the later of the two). Prints a JSON line per round and mode and a summary per
/// mode with the medians, recovery over the session timeout, kill9 over graceful, and whether the
/// goal — kill9 recovery within session timeout + 1 s in every round — was met.
///
/// Binaries: flint-node, flint and ../jobs/endless.so beside this one. deploy/zookeeper.sh: under
/// $FLINT_SOURCE if set, else in the source tree this binary was built from (a parent of build/bin,
/// or CMAKE_HOME_DIRECTORY in build/CMakeCache.txt). The ZooKeeper server runs detached (setsid), so
/// each cluster stops it by the pid in its zookeeper.pid, also on SIGINT/SIGTERM/SIGHUP to this
/// process; the flint processes die with this one.

#include "apps/bench/benches.hpp"

#include "apps/bench/bench_processes.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace flint::bench {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* usage_text =
  "usage: flint-bench ha [--rounds R] [--session-timeout-ms N] [--timeout-s S] [--rate N] "
  "[--keep-logs]\n";

constexpr long zk_tick_ms = 500;
constexpr long heartbeat_interval_ms = 500;
constexpr long heartbeat_timeout_ms = 10000;
const std::string granted_marker = "Dispatcher dispatcher was granted leadership";

struct options {
  int rounds = 3;
  long session_timeout_ms = 4000;
  /// From the kill until the job must run again.
  long timeout_s = 60;
  /// Records per second per source subtask (endless.so --rate).
  long rate = 1000;
  bool keep_logs = false;
};

enum class loss { kill9, graceful };

const char* to_string(loss l) {
  return l == loss::kill9 ? "kill9" : "graceful";
}

struct paths {
  fs::path node, cli, endless, zookeeper_sh;
};

// ---- the ZooKeeper server --------------------------------------------------------------------

/// The server of the cluster being run, for the signal handler (0: none).
std::atomic<pid_t> live_zookeeper{0};

extern "C" void on_fatal_signal(int sig) {
  if (pid_t pid = live_zookeeper.load(); pid > 0)
    kill(pid, SIGKILL);
  signal(sig, SIG_DFL);
  raise(sig);
}

/// A loopback port nothing listens on now (bound and released; the server takes it right after).
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0
      && getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

/// `pid` is alive and a ZooKeeper server (not a reused pid, not a zombie).
bool is_zookeeper(pid_t pid) {
  return pid > 0 && kill(pid, 0) == 0
    && read_file("/proc/" + std::to_string(pid) + "/cmdline").find("QuorumPeerMain")
    != std::string::npos;
}

/// SIGTERM to the server, SIGKILL after 15 s; it is not our child, so its exit is polled.
void stop_zookeeper(pid_t pid) {
  if (!is_zookeeper(pid))
    return;
  kill(pid, SIGTERM);
  auto until = std::chrono::steady_clock::now() + 15s;
  while (is_zookeeper(pid)) {
    if (std::chrono::steady_clock::now() >= until) {
      kill(pid, SIGKILL);
      until = std::chrono::steady_clock::now() + 5s;
    }
    std::this_thread::sleep_for(50ms);
  }
}

// ---- one cluster -----------------------------------------------------------------------------

/// ZooKeeper, two JobManagers and three one-slot TaskManagers in `dir`, running the endless job;
/// stops every process it started.
class ha_cluster {
public:
  ha_cluster(const paths& bin, const options& o, fs::path dir)
    : bin_(bin),
      o_(o),
      dir_(std::move(dir)) {}
  ~ha_cluster() { stop(); }
  ha_cluster(const ha_cluster&) = delete;
  ha_cluster& operator=(const ha_cluster&) = delete;

  /// Starts everything and waits until the leader completed a checkpoint of the job.
  std::string start() {
    fs::create_directories(dir_);
    int port = free_port();
    if (port == 0)
      return "no free loopback port for ZooKeeper";
    auto zk_dir = dir_ / "zk";
    auto rc =
      run_to_exit({"/usr/bin/env", "ZK_TICK_TIME=" + std::to_string(zk_tick_ms), "bash",
                   bin_.zookeeper_sh.string(), "start", zk_dir.string(), std::to_string(port)},
                  dir_ / "zk-start.out", dir_ / "zk-start.err", 60s);
    zk_pid_ = std::atoi(read_file(zk_dir / "zookeeper.pid").c_str());
    live_zookeeper = zk_pid_;
    if (!rc || *rc != 0)
      return "deploy/zookeeper.sh start failed: " + read_file(dir_ / "zk-start.err");
    write_config(port);

    if (!start_node("jm1", "jobmanager", dir_ / "blobs-jm1"))
      return "the first JobManager did not start (" + log("jm1").string() + ")";
    leader_pid_ = pids_.back();
    auto until = std::chrono::steady_clock::now() + 30s;
    while (!first_line(read_log(log("jm1")), granted_marker)) {
      if (std::chrono::steady_clock::now() >= until)
        return "the first JobManager did not lead within 30 s";
      std::this_thread::sleep_for(20ms);
    }
    if (!start_node("jm2", "jobmanager", dir_ / "blobs-jm2"))
      return "the second JobManager did not start (" + log("jm2").string() + ")";
    for (const char* name : {"tm1", "tm2", "tm3"})
      if (!start_node(name, "taskmanager", {}))
        return std::string("TaskManager ") + name + " did not start";

    rc = run_to_exit({bin_.cli.string(), "run", "--config", config().string(), "-p", "2", "-d",
                      bin_.endless.string(), "--rate", std::to_string(o_.rate)},
                     dir_ / "run.out", dir_ / "run.log", 30s);
    if (!rc)
      return "flint run -d did not return within 30 s";
    if (*rc != 0)
      return "flint run -d exited " + std::to_string(*rc) + ": " + read_file(dir_ / "run.log");
    until = std::chrono::steady_clock::now() + 60s;
    while (!first_line(read_log(log("jm1")), "Completed checkpoint ")) {
      if (std::chrono::steady_clock::now() >= until)
        return "no checkpoint completed within 60 s of the submission";
      std::this_thread::sleep_for(20ms);
    }
    if (first_line(read_log(log("jm2")), granted_marker))
      return "the standby led while the leader was alive";
    tasks_ = deployed(read_log(log("jm1"))).ids[0].size();
    return {};
  }

  /// Loses the leader; returns the time of the signal.
  double lose_leader(loss how) {
    double at = wall_ms();
    kill(leader_pid_, how == loss::kill9 ? SIGKILL : SIGTERM);
    return at;
  }

  /// The old leader's process has exited (it is reaped then); its exit time is noted once.
  void poll_leader_exit() {
    if (leader_exit_ms_ || leader_pid_ <= 0)
      return;
    int status = 0;
    if (waitpid(leader_pid_, &status, WNOHANG) == leader_pid_) {
      leader_exit_ms_ = wall_ms();
      std::erase(pids_, leader_pid_);
    }
  }

  std::optional<double> leader_exit_ms() const { return leader_exit_ms_; }
  std::size_t tasks() const { return tasks_; }
  fs::path log(const std::string& name) const { return dir_ / (name + ".log"); }
  std::vector<fs::path> tm_logs() const { return {log("tm1"), log("tm2"), log("tm3")}; }

  void stop() {
    stop_children(pids_, 5s);
    // Keyed state backends' local directories of the nodes (a killed node cannot remove its own).
    // They are named flint-state-<pid>-XXXXXX (local_state_root.hpp).
    std::error_code ec;
    auto tmp = fs::temp_directory_path(ec);
    for (auto pid : started_) {
      auto prefix = "flint-state-" + std::to_string(pid) + "-";
      for (fs::directory_iterator it(tmp, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().filename().string().starts_with(prefix))
          fs::remove_all(it->path(), ec);
    }
    started_.clear();
    stop_zookeeper(zk_pid_);
    live_zookeeper = 0;
    zk_pid_ = 0;
  }

private:
  fs::path config() const { return dir_ / "flink-conf.yaml"; }

  void write_config(int zk_port) {
    std::ofstream out(config());
    out << "jobmanager.rpc.address: 127.0.0.1\n"
        << "jobmanager.rpc.port: 0\n"
        << "taskmanager.host: 127.0.0.1\n"
        << "taskmanager.numberOfTaskSlots: 1\n"
        << "blob.storage.directory: " << (dir_ / "blobs").string() << "\n"
        << "heartbeat.interval: " << heartbeat_interval_ms << " ms\n"
        << "heartbeat.timeout: " << heartbeat_timeout_ms << " ms\n"
        << "restart-strategy.type: fixed-delay\n"
        << "restart-strategy.fixed-delay.attempts: 1000\n"
        << "restart-strategy.fixed-delay.delay: 0 ms\n"
        << "execution.checkpointing.interval: 200 ms\n"
        << "state.checkpoints.dir: " << (dir_ / "checkpoints").string() << "\n"
        << "high-availability.type: zookeeper\n"
        << "high-availability.zookeeper.quorum: 127.0.0.1:" << zk_port << "\n"
        << "high-availability.storageDir: " << (dir_ / "ha").string() << "\n"
        << "high-availability.cluster-id: flint-bench-ha\n"
        << "high-availability.zookeeper.client.session-timeout: " << o_.session_timeout_ms
        << " ms\n";
  }

  /// Starts a node (a JobManager with its own blob directory) and waits for its ready line.
  bool start_node(const std::string& name, const std::string& role, const fs::path& blobs) {
    std::vector<std::string> argv{bin_.node.string(), role,   "--config",   config().string(),
                                  "--log-level",      "info", "--log-file", log(name).string()};
    if (!blobs.empty()) {
      argv.push_back("-D");
      argv.push_back("blob.storage.directory=" + blobs.string());
    }
    auto out = dir_ / (name + ".out");
    pids_.push_back(spawn(argv, out, dir_ / (name + ".err")));
    started_.push_back(pids_.back());
    return await_ready(pids_.back(), out, 30s).has_value();
  }

  paths bin_;
  options o_;
  fs::path dir_;
  std::vector<pid_t> pids_; ///< running (or not yet reaped)
  std::vector<pid_t> started_; ///< every node started
  pid_t leader_pid_ = 0, zk_pid_ = 0;
  std::optional<double> leader_exit_ms_;
  std::size_t tasks_ = 0;
};

// ---- rounds ----------------------------------------------------------------------------------

/// What the logs show after the loss, as far as they show it.
struct recovery {
  std::optional<double> granted, job_running, tasks_running;
  std::optional<long> restored_checkpoint;
  std::size_t deployed = 0; ///< tasks the new leader deployed (its latest attempt)

  bool done() const { return granted && job_running && tasks_running; }
};

recovery read_recovery(const ha_cluster& c, double kill_ms) {
  recovery r;
  // Log times have millisecond resolution: a line of the kill's millisecond counts as after it.
  double after = std::floor(kill_ms);
  auto jm = read_log(c.log("jm2"));
  r.granted = first_line(jm, granted_marker, after);
  r.job_running = first_line(jm, "switched from state CREATED to RUNNING", after);
  static const std::string restoring = " from Checkpoint ";
  for (const auto& l : jm)
    if (l.ms >= after && l.text.find("Restoring job ") != std::string::npos)
      if (auto at = l.text.find(restoring); at != std::string::npos)
        r.restored_checkpoint = std::atol(l.text.c_str() + at + restoring.size());
  auto d = deployed(jm, after);
  if (d.ids.empty())
    return r;
  const auto& ids = d.ids.rbegin()->second;
  r.deployed = ids.size();
  if (ids.size() != c.tasks())
    return r;
  auto running = running_tasks(c.tm_logs(), after);
  double last = 0;
  for (const auto& id : ids) {
    auto i = running.find(id);
    if (i == running.end())
      return r;
    last = std::max(last, i->second);
  }
  r.tasks_running = last;
  return r;
}

struct figures {
  double election = 0, job_running = 0, tasks_running = 0, recovery = 0;
};

struct round_result {
  figures f;
  std::optional<double> leader_exit; ///< kill -> the old leader's process exited
  std::optional<long> restored_checkpoint;
  std::size_t tasks = 0;
  std::string error;
};

round_result run_round(const paths& bin, const options& o, loss how, const fs::path& dir) {
  round_result r;
  ha_cluster c(bin, o, dir);
  if (r.error = c.start(); !r.error.empty()) {
    r.error += "; logs in " + dir.string();
    return r;
  }
  r.tasks = c.tasks();
  double kill_ms = c.lose_leader(how);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  recovery rec;
  for (;;) {
    c.poll_leader_exit();
    rec = read_recovery(c, kill_ms);
    if (rec.done() || std::chrono::steady_clock::now() >= until)
      break;
    std::this_thread::sleep_for(10ms);
  }
  c.poll_leader_exit();
  if (c.leader_exit_ms())
    r.leader_exit = *c.leader_exit_ms() - kill_ms;
  r.restored_checkpoint = rec.restored_checkpoint;
  if (!rec.done()) {
    r.error = "the job was not RUNNING again under the standby " + std::to_string(o.timeout_s)
      + " s after the loss (" + (rec.granted ? "" : "the standby never led; ")
      + (rec.job_running ? "" : "the job never switched to RUNNING; ") + "the new leader deployed "
      + std::to_string(rec.deployed) + " of " + std::to_string(r.tasks) + " tasks); logs in "
      + dir.string();
    return r;
  }
  r.f.election = *rec.granted - kill_ms;
  r.f.job_running = *rec.job_running - kill_ms;
  r.f.tasks_running = *rec.tasks_running - kill_ms;
  r.f.recovery = std::max(r.f.job_running, r.f.tasks_running);
  return r;
}

std::string figures_json(const figures& f) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "\"election_ms\":%.0f,\"job_running_ms\":%.0f,\"tasks_running_ms\":%.0f,"
                "\"recovery_ms\":%.0f",
                f.election, f.job_running, f.tasks_running, f.recovery);
  return buf;
}

struct mode_result {
  figures median;
  stats recovery;
  std::string error;
};

void print_round(const options& o, loss how, int round, const round_result& r) {
  std::printf(
    "{\"bench\":\"ha\",\"kind\":\"round\",\"mode\":\"%s\",\"round\":%d,"
    "\"session_timeout_ms\":%ld",
    to_string(how), round, o.session_timeout_ms);
  if (r.error.empty()) {
    std::printf(",%s,\"tasks\":%zu", figures_json(r.f).c_str(), r.tasks);
    if (r.restored_checkpoint)
      std::printf(",\"restored_checkpoint\":%ld", *r.restored_checkpoint);
    if (r.leader_exit)
      std::printf(",\"old_leader_exit_ms\":%.0f", *r.leader_exit);
    std::printf("}\n");
  } else {
    std::printf(",\"error\":\"%s\"}\n", json_escape(r.error).c_str());
  }
  std::fflush(stdout);
}

mode_result summarize_mode(const std::vector<round_result>& rounds) {
  mode_result m;
  std::vector<double> election, job, tasks, rec;
  for (const auto& r : rounds) {
    if (!r.error.empty()) {
      m.error = r.error;
      return m;
    }
    election.push_back(r.f.election);
    job.push_back(r.f.job_running);
    tasks.push_back(r.f.tasks_running);
    rec.push_back(r.f.recovery);
  }
  m.recovery = summarize(rec);
  m.median = {summarize(election).median, summarize(job).median, summarize(tasks).median,
              m.recovery.median};
  return m;
}

void print_summary(const options& o, loss how, const mode_result& m, const mode_result* graceful) {
  std::printf(
    "{\"bench\":\"ha\",\"kind\":\"summary\",\"mode\":\"%s\",\"rounds\":%d,"
    "\"session_timeout_ms\":%ld,\"zk_tick_ms\":%ld,\"heartbeat_interval_ms\":%ld,"
    "\"heartbeat_timeout_ms\":%ld,\"rate\":%ld",
    to_string(how), o.rounds, o.session_timeout_ms, zk_tick_ms, heartbeat_interval_ms,
    heartbeat_timeout_ms, o.rate);
  if (!m.error.empty()) {
    std::printf(",\"error\":\"%s\"}\n", json_escape(m.error).c_str());
    return;
  }
  double goal = static_cast<double>(o.session_timeout_ms) + 1000.0;
  std::printf(
    ",\"median\":{%s},\"recovery_ms\":{\"median\":%.0f,\"min\":%.0f,\"max\":%.0f},"
    "\"recovery_over_session_timeout\":%.3f",
    figures_json(m.median).c_str(), m.recovery.median, m.recovery.min, m.recovery.max,
    m.recovery.median / static_cast<double>(o.session_timeout_ms));
  if (graceful != nullptr && graceful->error.empty() && graceful->recovery.median > 0)
    std::printf(
      ",\"baseline\":\"graceful\",\"baseline_recovery_median_ms\":%.0f,"
      "\"over_baseline\":%.3f",
      graceful->recovery.median, m.recovery.median / graceful->recovery.median);
  // The goal holds when every round recovered within it.
  std::printf(
    ",\"goal\":\"recovery_ms <= session_timeout_ms + 1000 in every round\","
    "\"goal_ms\":%.0f,\"goal_met\":%s}\n",
    goal, m.recovery.max <= goal ? "true" : "false");
}

int usage_error(const std::string& why) {
  std::fprintf(stderr, "flint-bench ha: %s\n%s", why.c_str(), usage_text);
  return 2;
}

} // namespace

int ha(int argc, char** argv) {
  options o;
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
    if (a == "--keep-logs") {
      o.keep_logs = true;
    } else if (a == "--rounds") {
      if (!number(1))
        return usage_error("--rounds needs a whole number of at least 1");
      o.rounds = static_cast<int>(n);
    } else if (a == "--session-timeout-ms") {
      // ZooKeeper bounds a session's timeout to 2..20 ticks.
      if (!number(2 * zk_tick_ms) || n > 20 * zk_tick_ms)
        return usage_error("--session-timeout-ms needs a whole number in "
                           + std::to_string(2 * zk_tick_ms) + ".." + std::to_string(20 * zk_tick_ms)
                           + " (ZooKeeper's tick is " + std::to_string(zk_tick_ms) + " ms)");
      o.session_timeout_ms = n;
    } else if (a == "--timeout-s") {
      if (!number(1))
        return usage_error("--timeout-s needs a positive whole number");
      o.timeout_s = n;
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

  auto bin_dir = binary_dir();
  paths bin{
    bin_dir / "flint-node", bin_dir / "flint", bin_dir.parent_path() / "jobs" / "endless.so", {}};
  for (const auto& p : {bin.node, bin.cli, bin.endless})
    if (access(p.c_str(), R_OK) != 0) {
      std::fprintf(
        stderr, "flint-bench ha: %s is missing (build flint-node, flint and flint_job_endless)\n",
        p.c_str());
      return 1;
    }
  auto zk = find_deploy_script("zookeeper.sh");
  if (!zk) {
    const char* src = std::getenv("FLINT_SOURCE");
    bool set = src != nullptr && *src != '\0';
    std::fprintf(stderr, "flint-bench ha: deploy/zookeeper.sh not found %s%s\n",
                 set ? "under FLINT_SOURCE=" : "in the source tree of this build: ",
                 set ? src : "set FLINT_SOURCE to the source tree");
    return 1;
  }
  bin.zookeeper_sh = *zk;
  auto made = make_temp_dir("ha");
  if (!made)
    return 1;
  fs::path dir = *made;
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    signal(sig, on_fatal_signal);

  std::vector<round_result> killed, graceful;
  for (int i = 0; i < o.rounds; ++i)
    for (loss how : {loss::kill9, loss::graceful}) {
      auto r =
        run_round(bin, o, how, dir / (std::string(to_string(how)) + "-" + std::to_string(i)));
      print_round(o, how, i, r);
      (how == loss::kill9 ? killed : graceful).push_back(std::move(r));
    }
  auto k = summarize_mode(killed), g = summarize_mode(graceful);
  print_summary(o, loss::kill9, k, &g);
  print_summary(o, loss::graceful, g, nullptr);
  std::fflush(stdout);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    signal(sig, SIG_DFL);
  bool ok = k.error.empty() && g.error.empty();
  std::error_code ec;
  if (ok && !o.keep_logs)
    fs::remove_all(dir, ec);
  else
    std::fprintf(stderr, "flint-bench ha: logs in %s\n", dir.c_str());
  return ok ? 0 : 1;
}

} // namespace flint::bench
