#include "apps/cli/trace_command.hpp"

#include <atomic>
#include <csignal>
#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include "apps/cli/cli_output.hpp"
#include "apps/cli/cluster_client.hpp"
#include "apps/cli/exit_codes.hpp"
#include "apps/trace_tools/chrome_export.hpp"
#include "apps/trace_tools/mermaid_export.hpp"

namespace flint::cli {

namespace {

using clock_type = std::chrono::steady_clock;

std::atomic<bool> interrupted{false};

extern "C" void on_signal(int) {
  interrupted.store(true);
}

/// Ctrl-C and SIGTERM end a tail cleanly (an export is still written) instead of killing it.
class signal_scope {
public:
  signal_scope() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~signal_scope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

/// Sleeps `d`, waking early when interrupted.
void pause_for(std::chrono::nanoseconds d) {
  auto until = clock_type::now() + d;
  while (!interrupted.load() && clock_type::now() < until)
    std::this_thread::sleep_for(
      std::min<std::chrono::nanoseconds>(std::chrono::milliseconds(20), until - clock_type::now()));
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

} // namespace

std::string format_record(const trace::record& r) {
  std::time_t secs = static_cast<std::time_t>(r.time_us / 1'000'000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char when[32];
  std::strftime(when, sizeof(when), "%H:%M:%S", &tm);
  char micros[16];
  std::snprintf(micros, sizeof(micros), ".%06lld", static_cast<long long>(r.time_us % 1'000'000));
  char dir[12];
  std::snprintf(dir, sizeof(dir), "%-8s", trace::to_string(r.dir));
  std::string line = std::string(when) + micros + " #" + std::to_string(r.sequence) + " " + dir
    + " " + r.from + " -> " + r.to + " " + r.method + " (" + (r.is_ask ? "ask" : "tell") + ", "
    + std::to_string(r.bytes) + " B) " + trace::to_string(r.result);
  if (r.latency_us >= 0)
    line += " " + std::to_string(r.latency_us) + " us";
  if (!r.token.is_nil())
    line += " token=" + r.token.to_string();
  if (!r.detail.empty())
    line += ": " + r.detail;
  return line;
}

int trace_node(const cli_settings& settings, const trace_options& opts) {
  bool exporting = !opts.export_format.empty();
  bool follow = opts.follow.value_or(!exporting);
  if (exporting) {
    // Fail on an unwritable path now, not after a long tail.
    std::ofstream probe(opts.export_file, std::ios::app);
    if (!probe)
      return fail("Cannot write the trace export to " + opts.export_file);
  }

  cluster_client client(settings);
  auto server = client.connect(trace::trace_endpoint_name, "Flint node's trace server");
  if (!server)
    return fail(server.error().message);

  signal_scope signals;
  interrupted.store(false);
  // No --duration: follow until interrupted.
  auto deadline =
    opts.duration ? clock_type::now() + *opts.duration : clock_type::time_point::max();
  std::vector<trace::record> kept;
  std::uint64_t next = 0;
  std::uint64_t missed = 0;
  std::optional<std::uint64_t> target; // without --follow: what the node had when we started
  std::optional<error> lost;
  for (;;) {
    auto batch = client.fetch_trace(*server, {next, trace::max_fetch_records});
    if (!batch) {
      lost = batch.error();
      break;
    }
    if (!target)
      target = batch->recorded;
    if (batch->missed > 0) {
      missed += batch->missed;
      std::cerr << "flint: " << batch->missed
                << " trace records were overwritten on the node before they were read" << std::endl;
    }
    for (auto& r : batch->records) {
      if (!opts.filter.matches(r) || (r.monitoring && !opts.monitoring))
        continue;
      if (exporting)
        kept.push_back(std::move(r));
      else
        std::cout << (opts.json ? trace::to_json(r) : format_record(r)) << '\n';
    }
    if (!exporting)
      std::cout << std::flush;
    next = batch->next_sequence;
    bool caught_up = batch->records.empty() || next >= batch->recorded;
    if (!follow && (caught_up || next >= *target))
      break;
    if (interrupted.load() || clock_type::now() >= deadline)
      break;
    if (caught_up)
      pause_for(opts.duration ? std::min(opts.poll_interval,
                                         std::chrono::nanoseconds(deadline - clock_type::now()))
                              : opts.poll_interval);
  }

  int code = exit_ok;
  if (lost)
    code = fail("Lost the trace of the node at " + where(settings) + ": " + lost->message);
  if (exporting) {
    auto text =
      opts.export_format == "chrome" ? trace::export_chrome(kept) : trace::export_mermaid(kept);
    if (!write_file(opts.export_file, text))
      return fail("Cannot write the trace export to " + opts.export_file);
    std::cout << "Wrote " << kept.size() << " trace records of " << where(settings) << " to "
              << opts.export_file << " (" << opts.export_format << ")"
              << (missed > 0 ? ", " + std::to_string(missed) + " records were lost" : std::string())
              << std::endl;
  }
  return code;
}

} // namespace flint::cli
