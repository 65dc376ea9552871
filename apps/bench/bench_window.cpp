/// `flint-bench window [--records N] [--keys K] [--rounds R] [--windflow PATH]`: a keyed tumbling
/// event-time window count (10 s windows) over one generated input — record i has key
/// mix(i) % K and event time i × 10 µs (i / 100 ms) — on Flint at p=1 and p=2 (source →
/// assign_timestamps_and_watermarks(for_monotonous_timestamps) → key_by → tumbling event-time
/// windows → aggregate(count) → a counting sink), each with the default
/// `pipeline.window.agg-phase-strategy` (AUTO: a LocalWindowAggregate pre-aggregates each slice
/// before the exchange; variants flint_p1, flint_p2) and with ONE_PHASE (flint_p1_one_phase,
/// flint_p2_one_phase), and on a hand-written single-thread loop (the
/// limit: an open-addressing table of the open window, flushed when event time passes its end),
/// in alternated rounds. With `--windflow PATH` the same windows on WindFlow's Keyed_Windows too,
/// built outside the project (docs/windows_performance.md): PATH is run with `--records N --keys K
/// --replicas 1|2` and prints one JSON line with "records_per_s". Each run's window count and the
/// total of counts are checked against the loop's. Prints a JSON line per run and a summary.
///
/// `flint-bench time_cost --input FILE [--generate MB] [--parallelism P] [--rounds R]`: the cost
/// of time itself — WordCount (as `flint-bench wordcount` builds it) with timestamps and
/// watermarks (assign_timestamps_and_watermarks on the lines, monotonous timestamps, watermarks
/// every 200 ms) against without, alternated rounds; ratio with / without.

#include "api/api.hpp"
#include "apps/bench/benches.hpp"
#include "apps/examples/wordcount/words.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <spdlog/common.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace flint::bench {

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct window_event {
  std::int64_t key = 0;
  /// Event time, ms.
  std::int64_t at = 0;
};
FLINT_RECORD(window_event, key, at);

constexpr std::int64_t window_ms = 10'000;

/// splitmix64's finalizer: spreads consecutive record numbers over the keys.
constexpr std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// Record i of the input: event time advances 10 µs a record.
inline window_event event_at(std::int64_t i, std::int64_t keys) {
  return {static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(i))
                                    % static_cast<std::uint64_t>(keys)),
          i / 100};
}

double process_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    + static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double children_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    + static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The generated input as a parallel source: subtask s of p emits records s, s + p, s + 2p, …,
/// so every subtask's event time advances at the same pace.
class event_source final : public streaming::source_operator {
public:
  event_source(std::int64_t records, std::int64_t keys, const streaming::operator_context& ctx,
               std::unique_ptr<streaming::output<window_event>> out)
    : records_(records),
      keys_(keys),
      next_(ctx.subtask_index),
      stride_(ctx.parallelism),
      yield_(ctx.yield_signal_of()),
      out_(std::move(out)) {
    records_out_ = 0;
  }

  streaming::source_status emit_next(std::size_t max_records) override {
    std::size_t n = 0;
    while (next_ < records_ && n < max_records) {
      event_ = event_at(next_, keys_);
      out_->collect_ref(event_);
      next_ += stride_;
      ++n;
      if (yield_())
        break;
    }
    records_out_ += static_cast<std::int64_t>(n);
    return next_ < records_ ? streaming::source_status::more_available
                            : streaming::source_status::end_of_input;
  }

private:
  std::int64_t records_;
  std::int64_t keys_;
  std::int64_t next_;
  std::int64_t stride_;
  window_event event_;
  streaming::yield_signal yield_;
  streaming::output_ref<window_event> out_;
};

class event_source_factory final : public api::named_operator_factory {
public:
  event_source_factory(std::int64_t records, std::int64_t keys)
    : api::named_operator_factory("source.window_events"),
      records_(records),
      keys_(keys) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<event_source>(records_, keys_, ctx,
                                          streaming::make_output<window_event>(ctx));
  }

private:
  std::int64_t records_;
  std::int64_t keys_;
};

api::data_stream<window_event> events(api::stream_execution_environment& env,
                                      std::int64_t records, std::int64_t keys) {
  auto t = env.new_transformation(graph::transformation_kind::source, "Window Events",
                                  env.parallelism());
  t->set_parallel(true);
  t->set_chaining_strategy(graph::chaining_strategy::head);
  t->set_factory(std::make_shared<event_source_factory>(records, keys));
  env.add_operator(t);
  return api::data_stream<window_event>(&env, std::move(t));
}

/// Flink's count as an AggregateFunction.
struct count_events {
  std::int64_t create_accumulator() const { return 0; }
  std::int64_t add(const window_event&, std::int64_t acc) const { return acc + 1; }
  std::int64_t get_result(const std::int64_t& acc) const { return acc; }
  std::int64_t merge(std::int64_t a, std::int64_t b) const { return a + b; }
};

/// What every subtask of a counting sink saw: records and the sum of their `value`s.
struct tally {
  std::atomic<std::int64_t> records{0};
  std::atomic<std::int64_t> sum{0};
};

template <class T, class Value>
class counting_operator final : public streaming::one_input_operator<T> {
public:
  counting_operator(std::shared_ptr<tally> into, Value value)
    : into_(std::move(into)),
      value_(std::move(value)) {}
  void process_element(const T& record) override {
    ++records_;
    sum_ += value_(record);
  }
  void finish() override {
    into_->records += records_;
    into_->sum += sum_;
    records_ = sum_ = 0;
  }

private:
  std::shared_ptr<tally> into_;
  Value value_;
  std::int64_t records_ = 0;
  std::int64_t sum_ = 0;
};

template <class T, class Value>
class counting_sink_factory final : public api::named_operator_factory {
public:
  counting_sink_factory(std::shared_ptr<tally> into, Value value)
    : api::named_operator_factory("sink.count"),
      into_(std::move(into)),
      value_(std::move(value)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context&) const override {
    return std::make_unique<counting_operator<T, Value>>(into_, value_);
  }

private:
  std::shared_ptr<tally> into_;
  Value value_;
};

template <class T, class Value>
auto counting_sink(std::shared_ptr<tally> into, Value value) {
  return std::make_shared<counting_sink_factory<T, Value>>(std::move(into), std::move(value));
}

struct run_figures {
  bool ok = false;
  std::string error;
  double seconds = 0;
  double cpu_s = 0;
  std::int64_t outputs = 0;
  std::int64_t sum = 0;
};

/// Runs the environment's job on a fresh MiniCluster with `parallelism` slots.
run_figures execute(api::stream_execution_environment& env, int parallelism,
                    const std::shared_ptr<tally>& into, const char* name) {
  run_figures r;
  auto stream = env.get_stream_graph(name);
  auto job = env.get_job_graph(name);
  if (!stream || !job) {
    r.error = (stream ? job.error() : stream.error()).to_string();
    return r;
  }
  streaming::local_cluster_options options;
  options.task_managers = 1;
  options.slots_per_task_manager = parallelism;
  streaming::local_cluster cluster(options);
  r.cpu_s = -process_cpu_s();
  auto start = clock_type::now();
  auto result = cluster.execute(std::make_shared<const graph::stream_graph>(std::move(*stream)),
                                std::make_shared<const graph::job_graph>(std::move(*job)),
                                std::chrono::minutes(10));
  r.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  r.cpu_s += process_cpu_s();
  if (!result || result->status != graph::job_status::finished) {
    r.error = result ? result->failure_cause : result.error().to_string();
    return r;
  }
  r.ok = true;
  r.outputs = into->records.load();
  r.sum = into->sum.load();
  return r;
}

/// `strategy`: `pipeline.window.agg-phase-strategy` (AUTO: a LocalWindowAggregate before the
/// exchange; ONE_PHASE: every record crosses it).
run_figures flint_window(std::int64_t records, std::int64_t keys, int parallelism,
                         const char* strategy = "AUTO") {
  auto into = std::make_shared<tally>();
  api::stream_execution_environment env({{"parallelism.default", std::to_string(parallelism)},
                                         {"pipeline.window.agg-phase-strategy", strategy}});
  events(env, records, keys)
    .assign_timestamps_and_watermarks(
      api::watermark_strategy<window_event>::for_monotonous_timestamps().with_timestamp_assigner(
        [](const window_event& e) { return e.at; }))
    .key_by([](const window_event& e) { return e.key; })
    .window(api::tumbling_event_time_windows::of(std::chrono::milliseconds(window_ms)))
    .aggregate(count_events{})
    .transform<std::int64_t>(
      "Count", counting_sink<std::int64_t>(into, [](std::int64_t count) { return count; }));
  return execute(env, parallelism, into, "Window benchmark");
}

/// The limit: one thread, the same generated records, an open-addressing table (linear probing)
/// of the open window's counts per key, flushed (each key's count emitted) when event time
/// passes the window's end. The input is monotonous, so one window is open at a time.
run_figures window_loop(std::int64_t records, std::int64_t keys) {
  struct slot {
    std::int64_t key = -1;
    std::int64_t count = 0;
  };
  std::size_t capacity = 16;
  while (capacity < 2 * static_cast<std::size_t>(keys))
    capacity *= 2;
  const std::size_t mask = capacity - 1;
  std::vector<slot> table(capacity);
  run_figures r;
  std::int64_t checksum = 0;
  auto flush = [&] {
    for (auto& s : table)
      if (s.key >= 0) {
        ++r.outputs;
        r.sum += s.count;
        checksum += s.key ^ s.count;
        s.key = -1;
      }
  };
  r.cpu_s = -process_cpu_s();
  auto start = clock_type::now();
  std::int64_t window_end = std::numeric_limits<std::int64_t>::min();
  for (std::int64_t i = 0; i < records; ++i) {
    auto e = event_at(i, keys);
    if (e.at >= window_end) {
      flush();
      window_end = e.at - e.at % window_ms + window_ms;
    }
    for (auto h = (static_cast<std::uint64_t>(e.key) * 0x9e3779b97f4a7c15ULL) >> 40;;
         h = (h + 1) & mask) {
      auto& s = table[h & mask];
      if (s.key == e.key) {
        ++s.count;
        break;
      }
      if (s.key < 0) {
        s.key = e.key;
        s.count = 1;
        break;
      }
    }
  }
  flush();
  r.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  r.cpu_s += process_cpu_s();
  // Keeps the flushes' work observable.
  if (checksum == 42)
    std::fprintf(stderr, "\n");
  r.ok = true;
  return r;
}

/// Runs the WindFlow program at `path` (built outside the project); its JSON line's figures.
run_figures windflow(const std::string& path, std::int64_t records, std::int64_t keys,
                     int replicas) {
  run_figures r;
  auto command = path + " --records " + std::to_string(records) + " --keys " + std::to_string(keys)
    + " --replicas " + std::to_string(replicas);
  r.cpu_s = -children_cpu_s();
  auto start = clock_type::now();
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    r.error = "cannot run " + path;
    return r;
  }
  std::string line;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe))
    line += buf;
  int status = ::pclose(pipe);
  r.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  r.cpu_s += children_cpu_s();
  auto field = [&](const char* name) -> double {
    auto at = line.find(std::string("\"") + name + "\":");
    if (at == std::string::npos)
      return -1;
    return std::atof(line.c_str() + at + std::strlen(name) + 3);
  };
  if (status != 0 || field("records_per_s") <= 0) {
    r.error = "WindFlow run failed (status " + std::to_string(status) + "): " + line;
    return r;
  }
  // The program times its own run (the pipe's start-up excluded).
  r.seconds = static_cast<double>(records) / field("records_per_s");
  r.outputs = static_cast<std::int64_t>(field("windows"));
  r.sum = static_cast<std::int64_t>(field("total"));
  r.ok = true;
  return r;
}

} // namespace

int window(int argc, char** argv) {
  std::int64_t records = 20'000'000;
  std::int64_t keys = 10'000;
  int rounds = 3;
  std::string windflow_path;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--records" && i + 1 < argc)
      records = std::max<std::int64_t>(1, std::atoll(argv[++i]));
    else if (a == "--keys" && i + 1 < argc)
      keys = std::max<std::int64_t>(1, std::atoll(argv[++i]));
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--windflow" && i + 1 < argc)
      windflow_path = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      only.push_back(argv[++i]);
    else {
      std::fprintf(stderr, "usage: flint-bench window [--records N] [--keys K] [--rounds R] "
                           "[--windflow PATH] [--only loop|flint_p1|flint_p2|flint_p1_one_phase|"
                           "flint_p2_one_phase|windflow_r1|windflow_r2]...\n");
      return 2;
    }
  }
  set_logging_level(spdlog::level::warn);

  // flint_pN: the default (AUTO: two phases); flint_pN_one_phase: ONE_PHASE.
  std::vector<std::string> variants = {"loop", "flint_p1", "flint_p2", "flint_p1_one_phase",
                                       "flint_p2_one_phase"};
  if (!windflow_path.empty()) {
    variants.push_back("windflow_r1");
    variants.push_back("windflow_r2");
  }
  if (!only.empty())
    std::erase_if(variants, [&](const std::string& v) {
      return std::find(only.begin(), only.end(), v) == only.end();
    });
  // A discarded warm-up run: the process's first job pays for allocator growth and page faults.
  if (std::find(variants.begin(), variants.end(), "flint_p1") != variants.end())
    (void)flint_window(std::min<std::int64_t>(records, 2'000'000), keys, 1);
  std::map<std::string, std::vector<double>> rates, cpu_rates;
  std::int64_t expected_windows = -1, expected_total = records;
  bool all_ok = true;
  for (int round = 0; round < rounds; ++round) {
    // Alternated order: forwards in even rounds, backwards in odd ones.
    auto order = variants;
    if (round % 2 == 1)
      std::reverse(order.begin(), order.end());
    for (const auto& v : order) {
      run_figures r;
      if (v == "loop")
        r = window_loop(records, keys);
      else if (v == "flint_p1")
        r = flint_window(records, keys, 1);
      else if (v == "flint_p2")
        r = flint_window(records, keys, 2);
      else if (v == "flint_p1_one_phase")
        r = flint_window(records, keys, 1, "ONE_PHASE");
      else if (v == "flint_p2_one_phase")
        r = flint_window(records, keys, 2, "ONE_PHASE");
      else if (v == "windflow_r1")
        r = windflow(windflow_path, records, keys, 1);
      else
        r = windflow(windflow_path, records, keys, 2);
      if (v == "loop" && r.ok)
        expected_windows = r.outputs;
      bool match = r.ok && r.sum == expected_total
        && (expected_windows < 0 || r.outputs == expected_windows);
      all_ok = all_ok && match;
      double rate = r.ok ? static_cast<double>(records) / r.seconds : 0;
      double cpu_rate = r.ok && r.cpu_s > 0 ? static_cast<double>(records) / r.cpu_s : 0;
      if (r.ok) {
        rates[v].push_back(rate);
        cpu_rates[v].push_back(cpu_rate);
      }
      std::printf("{\"bench\":\"window\",\"round\":%d,\"variant\":\"%s\",\"records\":%lld,"
                  "\"keys\":%lld,\"seconds\":%.3f,\"cpu_s\":%.3f,\"records_per_s\":%.0f,"
                  "\"records_per_cpu_s\":%.0f,\"windows\":%lld,\"total\":%lld,\"match\":%s%s%s%s}\n",
                  round, v.c_str(), static_cast<long long>(records),
                  static_cast<long long>(keys), r.seconds, r.cpu_s, rate, cpu_rate,
                  static_cast<long long>(r.outputs), static_cast<long long>(r.sum),
                  match ? "true" : "false", r.error.empty() ? "" : ",\"error\":\"",
                  r.error.empty() ? "" : r.error.substr(0, 300).c_str(),
                  r.error.empty() ? "" : "\"");
      std::fflush(stdout);
    }
  }
  auto med = [&](const std::string& v) { return median(rates[v]); };
  auto med_cpu = [&](const std::string& v) { return median(cpu_rates[v]); };
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  std::string windflow_part;
  if (!rates["windflow_r2"].empty() || !rates["windflow_r1"].empty()) {
    char part[512];
    double best_wf = std::max(med("windflow_r1"), med("windflow_r2"));
    std::snprintf(part, sizeof part,
                  ",\"windflow_r1_per_s\":%.0f,\"windflow_r2_per_s\":%.0f,"
                  "\"windflow_r1_per_cpu_s\":%.0f,\"windflow_r2_per_cpu_s\":%.0f,"
                  "\"flint_p2_over_windflow_best\":%.3f,\"flint_p2_over_windflow_r2\":%.3f,"
                  "\"flint_p2_one_phase_over_windflow_r2\":%.3f",
                  med("windflow_r1"), med("windflow_r2"), med_cpu("windflow_r1"),
                  med_cpu("windflow_r2"), ratio(med("flint_p2"), best_wf),
                  ratio(med("flint_p2"), med("windflow_r2")),
                  ratio(med("flint_p2_one_phase"), med("windflow_r2")));
    windflow_part = part;
  } else {
    windflow_part = ",\"windflow\":\"not run (no --windflow PATH); issue 27 measured WindFlow "
                    "4.2.2 at 3.6-10.3 M records/s on this shape\"";
  }
  std::printf("{\"bench\":\"window\",\"summary\":true,\"rounds\":%d,\"records\":%lld,"
              "\"keys\":%lld,\"window_ms\":%lld,\"windows\":%lld,\"loop_per_s\":%.0f,"
              "\"flint_p1_per_s\":%.0f,\"flint_p2_per_s\":%.0f,\"flint_p1_over_loop\":%.4f,"
              "\"flint_p2_over_loop\":%.4f,\"loop_per_cpu_s\":%.0f,\"flint_p1_per_cpu_s\":%.0f,"
              "\"flint_p2_per_cpu_s\":%.0f,\"flint_p1_cpu_over_loop\":%.4f,"
              "\"flint_p1_one_phase_records_per_s\":%.0f,\"flint_p2_one_phase_records_per_s\":%.0f,"
              "\"flint_p1_one_phase_per_cpu_s\":%.0f,\"flint_p2_one_phase_per_cpu_s\":%.0f,"
              "\"flint_p2_over_one_phase\":%.3f,\"flint_p2_cpu_over_one_phase\":%.3f%s,"
              "\"all_match\":%s}\n",
              rounds, static_cast<long long>(records), static_cast<long long>(keys),
              static_cast<long long>(window_ms), static_cast<long long>(expected_windows),
              med("loop"), med("flint_p1"), med("flint_p2"), ratio(med("flint_p1"), med("loop")),
              ratio(med("flint_p2"), med("loop")), med_cpu("loop"), med_cpu("flint_p1"),
              med_cpu("flint_p2"), ratio(med_cpu("flint_p1"), med_cpu("loop")),
              med("flint_p1_one_phase"), med("flint_p2_one_phase"), med_cpu("flint_p1_one_phase"),
              med_cpu("flint_p2_one_phase"), ratio(med("flint_p2"), med("flint_p2_one_phase")),
              ratio(med_cpu("flint_p2"), med_cpu("flint_p2_one_phase")), windflow_part.c_str(),
              all_ok ? "true" : "false");
  return all_ok ? 0 : 1;
}

namespace {

/// About `megabytes` MB of Zipf(1) text over a 10k-word vocabulary, 12 words a line (the shape
/// `flint-bench wordcount --generate` writes).
bool generate_text(const std::string& path, std::size_t megabytes) {
  std::mt19937_64 rng(42);
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 10000; ++i) {
    std::string w;
    auto len = 2 + rng() % 8;
    for (std::size_t k = 0; k < len; ++k)
      w += static_cast<char>('a' + rng() % 26);
    vocabulary.push_back(w);
  }
  std::vector<double> cumulative(vocabulary.size());
  double sum = 0;
  for (std::size_t i = 0; i < vocabulary.size(); ++i)
    cumulative[i] = (sum += 1.0 / static_cast<double>(i + 1));
  std::ofstream out(path, std::ios::binary);
  std::uniform_real_distribution<double> uniform(0, sum);
  std::string line;
  std::size_t written = 0;
  while (out && written < megabytes * 1024 * 1024) {
    line.clear();
    for (int k = 0; k < 12; ++k) {
      auto it = std::lower_bound(cumulative.begin(), cumulative.end(), uniform(rng));
      if (k)
        line += ' ';
      line += vocabulary[static_cast<std::size_t>(it - cumulative.begin())];
    }
    line += '\n';
    out << line;
    written += line.size();
  }
  return static_cast<bool>(out);
}

/// WordCount as `flint-bench wordcount` builds it; with `timed`, the lines first get event
/// timestamps (a per-subtask line counter, monotonous) and watermarks every 200 ms, which then
/// travel with every word through the exchange and the keyed sum.
run_figures wordcount(const std::string& input, int parallelism, bool timed) {
  auto into = std::make_shared<tally>();
  api::stream_execution_environment env({{"parallelism.default", std::to_string(parallelism)}});
  env.set_auto_watermark_interval(200);
  auto lines = env.read_text_file(input);
  if (timed)
    lines = lines.assign_timestamps_and_watermarks(
      api::watermark_strategy<std::string>::for_monotonous_timestamps().with_timestamp_assigner(
        [line = std::int64_t{0}](const std::string&, std::int64_t) mutable { return ++line; }));
  using counted = std::tuple<std::string, std::int64_t>;
  lines
    .flat_map<std::string>(
      [word = std::string()](const std::string& line, api::collector<std::string>& out) mutable {
        examples::for_each_word(line, word, [&](const std::string& w) { out.collect_ref(w); });
      })
    .filter([](const std::string& word) { return !word.empty(); })
    .map([](const std::string& word) { return counted(word, 1); })
    .key_by<0>()
    .sum<1>()
    .transform<counted>("Count",
                        counting_sink<counted>(into, [](const counted&) { return std::int64_t{1}; }));
  return execute(env, parallelism, into, timed ? "WordCount with time" : "WordCount");
}

} // namespace

int time_cost(int argc, char** argv) {
  std::string input;
  std::size_t generate_mb = 0;
  int parallelism = 1;
  int rounds = 3;
  // For profiling one variant alone.
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc)
      input = argv[++i];
    else if (a == "--generate" && i + 1 < argc)
      generate_mb = static_cast<std::size_t>(std::atol(argv[++i]));
    else if (a == "--parallelism" && i + 1 < argc)
      parallelism = std::max(1, std::atoi(argv[++i]));
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr, "usage: flint-bench time_cost --input FILE [--generate MB] "
                           "[--parallelism P] [--rounds R] [--only no_time|timed]\n");
      return 2;
    }
  }
  if (input.empty()) {
    std::fprintf(stderr, "flint-bench time_cost: --input FILE is required\n");
    return 2;
  }
  if (generate_mb > 0 && !generate_text(input, generate_mb)) {
    std::fprintf(stderr, "flint-bench time_cost: cannot write %s\n", input.c_str());
    return 1;
  }
  auto words = count_words(input);
  if (words < 0) {
    std::fprintf(stderr, "flint-bench time_cost: cannot read %s\n", input.c_str());
    return 1;
  }
  set_logging_level(spdlog::level::warn);
  // A discarded warm-up run: the process's first job pays for allocator growth and page faults.
  if (only.empty())
    (void)wordcount(input, parallelism, false);
  std::vector<double> plain, timed, plain_cpu, timed_cpu, round_ratios;
  bool all_ok = true;
  for (int round = 0; round < rounds; ++round) {
    // ABBA: without, with in even rounds; with, without in odd ones.
    double rate[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      bool with_time = (k == 1) != (round % 2 == 1);
      if (!only.empty() && (only == "timed") != with_time)
        continue;
      auto r = wordcount(input, parallelism, with_time);
      bool match = r.ok && r.outputs == words;
      all_ok = all_ok && match;
      double per_s = r.ok ? static_cast<double>(words) / r.seconds : 0;
      double per_cpu_s = r.ok ? static_cast<double>(words) / r.cpu_s : 0;
      rate[with_time ? 1 : 0] = per_s;
      (with_time ? timed : plain).push_back(per_s);
      (with_time ? timed_cpu : plain_cpu).push_back(per_cpu_s);
      std::printf("{\"bench\":\"time_cost\",\"round\":%d,\"variant\":\"%s\",\"parallelism\":%d,"
                  "\"words\":%lld,\"updates\":%lld,\"seconds\":%.3f,\"cpu_s\":%.3f,"
                  "\"words_per_s\":%.0f,\"words_per_cpu_s\":%.0f,\"match\":%s%s%s%s}\n",
                  round, with_time ? "timestamps_and_watermarks" : "no_time", parallelism,
                  static_cast<long long>(words), static_cast<long long>(r.outputs), r.seconds,
                  r.cpu_s, per_s, per_cpu_s, match ? "true" : "false",
                  r.error.empty() ? "" : ",\"error\":\"",
                  r.error.empty() ? "" : r.error.substr(0, 300).c_str(),
                  r.error.empty() ? "" : "\"");
      std::fflush(stdout);
    }
    if (rate[0] > 0)
      round_ratios.push_back(rate[1] / rate[0]);
  }
  std::string per_round = "[";
  for (double r : round_ratios) {
    char s[32];
    std::snprintf(s, sizeof s, "%s%.3f", per_round.size() > 1 ? "," : "", r);
    per_round += s;
  }
  per_round += "]";
  double m_plain = median(plain), m_timed = median(timed);
  double c_plain = median(plain_cpu), c_timed = median(timed_cpu);
  std::printf("{\"bench\":\"time_cost\",\"summary\":true,\"input\":\"%s\",\"parallelism\":%d,"
              "\"rounds\":%d,\"words\":%lld,\"no_time_words_per_s\":%.0f,"
              "\"timed_words_per_s\":%.0f,\"ratio\":%.3f,\"round_ratios\":%s,"
              "\"median_round_ratio\":%.3f,\"cpu_ratio\":%.3f,\"goal\":0.95,\"all_match\":%s}\n",
              input.c_str(), parallelism, rounds, static_cast<long long>(words), m_plain, m_timed,
              m_plain > 0 ? m_timed / m_plain : 0, per_round.c_str(), median(round_ratios),
              c_plain > 0 ? c_timed / c_plain : 0, all_ok ? "true" : "false");
  return all_ok ? 0 : 1;
}

} // namespace flint::bench
