#include "test/support/zookeeper_server.hpp"

#include "test/support/loopback_ports.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace flint::test {

namespace {

// The jars of Debian's libzookeeper-java (its manifest names the rest) and a log4j binding, so
// the server's log says something (deploy/zookeeper.sh runs the same command).
constexpr const char* classpath =
  "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar"
  ":/usr/share/java/log4j-1.2.jar";

// What the server on 127.0.0.1:port answers to a four-letter word, or "" (bounded to ~1 s).
std::string four_letter_word(std::uint16_t port, const char* word) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return {};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  std::string answer;
  auto wait_for = [fd](short events) {
    pollfd p{fd, events, 0};
    return poll(&p, 1, 1000) == 1 && (p.revents & (events | POLLHUP)) != 0;
  };
  bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  if (!connected && errno == EINPROGRESS && wait_for(POLLOUT)) {
    int err = 0;
    socklen_t len = sizeof(err);
    connected = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  if (connected && send(fd, word, 4, MSG_NOSIGNAL) == 4) {
    char buf[1024];
    while (wait_for(POLLIN)) {
      auto n = read(fd, buf, sizeof(buf));
      if (n <= 0)
        break;
      answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  close(fd);
  return answer;
}

} // namespace

zookeeper_server::zookeeper_server(std::size_t servers, std::chrono::milliseconds timeout) {
  if (servers == 0)
    throw std::invalid_argument("zookeeper_server: at least one server");
  char tmpl[] = "/tmp/flint-zk-XXXXXX";
  if (mkdtemp(tmpl) == nullptr)
    throw std::runtime_error("zookeeper_server: cannot create a temporary directory");
  root_ = tmpl;
  auto ports = free_loopback_ports(servers == 1 ? 1 : servers * 3);
  servers_.resize(servers);
  for (std::size_t i = 0; i < servers; ++i) {
    auto& s = servers_[i];
    s.dir = root_ + "/server" + std::to_string(i + 1);
    s.client_port = ports[i * (servers == 1 ? 1 : 3)];
    if (servers > 1) {
      s.quorum_port = ports[i * 3 + 1];
      s.election_port = ports[i * 3 + 2];
    }
    std::filesystem::create_directories(s.dir + "/data");
  }
  try {
    for (std::size_t i = 0; i < servers; ++i) {
      write_config(i);
      spawn(i);
    }
    // An ensemble member serves only once a quorum formed: start all, then wait for each.
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (std::size_t i = 0; i < servers; ++i)
      wait_started(i, deadline);
  } catch (...) {
    for (std::size_t i = 0; i < servers; ++i)
      kill(i);
    std::filesystem::remove_all(root_);
    throw;
  }
}

zookeeper_server::~zookeeper_server() {
  // The data goes away with the directories: a graceful stop would only cost seconds.
  for (std::size_t i = 0; i < servers_.size(); ++i)
    kill(i);
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

std::string zookeeper_server::connect_string() const {
  std::string result;
  for (const auto& s : servers_) {
    if (!result.empty())
      result += ',';
    result += "127.0.0.1:" + std::to_string(s.client_port);
  }
  return result;
}

void zookeeper_server::write_config(std::size_t index) const {
  const auto& s = servers_[index];
  std::ofstream cfg(s.dir + "/zoo.cfg");
  cfg << "tickTime=500\ninitLimit=10\nsyncLimit=5\n"
      << "dataDir=" << s.dir << "/data\n"
      << "clientPort=" << s.client_port << "\nclientPortAddress=127.0.0.1\n"
      << "maxClientCnxns=0\nadmin.enableServer=false\n"
      << "4lw.commands.whitelist=srvr,ruok,stat,mntr\n";
  if (servers_.size() > 1) {
    for (std::size_t i = 0; i < servers_.size(); ++i)
      cfg << "server." << i + 1 << "=127.0.0.1:" << servers_[i].quorum_port << ':'
          << servers_[i].election_port << '\n';
    std::ofstream(s.dir + "/data/myid") << index + 1 << '\n';
  }
  std::ofstream(s.dir + "/log4j.properties")
    << "log4j.rootLogger=INFO, CONSOLE\n"
    << "log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n"
    << "log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout\n"
    << "log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} [myid:%X{myid}] %-5p "
       "[%t:%C{1}@%L] - %m%n\n";
}

void zookeeper_server::spawn(std::size_t index) {
  auto& s = servers_[index];
  std::vector<std::string> argv = {"java",
                                   "-Xmx256m",
                                   "-XX:+UseSerialGC",
                                   "-XX:TieredStopAtLevel=1",
                                   "-Dlog4j.configuration=file:" + s.dir + "/log4j.properties",
                                   "-cp",
                                   classpath,
                                   "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                                   s.dir + "/zoo.cfg"};
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  auto log = s.dir + "/zookeeper.log";
  pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error("zookeeper_server: fork failed");
  if (pid == 0) {
    // Dies with the test process even if the test crashes before the destructor runs.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int in = open("/dev/null", O_RDONLY);
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    if (in >= 0)
      dup2(in, STDIN_FILENO);
    execvp(args[0], args.data());
    _exit(127);
  }
  s.pid = pid;
  s.paused = false;
}

void zookeeper_server::wait_started(std::size_t index,
                                    std::chrono::steady_clock::time_point deadline) {
  auto& s = servers_[index];
  for (;;) {
    if (!mode(index).empty())
      return;
    int status = 0;
    if (waitpid(s.pid, &status, WNOHANG) == s.pid) {
      s.pid = -1;
      throw std::runtime_error("zookeeper_server: server " + std::to_string(index)
                               + " exited before serving (is java installed?):\n"
                               + log_tail(index));
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("zookeeper_server: server " + std::to_string(index)
                               + " does not serve on 127.0.0.1:" + std::to_string(s.client_port)
                               + ":\n" + log_tail(index));
    // A real server's start-up is the one thing waited for on real time, bounded by `deadline`.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void zookeeper_server::reap(std::size_t index, std::chrono::milliseconds timeout) {
  auto& s = servers_[index];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (waitpid(s.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(s.pid, SIGKILL);
      waitpid(s.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  s.pid = -1;
  s.paused = false;
}

void zookeeper_server::stop(std::size_t index) {
  auto& s = servers_.at(index);
  if (s.pid <= 0)
    return;
  ::kill(s.pid, SIGTERM);
  if (s.paused)
    ::kill(s.pid, SIGCONT);
  reap(index, std::chrono::seconds(10));
}

void zookeeper_server::kill(std::size_t index) {
  auto& s = servers_.at(index);
  if (s.pid <= 0)
    return;
  ::kill(s.pid, SIGKILL);
  reap(index, std::chrono::seconds(10));
}

void zookeeper_server::pause(std::size_t index) {
  auto& s = servers_.at(index);
  if (s.pid > 0 && !s.paused && ::kill(s.pid, SIGSTOP) == 0)
    s.paused = true;
}

void zookeeper_server::resume(std::size_t index) {
  auto& s = servers_.at(index);
  if (s.pid > 0 && s.paused && ::kill(s.pid, SIGCONT) == 0)
    s.paused = false;
}

void zookeeper_server::restart(std::size_t index, std::chrono::milliseconds timeout) {
  if (servers_.at(index).pid > 0)
    stop(index);
  spawn(index);
  try {
    wait_started(index, std::chrono::steady_clock::now() + timeout);
  } catch (...) {
    kill(index);
    throw;
  }
}

std::string zookeeper_server::mode(std::size_t index) const {
  const auto& s = servers_.at(index);
  if (s.pid <= 0 || s.paused)
    return {};
  auto answer = four_letter_word(s.client_port, "srvr");
  auto at = answer.find("Mode: ");
  if (at == std::string::npos)
    return {};
  auto end = answer.find('\n', at);
  return answer.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
}

bool zookeeper_server::wait_serving(std::size_t index, std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (mode(index).empty()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

std::string zookeeper_server::log_tail(std::size_t index, std::size_t lines) const {
  std::ifstream in(servers_.at(index).dir + "/zookeeper.log");
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (tail.size() > lines)
      tail.pop_front();
  }
  std::ostringstream out;
  for (const auto& line : tail)
    out << line << '\n';
  return out.str();
}

} // namespace flint::test
