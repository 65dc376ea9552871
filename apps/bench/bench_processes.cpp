#include "apps/bench/bench_processes.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace flint::bench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

double wall_ms() {
  return std::chrono::duration<double, std::milli>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

bool parse_long(const char* text, long& out) {
  if (text == nullptr)
    return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0')
    return false;
  out = v;
  return true;
}

stats summarize(std::vector<double> v) {
  if (v.empty())
    return {};
  std::sort(v.begin(), v.end());
  auto n = v.size();
  double m = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {m, v.front(), v.back()};
}

// ---- processes -------------------------------------------------------------------------------

pid_t spawn(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(127);
  int in = open("/dev/null", O_RDONLY);
  int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || o < 0 || e < 0)
    _exit(127);
  dup2(in, 0);
  dup2(o, 1);
  dup2(e, 2);
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (auto& a : copy)
    args.push_back(a.data());
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (std::chrono::steady_clock::now() >= until)
      return std::nullopt;
    std::this_thread::sleep_for(10ms);
  }
}

std::optional<int> run_to_exit(const std::vector<std::string>& argv, const fs::path& out,
                               const fs::path& err, std::chrono::milliseconds timeout) {
  pid_t pid = spawn(argv, out, err);
  auto rc = wait_exit(pid, timeout);
  if (!rc) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return rc;
}

void stop_children(std::vector<pid_t>& pids, std::chrono::milliseconds grace) {
  for (auto pid : pids) {
    kill(pid, SIGCONT); // a stopped node would not see SIGTERM
    kill(pid, SIGTERM);
  }
  for (auto pid : pids)
    if (!wait_exit(pid, grace)) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  pids.clear();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::optional<std::string> await_ready(pid_t pid, const fs::path& out,
                                       std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    auto text = read_file(out);
    if (auto at = text.find("flint-node ready");
        at != std::string::npos && text.find('\n', at) != std::string::npos)
      return text.substr(at, text.find('\n', at) - at);
    siginfo_t info{};
    // WNOWAIT: an exited child stays to be reaped by whoever stops it.
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0
        && info.si_pid == pid)
      return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

std::string ready_field(const std::string& ready, const std::string& key) {
  auto at = ready.find(" " + key + "=");
  if (at == std::string::npos)
    return {};
  auto start = at + key.size() + 2;
  return ready.substr(start, ready.find(' ', start) - start);
}

fs::path binary_dir() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path();
}

std::optional<fs::path> find_deploy_script(const std::string& name) {
  auto in = [&](const fs::path& root) -> std::optional<fs::path> {
    auto p = root / "deploy" / name;
    if (!root.empty() && access(p.c_str(), R_OK) == 0)
      return p;
    return std::nullopt;
  };
  if (const char* src = std::getenv("FLINT_SOURCE"); src != nullptr && *src != '\0')
    return in(src);
  auto bin = binary_dir();
  for (auto d = bin; !d.empty() && d != d.root_path(); d = d.parent_path())
    if (auto p = in(d))
      return p;
  static const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
  std::ifstream cache(bin.parent_path() / "CMakeCache.txt");
  for (std::string line; std::getline(cache, line);)
    if (line.rfind(key, 0) == 0)
      return in(line.substr(key.size()));
  return std::nullopt;
}

std::optional<fs::path> make_temp_dir(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
    std::string(tmp != nullptr ? tmp : "/tmp") + "/flint-bench-" + name + ".XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "flint-bench %s: cannot create a directory %s: %s\n", name.c_str(),
                 pattern.c_str(), std::strerror(errno));
    return std::nullopt;
  }
  return fs::path(pattern);
}

// ---- logs ------------------------------------------------------------------------------------

std::vector<log_line> read_log(const fs::path& p) {
  std::vector<log_line> lines;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    std::tm tm{};
    int ms = 0;
    if (std::sscanf(line.c_str(), "%d-%d-%d %d:%d:%d,%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms)
        != 7)
      continue;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    lines.push_back({static_cast<double>(std::mktime(&tm)) * 1000.0 + ms, std::move(line)});
  }
  return lines;
}

std::optional<double> first_line(const std::vector<log_line>& lines, const std::string& text,
                                 double after_ms) {
  for (const auto& l : lines)
    if (l.ms >= after_ms && l.text.find(text) != std::string::npos)
      return l.ms;
  return std::nullopt;
}

int attempt_number(const std::string& attempt_id) {
  auto u = attempt_id.rfind('_');
  return u == std::string::npos ? -1 : std::atoi(attempt_id.c_str() + u + 1);
}

std::string attempt_before(const std::string& text, std::size_t at) {
  auto open = text.rfind('(', at);
  return open == std::string::npos ? std::string() : text.substr(open + 1, at - open - 1);
}

std::map<std::string, double> running_tasks(const std::vector<fs::path>& tm_logs, double after_ms) {
  static const std::string marker = ") switched from INITIALIZING to RUNNING";
  std::map<std::string, double> running;
  for (const auto& p : tm_logs)
    for (const auto& l : read_log(p))
      if (auto at = l.text.find(marker); at != std::string::npos && l.ms >= after_ms)
        running.emplace(attempt_before(l.text, at), l.ms);
  return running;
}

deployments deployed(const std::vector<log_line>& jm, double after_ms) {
  deployments d;
  for (const auto& l : jm) {
    if (l.ms < after_ms)
      continue;
    auto at = l.text.find(" - Deploying ");
    if (at == std::string::npos)
      continue;
    auto a = l.text.find(" (attempt #", at);
    auto id = l.text.find(" with attempt id ", at);
    if (a == std::string::npos || id == std::string::npos)
      continue;
    int n = std::atoi(l.text.c_str() + a + 11);
    auto start = id + 17;
    auto end = l.text.find(' ', start);
    d.ids[n].insert(
      l.text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    d.last_ms[n] = l.ms;
  }
  return d;
}

} // namespace flint::bench
