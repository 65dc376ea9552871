#include "runtime/metrics/process_metrics.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

namespace flint::metrics {

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

std::optional<process_figures> parse_proc_figures(std::string_view stat, std::string_view statm,
                                                  std::int64_t ticks_per_second,
                                                  std::int64_t page_size) {
  // The command (field 2) may hold spaces and parentheses: the fields start after the last ')'.
  auto close = stat.rfind(')');
  if (close == std::string_view::npos || ticks_per_second <= 0)
    return std::nullopt;
  std::istringstream fields{std::string(stat.substr(close + 1))};
  std::vector<std::string> f;
  for (std::string word; fields >> word;)
    f.push_back(word);
  // After ')': state (field 3) is f[0], so field n is f[n - 3]: utime 14, stime 15, threads 20.
  if (f.size() < 18)
    return std::nullopt;
  process_figures out;
  try {
    auto ticks = std::stoll(f[11]) + std::stoll(f[12]);
    out.cpu_time_ns = ticks * (1'000'000'000 / ticks_per_second);
    out.threads = std::stoll(f[17]);
    std::istringstream pages{std::string(statm)};
    std::int64_t size = 0;
    std::int64_t resident = 0;
    if (!(pages >> size >> resident))
      return std::nullopt;
    out.rss_bytes = resident * page_size;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return out;
}

double cpu_load(std::int64_t cpu_ns_before, std::int64_t cpu_ns_now,
                std::chrono::nanoseconds wall, unsigned cpus) {
  if (wall.count() <= 0 || cpus == 0)
    return 0.0;
  auto load = static_cast<double>(cpu_ns_now - cpu_ns_before)
    / (static_cast<double>(wall.count()) * static_cast<double>(cpus));
  return std::clamp(load, 0.0, 1.0);
}

collector process_collector(std::string scope, variables vars) {
  struct previous {
    std::mutex mtx;
    std::chrono::steady_clock::time_point at{};
    std::int64_t cpu_ns = 0;
    double load = 0;
  };
  auto last = std::make_shared<previous>();
  return [scope = std::move(scope), vars = std::move(vars), last](std::vector<sample>& out) {
    auto figures = parse_proc_figures(read_file("/proc/self/stat"), read_file("/proc/self/statm"),
                                      ::sysconf(_SC_CLK_TCK), ::sysconf(_SC_PAGESIZE));
    if (!figures)
      return;
    auto now = std::chrono::steady_clock::now();
    double load = 0;
    {
      std::lock_guard<std::mutex> lock(last->mtx);
      // Reads closer than a second apart reuse the last load: a tick is 10 ms of CPU time.
      if (last->at == std::chrono::steady_clock::time_point{})
        last->at = now, last->cpu_ns = figures->cpu_time_ns;
      else if (now - last->at >= std::chrono::seconds(1)) {
        last->load = cpu_load(last->cpu_ns, figures->cpu_time_ns, now - last->at,
                              std::max(1u, std::thread::hardware_concurrency()));
        last->at = now;
        last->cpu_ns = figures->cpu_time_ns;
      }
      load = last->load;
    }
    out.push_back({scope, "Status.JVM.CPU.Load", vars, load});
    out.push_back({scope, "Status.JVM.CPU.Time", vars, static_cast<double>(figures->cpu_time_ns)});
    out.push_back({scope, "Status.JVM.Threads.Count", vars, static_cast<double>(figures->threads)});
    out.push_back(
      {scope, "Status.ProcessTree.Memory.RSS", vars, static_cast<double>(figures->rss_bytes)});
  };
}

} // namespace flint::metrics
