// `flint` as a user runs it: real processes, exit codes and the lines they print.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test/apps/cli/command_runner.hpp"

using namespace std::chrono_literals;
using flint::test::command_result;
using flint::test::describe;
using flint::test::run_command;

namespace {

const std::string flint_bin = FLINT_CLI_BIN;

command_result run_flint(std::vector<std::string> args, std::chrono::milliseconds timeout = 20s) {
  args.insert(args.begin(), flint_bin);
  return run_command(args, timeout);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A TCP socket on 127.0.0.1, bound to a free port; listening or not.
struct local_socket {
  int fd = -1;
  std::uint16_t port = 0;
  explicit local_socket(bool listening) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    if (listening)
      REQUIRE(listen(fd, 16) == 0);
  }
  ~local_socket() { close(fd); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

} // namespace

TEST_CASE("flint without an action prints the usage and exits 1, as Flink's CLI") {
  auto r = run_flint({});
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK(contains(r.err, "flint <ACTION>"));
}

TEST_CASE("flint --help prints the actions and exits 0") {
  auto r = run_flint({"--help"});
  CHECK_MESSAGE(r.exit_code == 0, describe(r));
  for (const char* action :
       {"\"run\"", "\"info\"", "\"list\"", "\"status\"", "\"cancel\"", "\"trace\""})
    CHECK(contains(r.out, action));
}

TEST_CASE("an unknown action is a usage error naming the valid ones") {
  auto r = run_flint({"submit", "x.so"});
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK(contains(r.err, "\"submit\" is not a valid action."));
  CHECK(contains(r.err, "Valid actions are"));
}

TEST_CASE("wrong options and arguments are usage errors (exit 1, as Flink's CLI), found before "
          "anything connects") {
  // A port nothing listens on: a usage error must not even try to connect.
  local_socket closed(false);
  auto m = closed.address();
  struct usage_case {
    std::vector<std::string> args;
    const char* says;
  };
  std::vector<usage_case> cases = {
    {{"list", "--bogus"}, "--bogus"},
    {{"list", "-m", "no-port-here"}, "host:port"},
    {{"list", "-m", m, "--timeout", "soon"}, "duration"},
    {{"status", "-m", m}, "job-id"},
    {{"cancel", "-m", m, "not-a-job-id"}, "is not a JobID"},
    {{"status", "-m", m, "0123456789abcdef0123456789abcdeg"}, "is not a JobID"},
    {{"run", "-m", m}, "job-library"},
    {{"run", "-p", "0", "x.so"}, "-p"},
    {{"run", "--local", "-d", "x.so"}, "cannot be detached"},
    {{"run", "-m", m, "-s", "/sp", "-claimMode", "LEGACY", "x.so"}, "neither NO_CLAIM nor CLAIM"},
    {{"run", "-m", m, "-s", "/sp", "--restoreMode", "sometimes", "x.so"}, "'sometimes'"},
    {{"trace", "-m", m, "--export", "svg", "out.svg"}, "chrome or mermaid"},
    {{"trace", "-m", m, "--follow", "--no-follow"}, "exclude each other"},
    {{"run", "-m", m, "-t", "yarn-per-job", "x.so"}, "yarn-per-job"},
    {{"run", "-t", "remote", "--local", "x.so"}, "exclude each other"},
    {{"run", "-m", m, "-c", "org.example.WordCount", "x.so"}, "is not a job entry name"},
    {{"savepoint", "-m", m}, "needs a JobID"},
    {{"savepoint", "-d", "/sp", "0123456789abcdef0123456789abcdef"}, "takes no JobID"},
    {{"savepoint", "-d", "relative/sp"}, "relative/sp"},
    {{"checkpoint", "-m", m}, "job-id"},
    {{"checkpoint", "-m", m, "-full", "nope"}, "is not a JobID"},
    {{"stop", "-m", m, "--drain"}, "job-id"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    auto r = run_flint(c.args);
    CHECK_MESSAGE(r.exit_code == 1, describe(r));
    CHECK_MESSAGE(contains(r.err, c.says), describe(r));
  }
}

TEST_CASE("flint run takes Flink's claim mode spellings: -claimMode, --claimMode, -cm, "
          "-restoreMode, --restoreMode, -rm") {
  // Parsed, not refused as usage: the run goes on to load the (missing) library and fails there.
  for (const char* flag : {"-claimMode", "--claimMode", "-cm", "-restoreMode", "--restoreMode", "-rm"})
    for (const char* mode : {"CLAIM", "NO_CLAIM", "claim"}) {
      CAPTURE(flag);
      CAPTURE(mode);
      auto r = run_flint({"run", "-s", "/sp", flag, mode, "/no/such/job.so"});
      CHECK_MESSAGE(r.exit_code == 1, describe(r));
      CHECK_MESSAGE(contains(r.err, "/no/such/job.so"), describe(r));
    }
}

TEST_CASE("flint list against a closed port fails fast with a clear message and exit 1") {
  local_socket closed(false);
  auto r = run_flint({"list", "-m", closed.address()}, 15s);
  CHECK_FALSE(r.timed_out);
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK_MESSAGE(contains(r.err, "Could not connect to the JobManager at " + closed.address()),
                describe(r));
  CHECK(r.elapsed < 5s);
}

TEST_CASE("ZooKeeper HA settings the client cannot use are reported, not skipped for the rpc address") {
  local_socket closed(false);
  auto host_port = closed.address();
  auto port = host_port.substr(host_port.rfind(':') + 1);
  // The creator ACL without its digest file: before, the client fell back to
  // jobmanager.rpc.address and reported only that nothing answered there.
  auto r = run_flint({"list", "-D", "high-availability.type=zookeeper", "-D",
                      "high-availability.zookeeper.quorum=127.0.0.1:1", "-D",
                      "high-availability.zookeeper.client.acl=creator", "-D",
                      "jobmanager.rpc.address=127.0.0.1", "-D", "jobmanager.rpc.port=" + port},
                     15s);
  CHECK_FALSE(r.timed_out);
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK_MESSAGE(contains(r.err, "high-availability.zookeeper.client.digest-file"), describe(r));
}

TEST_CASE("status, cancel and trace against a closed port fail with exit 1 too") {
  local_socket closed(false);
  for (auto args : std::vector<std::vector<std::string>>{
         {"status", "-m", closed.address(), "0123456789abcdef0123456789abcdef"},
         {"cancel", "-m", closed.address(), "0123456789abcdef0123456789abcdef"},
         {"trace", "-m", closed.address(), "--no-follow"}}) {
    CAPTURE(args);
    auto r = run_flint(args, 15s);
    CHECK_MESSAGE(r.exit_code == 1, describe(r));
    CHECK_MESSAGE(contains(r.err, "Could not connect to the"), describe(r));
    CHECK_MESSAGE(contains(r.err, closed.address()), describe(r));
  }
}

TEST_CASE("a node that accepts connections but never answers is given up on after --timeout") {
  // The kernel completes the TCP handshake; nothing ever speaks CAF's protocol on it.
  local_socket mute(true);
  auto r = run_flint({"list", "-m", mute.address(), "--timeout", "1 s"}, 20s);
  CHECK_FALSE(r.timed_out);
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK_MESSAGE(contains(r.err, "Could not connect to the JobManager at " + mute.address()),
                describe(r));
  CHECK(r.elapsed < 8s);
}

TEST_CASE("the default JobManager address comes from the configuration file") {
  local_socket closed(false);
  auto dir =
    std::filesystem::temp_directory_path() / ("flint_cli_conf_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream conf(dir / "flink-conf.yaml");
    conf << "jobmanager.rpc.address: 127.0.0.1\njobmanager.rpc.port: " << closed.port << "\n";
  }
  // --config FILE
  auto r = run_flint({"list", "--config", (dir / "flink-conf.yaml").string()});
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK_MESSAGE(contains(r.err, "at " + closed.address()), describe(r));
  // $FLINT_CONF_DIR
  auto env = run_command({flint_bin, "list"}, 20s, {"FLINT_CONF_DIR=" + dir.string()});
  CHECK_MESSAGE(contains(env.err, "at " + closed.address()), describe(env));
  // -D over the file
  auto over = run_flint(
    {"list", "--config", (dir / "flink-conf.yaml").string(), "-D", "jobmanager.rpc.port=1"});
  CHECK_MESSAGE(contains(over.err, "at 127.0.0.1:1"), describe(over));
  // A configuration file that does not exist is a failure naming it.
  auto missing = run_flint({"list", "--config", (dir / "nope.yaml").string()});
  CHECK_MESSAGE(missing.exit_code == 1, describe(missing));
  CHECK_MESSAGE(contains(missing.err, "nope.yaml"), describe(missing));
  std::filesystem::remove_all(dir);
}

TEST_CASE("flint savepoint -d deletes only a directory whose _metadata is Flint's") {
  namespace fs = std::filesystem;
  auto root = fs::temp_directory_path() / ("flint_cli_dispose_" + std::to_string(getpid()));
  fs::remove_all(root);
  // A directory without _metadata: refused, untouched.
  fs::create_directories(root / "plain");
  std::ofstream(root / "plain" / "data") << "keep me";
  auto plain = run_flint({"savepoint", "-d", (root / "plain").string()});
  CHECK_MESSAGE(plain.exit_code == 1, describe(plain));
  CHECK_MESSAGE(contains(plain.err, "holds no _metadata"), describe(plain));
  CHECK(fs::exists(root / "plain" / "data"));
  // A _metadata that is not Flint's (Flink's own, or anything else): refused, untouched.
  fs::create_directories(root / "foreign");
  std::ofstream(root / "foreign" / "_metadata") << "\x4a\x6f\x62 not a Flint savepoint";
  auto foreign = run_flint({"savepoint", "-d", (root / "foreign" / "_metadata").string()});
  CHECK_MESSAGE(foreign.exit_code == 1, describe(foreign));
  CHECK_MESSAGE(contains(foreign.err, "nothing was deleted"), describe(foreign));
  CHECK(fs::exists(root / "foreign" / "_metadata"));
  // A file, and a path that does not exist.
  auto file = run_flint({"savepoint", "-d", (root / "plain" / "data").string()});
  CHECK_MESSAGE(file.exit_code == 1, describe(file));
  CHECK_MESSAGE(contains(file.err, "is not a directory"), describe(file));
  auto missing = run_flint({"savepoint", "--dispose", (root / "nope").string()});
  CHECK_MESSAGE(missing.exit_code == 1, describe(missing));
  CHECK_MESSAGE(contains(missing.err, "does not exist"), describe(missing));
  CHECK(fs::exists(root / "plain" / "data"));
  fs::remove_all(root);
}
