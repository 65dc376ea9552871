// `flint` against a real standalone cluster: a flint-node JobManager and two flint-node
// TaskManagers, each its own process on loopback, as `start-cluster.sh` would start them.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test/apps/cli/command_runner.hpp"
#include "test/support/word_counts.hpp"
#include "test/support/child_process.hpp"

using namespace std::chrono_literals;
using flint::test::child_process;
using flint::test::command_result;
using flint::test::describe;
using flint::test::run_command;

namespace {

const std::string flint_bin = FLINT_CLI_BIN;
const std::string node_bin = FLINT_NODE_BIN;
const std::string jobs_dir = FLINT_JOBS_DIR;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// key=value fields of a "flint-node ready ..." line.
std::map<std::string, std::string> fields_of(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word)
    if (auto eq = word.find('='); eq != std::string::npos)
      out[word.substr(0, eq)] = word.substr(eq + 1);
  return out;
}

struct node_process {
  std::unique_ptr<child_process> proc;
  std::map<std::string, std::string> ready;

  explicit node_process(std::vector<std::string> argv) {
    argv.insert(argv.begin(), node_bin);
    proc = std::make_unique<child_process>(argv);
    REQUIRE(proc->started());
    // The ready line is the only line on stdout; logs go to stderr.
    while (auto line = proc->read_line(30s)) {
      if (line->rfind("flint-node ready", 0) == 0) {
        ready = fields_of(*line);
        break;
      }
    }
    const std::string what = "flint-node " + argv[1] + " did not become ready";
    REQUIRE_MESSAGE(!ready.empty(), what);
  }

  ~node_process() {
    if (proc && proc->started()) {
      kill(proc->pid(), SIGTERM);
      proc->stop(10s);
    }
  }

  std::string address() const { return "127.0.0.1:" + ready.at("rpc_port"); }
};

/// One JobManager and two TaskManagers with one slot each, shared by the tests of this file.
struct cluster {
  std::unique_ptr<node_process> jm;
  std::vector<std::unique_ptr<node_process>> tms;

  cluster() {
    jm = std::make_unique<node_process>(
      std::vector<std::string>{"jobmanager", "--host", "127.0.0.1", "--bind-host", "127.0.0.1",
                               "--rpc-port", "0", "--log-level", "warn", "-D", "rest.port=0",
                               "-D", "rest.bind-address=127.0.0.1"});
    for (int i = 0; i < 2; ++i)
      tms.push_back(std::make_unique<node_process>(
        std::vector<std::string>{"taskmanager", "--jobmanager", jm->address(), "--host",
                                 "127.0.0.1", "--bind-host", "127.0.0.1", "--rpc-port", "0",
                                 "--data-port", "0", "--slots", "1", "--log-level", "warn"}));
  }

  std::string address() const { return jm->address(); }
  /// The JobManager's REST endpoint: what Flink's `-m` names.
  std::string rest_address() const { return "127.0.0.1:" + jm->ready.at("rest_port"); }
};

cluster& the_cluster() {
  static cluster c;
  return c;
}

command_result run_flint(std::vector<std::string> args, std::chrono::milliseconds timeout = 120s) {
  args.insert(args.begin(), flint_bin);
  return run_command(args, timeout);
}

/// The JobID from "Job has been submitted with JobID <id>".
std::string submitted_job_id(const std::string& out) {
  const std::string marker = "Job has been submitted with JobID ";
  auto at = out.find(marker);
  REQUIRE(at != std::string::npos);
  return out.substr(at + marker.size(), 32);
}

/// A plain HTTP GET on loopback: the whole answer, headers included.
std::string http_get(std::uint16_t port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  auto req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  REQUIRE(::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(const std::string& name)
    : path(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

} // namespace

TEST_CASE(
  "flint run executes WordCount on a JobManager and two TaskManager processes and list and status show it") {
  auto& c = the_cluster();
  temp_dir dir("flint_cluster_wordcount");
  auto text = flint::test::sample_text(300'000);
  std::ofstream(dir.path / "in.txt", std::ios::binary) << text;
  auto output = dir.path / "out";

  auto r = run_flint({"run", "-m", c.address(), "-p", "2", jobs_dir + "/wordcount.so", "--input",
                      (dir.path / "in.txt").string(), "--output", output.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto id = submitted_job_id(r.out);
  CHECK(contains(r.out, "Job with JobID " + id + " has finished."));
  CHECK(contains(r.out, "Job Runtime: "));
  CHECK(flint::test::read_counts(output) == flint::test::plain_count(text));

  auto all = run_flint({"list", "-a", "-m", c.address()});
  REQUIRE_MESSAGE(all.exit_code == 0, describe(all));
  CHECK(contains(all.out, "---------------------- Terminated Jobs -----------------------"));
  CHECK_MESSAGE(contains(all.out, " : " + id + " : Streaming WordCount (FINISHED)"), describe(all));

  auto running = run_flint({"list", "-m", c.address()});
  REQUIRE_MESSAGE(running.exit_code == 0, describe(running));
  CHECK(contains(running.out, "No running jobs."));

  auto status = run_flint({"status", "-m", c.address(), id});
  REQUIRE_MESSAGE(status.exit_code == 0, describe(status));
  CHECK(contains(status.out, "Job " + id + " is FINISHED."));
}

TEST_CASE("flint run -d returns once submitted and the job still finishes") {
  auto& c = the_cluster();
  temp_dir dir("flint_cluster_detached");
  std::ofstream(dir.path / "in.txt") << "to be or not to be\n";
  auto r = run_flint({"run", "-d", "-m", c.address(), jobs_dir + "/wordcount.so", "--input",
                      (dir.path / "in.txt").string(), "--output", (dir.path / "out").string()});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto id = submitted_job_id(r.out);
  CHECK_FALSE(contains(r.out, "has finished"));
  bool finished = false;
  for (int i = 0; i < 100 && !finished; ++i) {
    auto s = run_flint({"status", "-m", c.address(), id});
    REQUIRE_MESSAGE(s.exit_code == 0, describe(s));
    finished = contains(s.out, "is FINISHED.");
    if (!finished)
      std::this_thread::sleep_for(100ms); // real processes: wait on the condition, bounded
  }
  CHECK(finished);
  CHECK(flint::test::read_counts(dir.path / "out")
        == std::map<std::string, std::int64_t>{{"be", 2}, {"not", 1}, {"or", 1}, {"to", 2}});
}

TEST_CASE("status and cancel of an unknown job id fail with a clear message and exit 1") {
  auto& c = the_cluster();
  const std::string unknown = "00000000000000000000000000c0ffee";
  for (const char* action : {"status", "cancel"}) {
    CAPTURE(action);
    auto r = run_flint({action, "-m", c.address(), unknown});
    CHECK_MESSAGE(r.exit_code == 1, describe(r));
    CHECK_MESSAGE(contains(r.err, "Could not find job " + unknown), describe(r));
  }
}

TEST_CASE("flint trace of the JobManager and of a TaskManager show the slot protocol in order") {
  auto& c = the_cluster();
  temp_dir dir("flint_cluster_trace");
  std::ofstream(dir.path / "in.txt") << "a b c\n";
  auto r = run_flint({"run", "-m", c.address(), "-p", "2", jobs_dir + "/wordcount.so", "--input",
                      (dir.path / "in.txt").string(), "--output", (dir.path / "out").string()});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto id = submitted_job_id(r.out);

  auto file = (dir.path / "jm.json").string();
  auto t = run_flint({"trace", "-m", c.address(), "--job", id, "--export", "chrome", file});
  REQUIRE_MESSAGE(t.exit_code == 0, describe(t));
  std::ifstream in(file);
  auto json = nlohmann::json::parse(in);
  std::map<std::string, double> first;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] != "X" && e["ph"] != "i")
      continue;
    auto name = e["name"].get<std::string>();
    if (!first.count(name) || e["ts"].get<double>() < first[name])
      first[name] = e["ts"].get<double>();
  }
  std::vector<std::string> order = {"request_slot", "offer_slots", "submit_task",
                                    "update_task_execution_state"};
  for (const auto& m : order)
    REQUIRE_MESSAGE(first.count(m) == 1, m);
  for (std::size_t i = 1; i < order.size(); ++i) {
    CAPTURE(order[i]);
    CHECK(first[order[i - 1]] <= first[order[i]]);
  }

  // A TaskManager's own trace: the JobMaster's calls as its TaskExecutor received them.
  auto tm = "127.0.0.1:" + c.tms[0]->ready.at("rpc_port");
  auto lines = run_flint({"trace", "-m", tm, "--no-follow", "--endpoint", "task_executor/"});
  REQUIRE_MESSAGE(lines.exit_code == 0, describe(lines));
  CHECK(contains(lines.out, " receive  job_master/"));
  CHECK(contains(lines.out, "register_task_executor"));
}

TEST_CASE(
  "a running job shows in flint list and flint cancel ends it while the attached client reports it") {
  auto& c = the_cluster();
  // The attached client waits in the background for the job it submits.
  child_process attached({flint_bin, "run", "-m", c.address(), jobs_dir + "/cli_endless.so"});
  REQUIRE(attached.started());
  auto submitted = attached.read_line(60s);
  REQUIRE(submitted.has_value());
  auto id = submitted_job_id(*submitted);

  bool running = false;
  for (int i = 0; i < 100 && !running; ++i) {
    auto l = run_flint({"list", "-m", c.address()});
    REQUIRE_MESSAGE(l.exit_code == 0, describe(l));
    running = contains(l.out, "------------------ Running/Restarting Jobs -------------------\n")
      && contains(l.out, " : " + id + " : Endless Sequence (RUNNING)");
    if (!running)
      std::this_thread::sleep_for(100ms); // real processes: wait on the condition, bounded
  }
  REQUIRE_MESSAGE(running, "the endless job never showed as RUNNING");

  auto cancel = run_flint({"cancel", "-m", c.address(), id});
  REQUIRE_MESSAGE(cancel.exit_code == 0, describe(cancel));
  CHECK(contains(cancel.out, "Cancelling job " + id + "."));
  CHECK(contains(cancel.out, "Cancelled job " + id + "."));

  // The attached `flint run` sees the end and exits 1 (the job did not finish).
  CHECK(attached.stop(30s) == 1);
  auto status = run_flint({"status", "-m", c.address(), id});
  CHECK_MESSAGE(contains(status.out, "is CANCELED."), describe(status));
}

TEST_CASE(
  "flint run --timeout gives up waiting with exit 1 while the job keeps running until cancelled") {
  auto& c = the_cluster();
  auto r =
    run_flint({"run", "-m", c.address(), "--timeout", "2 s", jobs_dir + "/cli_endless.so"}, 60s);
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  auto id = submitted_job_id(r.out);
  CHECK_MESSAGE(contains(r.err, "did not finish within 2 s"), describe(r));
  auto status = run_flint({"status", "-m", c.address(), id});
  CHECK_MESSAGE(contains(status.out, "is RUNNING."), describe(status));
  auto cancel = run_flint({"cancel", "-m", c.address(), id});
  CHECK_MESSAGE(cancel.exit_code == 0, describe(cancel));
}

TEST_CASE(
  "flint status of a job starved of slots lists its pending slot requests, their age and the cluster's free slots") {
  auto& c = the_cluster();
  // Three slots needed, two exist (one per TaskManager): one request waits.
  auto r =
    run_flint({"run", "-d", "-m", c.address(), "-p", "3", jobs_dir + "/cli_endless.so"}, 60s);
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto id = submitted_job_id(r.out);
  command_result status;
  bool waiting = false;
  for (int i = 0; i < 100 && !waiting; ++i) {
    status = run_flint({"status", "-m", c.address(), id});
    waiting = contains(status.out, "slots assigned: 2 of 3 needed")
      && contains(status.out, "Cluster: 0 of 2 slots free on 2 TaskManagers; 1 more needed");
    if (!waiting)
      std::this_thread::sleep_for(100ms); // real processes: wait on the condition, bounded
  }
  CHECK_MESSAGE(waiting, describe(status));
  CHECK_MESSAGE(contains(status.out, "is RUNNING."), describe(status));
  CHECK_MESSAGE(contains(status.out, "waiting for a slot: request SlotRequestId{"),
                describe(status));
  CHECK_MESSAGE(contains(status.out, " ms\n"), describe(status));
  auto cancel = run_flint({"cancel", "-m", c.address(), id});
  CHECK_MESSAGE(cancel.exit_code == 0, describe(cancel));
}

TEST_CASE("flint -m takes the JobManager's REST address, as Flink's -m does, and finds its RPC "
          "service from there") {
  auto& c = the_cluster();
  REQUIRE(c.jm->ready.at("rest_port") != "0");
  temp_dir dir("flint_cluster_rest_m");
  std::ofstream(dir.path / "in.txt") << "to be or not to be\n";
  auto r = run_flint({"run", "-m", c.rest_address(), jobs_dir + "/wordcount.so", "--input",
                      (dir.path / "in.txt").string(), "--output", (dir.path / "out").string()});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto id = submitted_job_id(r.out);
  CHECK(contains(r.out, "Job with JobID " + id + " has finished."));
  auto list = run_flint({"list", "-a", "-m", c.rest_address()});
  CHECK_MESSAGE(contains(list.out, " : " + id + " : Streaming WordCount (FINISHED)"),
                describe(list));
  // The RPC address still works as before.
  auto status = run_flint({"status", "-m", c.address(), id});
  CHECK_MESSAGE(contains(status.out, "is FINISHED."), describe(status));
}

TEST_CASE("flint checkpoint triggers a checkpoint that completes, savepoint -d disposes of a "
          "savepoint, stop --drain drains and stops with a savepoint") {
  auto& c = the_cluster();
  temp_dir dir("flint_cluster_checkpoint");
  auto checkpoints = dir.path / "checkpoints";
  auto r = run_flint({"run", "-d", "-m", c.address(), "-D",
                      "execution.checkpointing.interval=1 h", "-D",
                      "execution.checkpointing.dir=" + checkpoints.string(),
                      jobs_dir + "/cli_endless.so"},
                     60s);
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto id = submitted_job_id(r.out);

  command_result cp;
  for (int i = 0; i < 100; ++i) {
    cp = run_flint({"checkpoint", "-m", c.address(), id});
    if (cp.exit_code == 0)
      break;
    std::this_thread::sleep_for(100ms); // tasks still deploying: wait on the condition, bounded
  }
  REQUIRE_MESSAGE(cp.exit_code == 0, describe(cp));
  CHECK(contains(cp.out, "Triggering checkpoint for job " + id + "."));
  CHECK_MESSAGE(contains(cp.out, " for job " + id + " completed."), describe(cp));
  auto full = run_flint({"checkpoint", "-m", c.address(), "-full", id});
  CHECK_MESSAGE(full.exit_code == 0, describe(full));
  CHECK(contains(full.out, "Triggering full checkpoint for job " + id + "."));
  CHECK_MESSAGE(contains(full.err, "cannot ask for a full checkpoint"), describe(full));

  auto sp = run_flint({"savepoint", "-m", c.address(), id, (dir.path / "sp").string()});
  REQUIRE_MESSAGE(sp.exit_code == 0, describe(sp));
  const std::string marker = "Savepoint completed. Path: file:";
  auto at = sp.out.find(marker);
  REQUIRE(at != std::string::npos);
  auto path = sp.out.substr(at + marker.size());
  path = path.substr(0, path.find('\n'));
  REQUIRE(std::filesystem::exists(std::filesystem::path(path) / "_metadata"));
  auto dispose = run_flint({"savepoint", "-d", path});
  CHECK_MESSAGE(dispose.exit_code == 0, describe(dispose));
  CHECK(contains(dispose.out, "Savepoint '" + path + "' disposed."));
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::exists(dir.path / "sp")); // only the savepoint's own directory went

  auto stop = run_flint({"stop", "-m", c.address(), "--drain", "-p", (dir.path / "sp").string(), id});
  CHECK_MESSAGE(stop.exit_code == 0, describe(stop));
  CHECK_MESSAGE(contains(stop.out, "Draining job \"" + id + "\" with a savepoint."), describe(stop));
  CHECK(contains(stop.out, "Savepoint completed. Path: file:"));
  bool finished = false;
  for (int i = 0; i < 100 && !finished; ++i) {
    finished = contains(run_flint({"status", "-m", c.address(), id}).out, "is FINISHED.");
    if (!finished)
      std::this_thread::sleep_for(100ms);
  }
  CHECK(finished);
}

TEST_CASE("flint trace leaves out REST's own queries unless --monitoring asks for them") {
  auto& c = the_cluster();
  // The dashboard's kind of polling: REST asks the Dispatcher for the jobs' overview.
  auto rest_port = static_cast<std::uint16_t>(std::stoi(c.jm->ready.at("rest_port")));
  for (int i = 0; i < 3; ++i)
    REQUIRE(http_get(rest_port, "/jobs/overview").find("200 OK") != std::string::npos);
  auto plain = run_flint({"trace", "-m", c.address(), "--no-follow", "--json"});
  REQUIRE_MESSAGE(plain.exit_code == 0, describe(plain));
  CHECK_FALSE(contains(plain.out, "\"from\":\"rest\""));
  CHECK_FALSE(contains(plain.out, "\"monitoring\":true"));
  auto all = run_flint({"trace", "-m", c.address(), "--no-follow", "--json", "--monitoring"});
  REQUIRE_MESSAGE(all.exit_code == 0, describe(all));
  CHECK(contains(all.out, "\"from\":\"rest\""));
  CHECK(contains(all.out, "\"monitoring\":true"));
}
