/// `flint-bench wordcount --input FILE [--parallelism P] [--task-managers N] [--generate MB]`:
/// WordCount on the MiniCluster with a sink that counts every update, against a plain
/// single-threaded count of the same file in the same run (same tokenizer, an open-addressing
/// hash map). Prints one JSON line: words/s of each, their ratio, the CPU seconds each took
/// (cpu_ratio = plain CPU / Flint CPU: the cost per word, whatever the machine's load) and the
/// process's peak RSS, and the machine's core-to-core latency at the time (see core_to_core_ns).
/// Also in the same run, the design's floor (design_floor): the CPU the same per-record work
/// takes in one thread with no runtime, against the plain count (floor_over_plain) and against
/// Flint (flint_over_floor: what the runtime adds).
/// `--generate MB` first writes a Zipf text over a 10k-word vocabulary to FILE.

#include "api/api.hpp"
#include "apps/examples/wordcount/words.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/streaming/key_groups.hpp"
#include "runtime/streaming/local_cluster.hpp"
#include "runtime/streaming/type_serializer.hpp"

#include <spdlog/common.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace flint::bench {

namespace {

using clock_type = std::chrono::steady_clock;

/// A counting sink: the number of updates every subtask received.
class counting_operator final
  : public streaming::one_input_operator<std::tuple<std::string, std::int64_t>> {
public:
  explicit counting_operator(std::shared_ptr<std::atomic<std::int64_t>> total)
    : total_(std::move(total)) {}
  void process_element(const std::tuple<std::string, std::int64_t>&) override { ++count_; }
  void finish() override {
    total_->fetch_add(count_);
    count_ = 0;
  }

private:
  std::shared_ptr<std::atomic<std::int64_t>> total_;
  std::int64_t count_ = 0;
};

class counting_sink_factory final : public api::named_operator_factory {
public:
  explicit counting_sink_factory(std::shared_ptr<std::atomic<std::int64_t>> total)
    : api::named_operator_factory("sink.count"),
      total_(std::move(total)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context&) const override {
    return std::make_unique<counting_operator>(total_);
  }

private:
  std::shared_ptr<std::atomic<std::int64_t>> total_;
};

/// Open addressing with linear probing over (hash, word index); words live in one arena.
class word_counter {
public:
  word_counter() : slots_(1 << 16) {}

  void add(const char* word, std::size_t n) {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t i = 0; i < n; ++i)
      h = (h ^ static_cast<unsigned char>(word[i])) * 1099511628211ULL;
    add(word, n, h, 1);
  }

  /// Adds `by` to the count of `word`, whose hash is `h`; returns the new count.
  std::int64_t add(const char* word, std::size_t n, std::uint64_t h, std::int64_t by) {
    if (h == 0)
      h = 1;
    auto mask = slots_.size() - 1;
    for (auto i = h & mask;; i = (i + 1) & mask) {
      auto& s = slots_[i];
      if (s.hash == 0) {
        s.hash = h;
        s.offset = arena_.size();
        s.length = static_cast<std::uint32_t>(n);
        s.count = by;
        arena_.append(word, n);
        if (++used_ * 2 > slots_.size())
          grow();
        return by;
      }
      if (s.hash == h && s.length == n && std::memcmp(arena_.data() + s.offset, word, n) == 0)
        return s.count += by;
    }
  }
  std::size_t distinct() const { return used_; }

private:
  struct slot {
    std::uint64_t hash = 0;
    std::size_t offset = 0;
    std::uint32_t length = 0;
    std::int64_t count = 0;
  };
  void grow() {
    std::vector<slot> old(slots_.size() * 2);
    old.swap(slots_);
    auto mask = slots_.size() - 1;
    for (auto& s : old)
      if (s.hash != 0)
        for (auto i = s.hash & mask;; i = (i + 1) & mask)
          if (slots_[i].hash == 0) {
            slots_[i] = s;
            break;
          }
  }
  std::vector<slot> slots_;
  std::string arena_;
  std::size_t used_ = 0;
};

/// Calls `f(word)` for each word of the file, with the job's tokenizer; returns the number of
/// words, or -1 when the file cannot be read. The file is read in 1 MiB chunks; the text after a
/// chunk's last non-word character moves to the next chunk, so no word is split.
template <class F>
std::int64_t for_each_word_in_file(const std::string& path, F&& f) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file)
    return -1;
  std::vector<char> buf(1 << 20);
  std::size_t carried = 0;
  std::string word;
  std::int64_t words = 0;
  auto count = [&](const std::string& w) {
    f(w);
    ++words;
  };
  for (;;) {
    if (carried == buf.size())
      buf.resize(2 * buf.size());
    auto got = std::fread(buf.data() + carried, 1, buf.size() - carried, file);
    auto size = carried + got;
    if (got == 0) {
      examples::for_each_word({buf.data(), size}, word, count);
      break;
    }
    auto cut = size;
    while (cut > 0 && examples::word_chars[static_cast<unsigned char>(buf[cut - 1])] != 0)
      --cut;
    examples::for_each_word({buf.data(), cut}, word, count);
    carried = size - cut;
    std::memmove(buf.data(), buf.data() + cut, carried);
  }
  std::fclose(file);
  return words;
}

/// The plain count: the job's tokenizer and an open-addressing table, in one thread.
std::int64_t plain_count(const std::string& path, std::size_t& distinct) {
  word_counter counter;
  auto words =
    for_each_word_in_file(path, [&](const std::string& w) { counter.add(w.data(), w.size()); });
  distinct = counter.distinct();
  return words;
}

/// The design's floor: the work each record of the job needs whatever runtime moves it, done in
/// one thread with no runtime at all. Per word: the tokenizer; Flink's key group (Java hash,
/// murmur) and the channel of `parallelism`; the record as Flint's wire form (record length,
/// string length, bytes, count: 16 bytes + the word) appended to its channel's 32 KiB buffer.
/// Each full buffer is read back at once: each record deserialized in place, its count added in
/// a table hashed by the Java hash (as keyed state is), and the update counted. No threads,
/// actors, virtual calls, copies of words or buffer hand-over: what a runtime adds to this is
/// its own cost. Returns the updates (one per word).
std::int64_t design_floor(const std::string& path, int parallelism, std::int64_t& checksum) {
  constexpr int max_parallelism = 128;
  constexpr std::size_t segment = 32 * 1024;
  word_counter state;
  std::int64_t updates = 0;
  std::vector<std::vector<char>> buffers(static_cast<std::size_t>(parallelism),
                                         std::vector<char>(segment));
  std::vector<std::size_t> filled(buffers.size(), 0);
  auto consume = [&](std::size_t channel) {
    const char* p = buffers[channel].data();
    const char* end = p + filled[channel];
    while (p < end) {
      std::uint32_t record = 0, n = 0;
      std::int64_t by = 0;
      std::memcpy(&record, p, 4);
      std::memcpy(&n, p + 4, 4);
      const char* word = p + 8;
      std::memcpy(&by, word + n, 8);
      auto hash = static_cast<std::uint32_t>(streaming::java_string_hash(word, n));
      checksum += state.add(word, n, hash * 0x9e3779b97f4a7c15ULL, by);
      ++updates;
      p += 4 + record;
    }
    filled[channel] = 0;
  };
  auto words = for_each_word_in_file(path, [&](const std::string& w) {
    auto group = streaming::assign_to_key_group(streaming::java_string_hash(w.data(), w.size()),
                                                max_parallelism);
    auto channel = static_cast<std::size_t>(
      streaming::operator_index_for_key_group(max_parallelism, parallelism, group));
    auto n = static_cast<std::uint32_t>(w.size());
    std::uint32_t record = 4 + n + 8;
    if (filled[channel] + 4 + record > buffers[channel].size()) {
      consume(channel);
      if (4 + record > buffers[channel].size())
        buffers[channel].resize(4 + record);
    }
    char* q = buffers[channel].data() + filled[channel];
    std::int64_t one = 1;
    std::memcpy(q, &record, 4);
    std::memcpy(q + 4, &n, 4);
    std::memcpy(q + 8, w.data(), n);
    std::memcpy(q + 8 + n, &one, 8);
    filled[channel] += 4 + record;
  });
  for (std::size_t c = 0; c < buffers.size(); ++c)
    consume(c);
  return words < 0 ? -1 : updates;
}

/// Writes about `megabytes` MB of Zipf(1) text over 10k words, 12 words a line.
bool generate(const std::string& path, std::size_t megabytes) {
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
  if (!out)
    return false;
  std::string line;
  std::size_t written = 0;
  std::uniform_real_distribution<double> uniform(0, sum);
  while (written < megabytes * 1024 * 1024) {
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

/// CPU seconds (user + system) of every thread of the process so far.
double process_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// One-way latency of a cache line between two threads, in ns (median of 5 rounds of ping-pong).
/// A pipeline of tasks pays it for every buffer line it hands over; on a VM it changes with
/// where the host places the vCPUs (same core complex ≈ 30–60 ns, across ≈ 150–250 ns), so it
/// is printed beside the figures it explains.
double core_to_core_ns() {
  struct alignas(64) line {
    std::atomic<int> turn{0};
  } shared;
  constexpr int rounds = 20000;
  std::vector<double> results;
  for (int r = 0; r < 5; ++r) {
    shared.turn.store(0);
    std::thread peer([&] {
      for (int i = 0; i < rounds; ++i) {
        while (shared.turn.load(std::memory_order_acquire) != 2 * i + 1) {
        }
        shared.turn.store(2 * i + 2, std::memory_order_release);
      }
    });
    auto start = clock_type::now();
    for (int i = 0; i < rounds; ++i) {
      shared.turn.store(2 * i + 1, std::memory_order_release);
      while (shared.turn.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    results.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - start).count()
                      / rounds / 2);
    peer.join();
  }
  std::sort(results.begin(), results.end());
  return results[results.size() / 2];
}

/// CPU time of each thread of the process while the job runs, read from
/// /proc/self/task/*/schedstat every 10 ms (a task thread ends with its job, so the last sample
/// before its end is what counts: up to 10 ms of it may be missed).
class thread_cpu_sampler {
public:
  thread_cpu_sampler() : sampler_([this] { run(); }) {}
  ~thread_cpu_sampler() { stop(); }

  void stop() {
    if (!sampler_.joinable())
      return;
    stopping_ = true;
    sampler_.join();
    sample();
  }

  /// Seconds on CPU per thread, busiest first (the sampler excluded).
  std::vector<double> busiest() const {
    std::vector<double> seconds;
    for (const auto& [tid, ns] : on_cpu_ns_)
      if (tid != sampler_tid_)
        seconds.push_back(static_cast<double>(ns) / 1e9);
    std::sort(seconds.rbegin(), seconds.rend());
    return seconds;
  }

private:
  void run() {
    sampler_tid_ = static_cast<long>(::gettid());
    while (!stopping_) {
      sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  void sample() {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
      std::ifstream in(entry.path() / "schedstat");
      std::int64_t ns = 0;
      if (in >> ns) {
        auto tid = std::atol(entry.path().filename().c_str());
        auto& known = on_cpu_ns_[tid];
        known = std::max(known, ns);
      }
    }
  }

  std::map<long, std::int64_t> on_cpu_ns_;
  std::atomic<bool> stopping_{false};
  long sampler_tid_ = -1;
  std::thread sampler_;
};

double peak_rss_mb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

} // namespace

int wordcount(int argc, char** argv) {
  std::string input;
  int parallelism = 1;
  int task_managers = 1;
  std::size_t generate_mb = 0;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc)
      input = argv[++i];
    else if (a == "--parallelism" && i + 1 < argc)
      parallelism = std::max(1, std::atoi(argv[++i]));
    else if (a == "--task-managers" && i + 1 < argc)
      task_managers = std::max(1, std::atoi(argv[++i]));
    else if (a == "--generate" && i + 1 < argc)
      generate_mb = static_cast<std::size_t>(std::atol(argv[++i]));
    else if (a != "wordcount") {
      std::fprintf(
        stderr,
        "usage: flint-bench wordcount --input FILE [--parallelism P] [--task-managers N] "
        "[--generate MB]\n");
      return 2;
    }
  }
  if (input.empty()) {
    std::fprintf(stderr, "flint-bench wordcount: --input FILE is required\n");
    return 2;
  }
  if (generate_mb > 0 && !generate(input, generate_mb)) {
    std::fprintf(stderr, "flint-bench wordcount: cannot write %s\n", input.c_str());
    return 1;
  }
  std::FILE* probe = std::fopen(input.c_str(), "rb");
  if (!probe) {
    std::fprintf(stderr, "flint-bench wordcount: cannot read %s\n", input.c_str());
    return 1;
  }
  std::fseek(probe, 0, SEEK_END);
  auto bytes = std::ftell(probe);
  std::fclose(probe);
  set_logging_level(spdlog::level::warn);

  // Flint first, so the peak RSS is the job's (the plain count adds only its table).
  auto updates = std::make_shared<std::atomic<std::int64_t>>(0);
  api::stream_execution_environment env({{"parallelism.default", std::to_string(parallelism)}});
  // WordCount as apps/examples/wordcount builds it: the collector form of flatMap, words one by one.
  env.read_text_file(input)
    .flat_map<std::string>(
      [word = std::string()](const std::string& line, api::collector<std::string>& out) mutable {
        examples::for_each_word(line, word, [&](const std::string& w) { out.collect_ref(w); });
      })
    .filter([](const std::string& word) { return !word.empty(); })
    .map([](const std::string& word) { return std::tuple<std::string, std::int64_t>(word, 1); })
    .key_by<0>()
    .sum<1>()
    .transform<std::tuple<std::string, std::int64_t>>(
      "Count", std::make_shared<counting_sink_factory>(updates));
  auto stream = env.get_stream_graph("WordCount benchmark");
  auto job = env.get_job_graph("WordCount benchmark");
  if (!stream || !job) {
    std::fprintf(stderr, "flint-bench wordcount: %s\n",
                 (stream ? job.error() : stream.error()).to_string().c_str());
    return 1;
  }
  double flint_s = 0;
  // CPU time beside wall time: on a shared machine the wall-clock ratio swings with the load, the
  // CPU cost per word does not (words per CPU second, Flint's threads against the plain count).
  double flint_cpu_s = 0;
  // The busiest threads' CPU during the job (task threads, then the rest): the pipeline's
  // critical path were each thread on a core of its own.
  std::vector<double> thread_cpu_s;
  {
    streaming::local_cluster_options options;
    options.task_managers = task_managers;
    options.slots_per_task_manager = (parallelism + task_managers - 1) / task_managers;
    streaming::local_cluster cluster(options);
    thread_cpu_sampler sampler;
    flint_cpu_s = -process_cpu_s();
    auto start = clock_type::now();
    auto result = cluster.execute(std::make_shared<const graph::stream_graph>(std::move(*stream)),
                                  std::make_shared<const graph::job_graph>(std::move(*job)));
    flint_s = std::chrono::duration<double>(clock_type::now() - start).count();
    flint_cpu_s += process_cpu_s();
    sampler.stop();
    thread_cpu_s = sampler.busiest();
    if (!result || result->status != graph::job_status::finished) {
      std::fprintf(stderr, "flint-bench wordcount: the job did not finish: %s\n",
                   result ? result->failure_cause.c_str() : result.error().to_string().c_str());
      return 1;
    }
  }
  double rss = peak_rss_mb();

  std::size_t distinct = 0;
  double plain_cpu_s = -process_cpu_s();
  auto start = clock_type::now();
  auto words = plain_count(input, distinct);
  double plain_s = std::chrono::duration<double>(clock_type::now() - start).count();
  plain_cpu_s += process_cpu_s();

  std::int64_t floor_checksum = 0;
  double floor_cpu_s = -process_cpu_s();
  auto floor_updates = design_floor(input, parallelism, floor_checksum);
  floor_cpu_s += process_cpu_s();

  // Pinned to one CPU (taskset -c N, to measure CPU cost without cross-core traffic) there is no
  // second core to ping: 0.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  bool one_cpu = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) < 2;
  double line_ns = one_cpu ? 0 : core_to_core_ns();
  double flint_rate = static_cast<double>(updates->load()) / flint_s;
  // Threads that used at least 5% of the job's CPU, as a JSON array.
  std::string busy_threads = "[";
  for (double t : thread_cpu_s)
    if (t >= 0.05 * flint_cpu_s) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%s%.3f", busy_threads.size() > 1 ? "," : "", t);
      busy_threads += seconds;
    }
  busy_threads += "]";
  // What the ratio would be with a core per busy thread at the same CPU cost per thread: a bound
  // for a larger machine (the busiest thread's CPU time is a floor on the wall time), not a
  // measurement of one.
  double busiest = thread_cpu_s.empty() ? flint_s : thread_cpu_s.front();
  double plain_rate = static_cast<double>(words) / plain_s;
  bool match = updates->load() == words && floor_updates == words;
  std::printf(
    "{\"bench\":\"wordcount\",\"input\":\"%s\",\"bytes\":%ld,\"parallelism\":%d,\"task_managers\":%d,"
    "\"words\":%lld,\"distinct\":%zu,\"updates\":%lld,\"flint_s\":%.3f,\"plain_s\":%.3f,"
    "\"flint_words_per_s\":%.0f,\"plain_words_per_s\":%.0f,\"ratio\":%.3f,\"flint_cpu_s\":%.3f,"
    "\"plain_cpu_s\":%.3f,\"cpu_ratio\":%.3f,\"peak_rss_mb\":%.1f,\"core_to_core_ns\":%.0f,\"thread_cpu_s\":%s,"
    "\"ratio_bound_core_per_thread\":%.3f,\"floor_cpu_s\":%.3f,\"floor_over_plain\":%.3f,"
    "\"flint_over_floor\":%.3f,\"updates_match\":%s}\n",
    input.c_str(), bytes, parallelism, task_managers, static_cast<long long>(words), distinct,
    static_cast<long long>(updates->load()), flint_s, plain_s, flint_rate, plain_rate,
    flint_rate / plain_rate, flint_cpu_s, plain_cpu_s, plain_cpu_s / flint_cpu_s, rss, line_ns,
    busy_threads.c_str(), plain_s / busiest, floor_cpu_s, floor_cpu_s / plain_cpu_s,
    flint_cpu_s / floor_cpu_s, match ? "true" : "false");
  return match ? 0 : 1;
}

} // namespace flint::bench
