// build/bin/flint-node as real processes: the ready line, a TaskManager registering at a
// JobManager, SIGTERM shutting both down with exit 0, and clear failures (exit 1) for bad
// configuration files, values, flags and ports in use. Processes and sockets: the tests wait on
// conditions (lines, log contents, exits) with deadlines.

#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "test/support/child_process.hpp"

using namespace std::chrono_literals;
using flint::test::child_process;

namespace {

const std::string node_bin = FLINT_NODE_BIN;

std::filesystem::path temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path()
    / ("flint_node_app_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

/// "flint-node ready role=... k=v ..." → {role: ..., k: v}; empty if not a ready line.
std::map<std::string, std::string> parse_ready(const std::string& line) {
  std::map<std::string, std::string> out;
  if (line.rfind("flint-node ready ", 0) != 0)
    return out;
  std::istringstream in(line.substr(17));
  std::string kv;
  while (in >> kv) {
    auto eq = kv.find('=');
    if (eq != std::string::npos)
      out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

/// Reads stdout lines until the ready line (logs go to stderr or the log file).
std::map<std::string, std::string> await_ready(child_process& p,
                                               std::chrono::milliseconds timeout = 20s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto line = p.read_line(std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now()));
    if (!line)
      break;
    if (auto r = parse_ready(*line); !r.empty())
      return r;
  }
  return {};
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool file_eventually_contains(const std::filesystem::path& p, const std::string& text,
                              std::chrono::milliseconds timeout = 20s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_file(p).find(text) != std::string::npos)
      return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

/// SIGTERM, then the exit code (the child is killed after `timeout`: 128+9 then).
int terminate(child_process& p, std::chrono::milliseconds timeout = 10s) {
  ::kill(p.pid(), SIGTERM);
  return p.stop(timeout);
}

/// Runs flint-node (in `cwd` when given) with stderr folded into stdout; returns (exit code,
/// everything it printed).
std::pair<int, std::string> run_to_end(const std::vector<std::string>& args,
                                       const std::filesystem::path& cwd = {}) {
  std::string cmd = cwd.empty() ? std::string() : "cd '" + cwd.string() + "' && ";
  cmd += "exec '" + node_bin + "'";
  for (const auto& a : args)
    cmd += " '" + a + "'";
  cmd += " 2>&1 </dev/null";
  child_process p({"/bin/sh", "-c", cmd});
  REQUIRE(p.started());
  std::string out;
  while (auto line = p.read_line(20s))
    out += *line + "\n";
  return {p.stop(5s), out};
}

} // namespace

TEST_CASE(
  "a TaskManager process registers at a JobManager process and SIGTERM stops both with exit 0") {
  auto dir = temp_dir("register");
  auto jm_log = dir / "jm.log";
  auto tm_log = dir / "tm.log";
  auto jm_trace = dir / "jm.trace.jsonl";
  child_process jm({node_bin, "jobmanager", "--rpc-port", "0", "--host", "127.0.0.1", "--bind-host",
                    "127.0.0.1", "-D", "blob.storage.directory=" + (dir / "blobs").string(),
                    "--log-file", jm_log.string(), "--trace-file", jm_trace.string()});
  REQUIRE(jm.started());
  auto jm_ready = await_ready(jm);
  REQUIRE(jm_ready["role"] == "jobmanager");
  REQUIRE(!jm_ready["rpc_port"].empty());
  CHECK(jm_ready["host"] == "127.0.0.1");
  CHECK(jm_ready["endpoints"].find("dispatcher") != std::string::npos);
  CHECK(jm_ready["endpoints"].find("resource_manager") != std::string::npos);
  CHECK(std::stoi(jm_ready["pid"]) == jm.pid());
  auto port = jm_ready["rpc_port"];

  child_process tm({node_bin, "taskmanager", "-m", "127.0.0.1:" + port, "--slots", "3", "--host",
                    "127.0.0.1", "-Dtaskmanager.resource-id=tm-one", "--log-file",
                    tm_log.string()});
  REQUIRE(tm.started());
  auto tm_ready = await_ready(tm);
  REQUIRE(tm_ready["role"] == "taskmanager");
  CHECK(tm_ready["slots"] == "3");
  CHECK(tm_ready["resource_id"] == "tm-one");
  CHECK(tm_ready["jobmanager"] == "127.0.0.1:" + port);
  CHECK(tm_ready["rpc_port"] != "0");

  // Flink's lines on both sides.
  CHECK(file_eventually_contains(jm_log,
                                 "Registering TaskManager with ResourceID task_executor/tm-one"));
  CHECK(file_eventually_contains(tm_log, "Successful registration at resource manager"));
  // The JobManager's message trace went to its file too.
  CHECK(file_eventually_contains(jm_trace, "register_task_executor"));

  auto before = std::chrono::steady_clock::now();
  CHECK(terminate(tm) == 0);
  CHECK(terminate(jm) == 0);
  CHECK(std::chrono::steady_clock::now() - before < 10s);
  CHECK(read_file(jm_log).find("Terminated the JobManager") != std::string::npos);
  CHECK(read_file(tm_log).find("Terminated the TaskManager tm-one") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a TaskManager started before its JobManager registers once the JobManager is up") {
  auto dir = temp_dir("late_jm");
  auto jm_log = dir / "jm.log";
  // Learn a free port: a JobManager on port 0, stopped again.
  std::string port;
  {
    child_process probe({node_bin, "jobmanager", "--rpc-port", "0", "--bind-host", "127.0.0.1",
                         "--log-level", "off"});
    port = await_ready(probe)["rpc_port"];
    REQUIRE(!port.empty());
    REQUIRE(terminate(probe) == 0);
  }
  child_process tm({node_bin, "taskmanager", "-m", "127.0.0.1:" + port, "--host", "127.0.0.1",
                    "--log-level", "warn"});
  REQUIRE(!await_ready(tm).empty());
  child_process jm({node_bin, "jobmanager", "--rpc-port", port, "--bind-host", "127.0.0.1",
                    "--log-file", jm_log.string()});
  REQUIRE(await_ready(jm)["rpc_port"] == port);
  CHECK(file_eventually_contains(jm_log, "Registering TaskManager with ResourceID"));
  CHECK(terminate(tm) == 0);
  CHECK(terminate(jm) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a configuration file is read and flags override it") {
  auto dir = temp_dir("conf");
  auto conf = dir / "flink-conf.yaml";
  {
    std::ofstream f(conf);
    f << "jobmanager.rpc.address: 127.0.0.1\n"
         "jobmanager.rpc.port: 1\n" // overridden by --rpc-port
         "taskmanager.numberOfTaskSlots: 2\n"
         "heartbeat:\n  interval: 2 s\n  timeout: 20 s\n";
  }
  child_process jm({node_bin, "jobmanager", "--config", conf.string(), "--rpc-port", "0",
                    "--bind-host", "127.0.0.1", "--log-level", "off"});
  auto ready = await_ready(jm);
  REQUIRE(ready["role"] == "jobmanager");
  CHECK(ready["host"] == "127.0.0.1");
  CHECK(ready["rpc_port"] != "1");
  CHECK(terminate(jm) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("without --config the node reads config.yaml from FLINK_CONF_DIR, before "
          "flink-conf.yaml, and names deprecated keys") {
  auto dir = temp_dir("confdir");
  auto log = dir / "jm.log";
  // flink-conf.yaml would stop the node: config.yaml (Flink 2's nested YAML) must be the one read.
  std::ofstream(dir / "flink-conf.yaml") << "heartbeat.interval: nonsense\n";
  std::ofstream(dir / "config.yaml") << "jobmanager:\n  rpc:\n    address: 127.0.0.1\n"
                                        "state:\n  savepoints:\n    dir: /tmp\n"
                                        "pekko:\n  ask:\n    timeout: 3 s\n";
  child_process jm({"/bin/sh", "-c",
                    "unset FLINT_CONF_DIR; FLINK_CONF_DIR='" + dir.string() + "' exec '" + node_bin
                      + "' jobmanager --rpc-port 0 --bind-host 127.0.0.1 -D blob.storage.directory="
                      + (dir / "blobs").string() + " --log-file '" + log.string() + "'"});
  REQUIRE(jm.started());
  auto ready = await_ready(jm);
  REQUIRE(ready["role"] == "jobmanager");
  CHECK(ready["host"] == "127.0.0.1");
  CHECK(file_eventually_contains(log, "Loading configuration from " + (dir / "config.yaml").string()));
  CHECK(file_eventually_contains(log, "Config uses deprecated configuration key "
                                      "'state.savepoints.dir' instead of proper key "
                                      "'execution.checkpointing.savepoint-dir'"));
  CHECK(read_file(log).find("'pekko.ask.timeout' is not used") == std::string::npos);
  CHECK(terminate(jm) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad configuration, values and flags fail with a clear message and exit code 1") {
  auto dir = temp_dir("bad");
  SUBCASE("a configuration file that does not exist") {
    auto [code, out] = run_to_end({"jobmanager", "--config", (dir / "missing.yaml").string()});
    CHECK(code == 1);
    CHECK(out.find("missing.yaml") != std::string::npos);
    CHECK(out.find("does not exist") != std::string::npos);
  }
  SUBCASE("a configuration file that is not YAML") {
    auto conf = dir / "broken.yaml";
    std::ofstream(conf) << "jobmanager.rpc.port: [1, 2\nfoo: : :\n";
    auto [code, out] = run_to_end({"jobmanager", "--config", conf.string()});
    CHECK(code == 1);
    CHECK(out.find("flint-node: error:") != std::string::npos);
    CHECK(out.find("broken.yaml") != std::string::npos);
  }
  SUBCASE("a bad value names its key") {
    auto [code, out] = run_to_end({"taskmanager", "-D", "heartbeat.interval=soon"});
    CHECK(code == 1);
    CHECK(out.find("heartbeat.interval") != std::string::npos);
    CHECK(out.find("soon") != std::string::npos);
  }
  SUBCASE("an unknown role or flag") {
    auto [code, out] = run_to_end({"coordinator"});
    CHECK(code == 1);
    CHECK(out.find("role") != std::string::npos);
    auto [code2, out2] = run_to_end({"taskmanager", "--no-such-flag"});
    CHECK(code2 == 1);
    CHECK(out2.find("--no-such-flag") != std::string::npos);
    auto [code3, out3] = run_to_end({"taskmanager", "--slots", "0"});
    CHECK(code3 == 1);
    CHECK(out3.find("--slots") != std::string::npos);
  }
  SUBCASE("a port in use") {
    child_process jm({node_bin, "jobmanager", "--rpc-port", "0", "--bind-host", "127.0.0.1",
                      "--log-level", "off"});
    auto port = await_ready(jm)["rpc_port"];
    REQUIRE(!port.empty());
    auto [code, out] = run_to_end({"jobmanager", "--rpc-port", port, "--bind-host", "127.0.0.1"});
    CHECK(code == 1);
    CHECK(out.find("could not start the JobManager") != std::string::npos);
    CHECK(out.find(port) != std::string::npos);
    CHECK(terminate(jm) == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a path key the node cannot serve stops it before it starts, naming the key") {
  auto dir = temp_dir("paths");
  auto cwd = dir / "cwd";
  std::filesystem::create_directories(cwd);
  SUBCASE("a checkpoint directory on another file system") {
    for (std::string role : {"jobmanager", "taskmanager"}) {
      CAPTURE(role);
      auto [code, out] = run_to_end({role, "-D", "state.checkpoints.dir=hdfs://x/y"}, cwd);
      CHECK(code == 1);
      CHECK(out.find("flint-node: error:") != std::string::npos);
      CHECK(out.find("'state.checkpoints.dir'") != std::string::npos);
      CHECK(out.find("hdfs://x/y") != std::string::npos);
      CHECK(out.find("not supported") != std::string::npos);
      CHECK(out.find("flint-node ready") == std::string::npos);
    }
  }
  SUBCASE("a relative HA storage directory") {
    for (std::string storage : {"ha", "file:ha", "./shared/ha"}) {
      CAPTURE(storage);
      auto [code, out] = run_to_end({"jobmanager", "-D", "high-availability.type=zookeeper", "-D",
                                     "high-availability.zookeeper.quorum=127.0.0.1:1", "-D",
                                     "high-availability.storageDir=" + storage},
                                    cwd);
      CHECK(code == 1);
      CHECK(out.find("'high-availability.storageDir'") != std::string::npos);
      CHECK(out.find("absolute") != std::string::npos);
      CHECK(out.find("flint-node ready") == std::string::npos);
    }
  }
  // Refused before anything is written: no folder appears where the node was started.
  CHECK(std::filesystem::is_empty(cwd));
  std::filesystem::remove_all(dir);
}
