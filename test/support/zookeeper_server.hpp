#pragma once
/// Real ZooKeeper servers for integration tests: one standalone server, or an ensemble of three
/// on loopback, each a java process of its own with its data in a temporary directory, on free
/// ports, with tickTime=500. The destructor kills every server it started (by pid) and removes the
/// directories, so a failing test leaves nothing behind. Needs deploy/install-deps.sh's
/// default-jre-headless and libzookeeper-java.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

namespace flint::test {

class zookeeper_server {
public:
  /// Starts `servers` servers (1: standalone; 3: an ensemble) and waits up to `timeout` until
  /// every one serves. Throws std::runtime_error, with the log's last lines, if one does not.
  explicit zookeeper_server(std::size_t servers = 1,
                            std::chrono::milliseconds timeout = std::chrono::seconds(20));
  ~zookeeper_server();
  zookeeper_server(const zookeeper_server&) = delete;
  zookeeper_server& operator=(const zookeeper_server&) = delete;

  /// "127.0.0.1:p1,127.0.0.1:p2,..." for every server, running or not.
  std::string connect_string() const;
  std::size_t size() const noexcept { return servers_.size(); }
  std::uint16_t client_port(std::size_t index) const { return servers_.at(index).client_port; }
  /// The pid of a running (or paused) server, or -1.
  pid_t pid(std::size_t index) const { return servers_.at(index).pid; }
  /// Its data and log directory.
  const std::string& directory(std::size_t index) const { return servers_.at(index).dir; }

  /// SIGTERM, then waits for its exit (SIGKILL after 10 s). Its data directory stays.
  void stop(std::size_t index);
  /// SIGKILL, then waits for its exit. Its data directory stays.
  void kill(std::size_t index);
  /// SIGSTOP: the process stays, its sockets stay open, nothing answers (a hung server).
  void pause(std::size_t index);
  /// SIGCONT after `pause`.
  void resume(std::size_t index);
  /// Starts a stopped or killed server again on the same ports and data directory and waits up
  /// to `timeout` until it serves (in an ensemble: until it joined a quorum). Throws like the
  /// constructor.
  void restart(std::size_t index, std::chrono::milliseconds timeout = std::chrono::seconds(20));

  /// What `srvr` reports as its mode ("standalone", "leader", "follower"), or "" if it does not
  /// serve now.
  std::string mode(std::size_t index) const;
  /// Waits up to `timeout` until the server serves; false otherwise.
  bool wait_serving(std::size_t index, std::chrono::milliseconds timeout) const;
  /// The last `lines` lines of its log, for failure messages.
  std::string log_tail(std::size_t index, std::size_t lines = 20) const;

private:
  struct server {
    std::string dir;
    std::uint16_t client_port = 0;
    std::uint16_t quorum_port = 0;
    std::uint16_t election_port = 0;
    pid_t pid = -1;
    bool paused = false;
  };

  void write_config(std::size_t index) const;
  void spawn(std::size_t index);
  void wait_started(std::size_t index, std::chrono::steady_clock::time_point deadline);
  void reap(std::size_t index, std::chrono::milliseconds timeout);

  std::string root_;
  std::vector<server> servers_;
};

} // namespace flint::test
