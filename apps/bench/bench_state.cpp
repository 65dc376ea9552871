/// `flint-bench state --input FILE [--parallelism P] [--rounds N] [--cache MB] [--floor-words W]`:
/// the Zipf WordCount (`key_by(word).sum(count)`, every update counted by a sink) on the
/// MiniCluster with its keyed state on the heap (`state.backend.type: hashmap`), in RocksDB
/// without the cache of hot entries (`state.backend.rocksdb.cache.size: 0`), in RocksDB with the
/// cache (MB, default 64: all of this text's state) and in RocksDB with a cache a tenth of the
/// state (state 10x the cache); beside them, in the same run, the bare floor: one thread doing
/// a RocksDB get and put per word (WAL off, default options, the first W words, default 1 M),
/// as an operator without a cache must. The variants alternate N rounds (default 3); the best
/// round of each counts. Prints one JSON line: words/s and process CPU seconds of each, the
/// ratios against hashmap (goal: rocksdb with the cache >= 0.5; by wall time and, steadier on a
/// shared machine, by words per CPU second) and per core against the floor
/// (goal with state 10x the cache: >= 0.8), and each variant's sum of emitted counts, which
/// must be equal (the backends' outputs agree). Make FILE with
/// `flint-bench wordcount --input FILE --generate MB`.
///
/// The job is WordCount's sum operator itself; its factory here sets the cache size in the
/// operator's state backend options, as `state.backend.rocksdb.cache.size` does.

#include "apps/bench/benches.hpp"

#include "api/api.hpp"
#include "apps/examples/wordcount/words.hpp"
#include "runtime/common/private_directory.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

namespace flint::bench {

namespace {

using word_count = std::tuple<std::string, std::int64_t>;

double process_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// Counts the updates every subtask received and sums their counts (equal sums: equal outputs,
/// whatever the order).
struct totals {
  std::atomic<std::int64_t> updates{0};
  std::atomic<std::int64_t> count_sum{0};
};

class totals_operator final : public streaming::one_input_operator<word_count> {
public:
  explicit totals_operator(std::shared_ptr<totals> out) : out_(std::move(out)) {}
  void process_element(const word_count& v) override {
    ++updates_;
    count_sum_ += std::get<1>(v);
  }
  void finish() override {
    out_->updates.fetch_add(updates_);
    out_->count_sum.fetch_add(count_sum_);
    updates_ = count_sum_ = 0;
  }

private:
  std::shared_ptr<totals> out_;
  std::int64_t updates_ = 0;
  std::int64_t count_sum_ = 0;
};

class totals_sink_factory final : public api::named_operator_factory {
public:
  explicit totals_sink_factory(std::shared_ptr<totals> out)
    : api::named_operator_factory("sink.count"),
      out_(std::move(out)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context&) const override {
    return std::make_unique<totals_operator>(out_);
  }

private:
  std::shared_ptr<totals> out_;
};

/// WordCount's sum, with `state.backend.rocksdb.cache.size` set to `cache_bytes` for its backend.
class sum_with_cache_factory final : public api::named_operator_factory {
public:
  sum_with_cache_factory(std::shared_ptr<const api::named_operator_factory> sum,
                         std::optional<std::uint64_t> cache_bytes)
    : api::named_operator_factory("sum"),
      sum_(std::move(sum)),
      cache_bytes_(cache_bytes) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    if (cache_bytes_)
      ctx.state_backend.rocksdb.cache_bytes = *cache_bytes_;
    return sum_->create_operator(ctx);
  }

private:
  std::shared_ptr<const api::named_operator_factory> sum_;
  std::optional<std::uint64_t> cache_bytes_;
};

struct variant {
  variant(const char* name, const char* backend, std::optional<std::uint64_t> cache_bytes)
    : name(name),
      backend(backend),
      cache_bytes(cache_bytes) {}

  const char* name;
  /// state.backend.type.
  const char* backend;
  std::optional<std::uint64_t> cache_bytes;
  double best_s = 1e300;
  double cpu_s_of_best = 0;
  std::int64_t updates = -1;
  std::int64_t count_sum = -1;
  std::vector<double> seconds;
};

/// One run of the job; false (with `error`) if it did not finish.
bool run_job(const std::string& input, int parallelism, variant& v,
             const std::filesystem::path& scratch, std::string& error) {
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  std::filesystem::create_directories(scratch, ec);
  api::configuration config{{"parallelism.default", std::to_string(parallelism)},
                            {"state.backend.type", v.backend}};
  api::stream_execution_environment env(config);
  auto out = std::make_shared<totals>();
  auto keyed =
    env.read_text_file(input)
      .flat_map<std::string>(
        [word = std::string()](const std::string& line, api::collector<std::string>& c) mutable {
          examples::for_each_word(line, word, [&](const std::string& w) { c.collect_ref(w); });
        })
      .filter([](const std::string& word) { return !word.empty(); })
      .map([](const std::string& word) { return word_count(word, 1); })
      .key_by<0>();
  // keyed_stream::sum<1>, with the cache size set.
  auto sum = std::make_shared<api::keyed_reduce_factory<word_count, std::string>>(
    "sum",
    [](const word_count& acc, const word_count& next) {
      word_count r = acc;
      std::get<1>(r) += std::get<1>(next);
      return r;
    },
    keyed.key()->fn,
    [](word_count& acc, const word_count& next) { std::get<1>(acc) += std::get<1>(next); },
    keyed.key()->field);
  keyed
    .transform<word_count>("aggregation",
                           std::make_shared<sum_with_cache_factory>(sum, v.cache_bytes),
                           graph::chaining_strategy::head)
    .transform<word_count>("Count", std::make_shared<totals_sink_factory>(out));
  auto stream = env.get_stream_graph("WordCount state benchmark");
  auto job = env.get_job_graph("WordCount state benchmark");
  if (!stream || !job) {
    error = (stream ? job.error() : stream.error()).to_string();
    return false;
  }
  streaming::local_cluster_options options;
  options.slots_per_task_manager = parallelism;
  streaming::local_cluster cluster(options);
  auto cpu_start = process_cpu_s();
  auto start = std::chrono::steady_clock::now();
  auto result = cluster.execute(std::make_shared<const graph::stream_graph>(std::move(*stream)),
                                std::make_shared<const graph::job_graph>(std::move(*job)),
                                std::chrono::minutes(30));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu = process_cpu_s() - cpu_start;
  if (!result) {
    error = result.error().to_string();
    return false;
  }
  if (result->status != graph::job_status::finished) {
    error = result->failure_cause;
    return false;
  }
  v.seconds.push_back(seconds);
  if (seconds < v.best_s) {
    v.best_s = seconds;
    v.cpu_s_of_best = cpu;
  }
  v.updates = out->updates.load();
  v.count_sum = out->count_sum.load();
  return true;
}

struct floor_figures {
  std::int64_t words = 0;
  double best_s = 1e300;
  double cpu_s_of_best = 0;
};

/// The floor: a RocksDB get and put per word in one thread, the count as 8 bytes.
bool run_floor(const std::vector<std::string>& words, const std::filesystem::path& dir,
               floor_figures& f, std::string& error) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  auto status = rocksdb::DB::Open(options, dir.string(), &raw);
  if (!status.ok()) {
    error = status.ToString();
    return false;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions write;
  write.disableWAL = true;
  rocksdb::ReadOptions read;
  std::string value;
  auto cpu_start = process_cpu_s();
  auto start = std::chrono::steady_clock::now();
  for (const auto& w : words) {
    std::int64_t count = 0;
    if (db->Get(read, w, &value).ok() && value.size() == sizeof count)
      std::memcpy(&count, value.data(), sizeof count);
    ++count;
    db->Put(write, w, rocksdb::Slice(reinterpret_cast<const char*>(&count), sizeof count));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu = process_cpu_s() - cpu_start;
  (void)db->Close();
  db.reset();
  std::filesystem::remove_all(dir, ec);
  f.words = static_cast<std::int64_t>(words.size());
  if (seconds < f.best_s) {
    f.best_s = seconds;
    f.cpu_s_of_best = cpu;
  }
  return true;
}

std::string json_seconds(const std::vector<double>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3f", i ? "," : "", s[i]);
    out += buf;
  }
  return out + "]";
}

} // namespace

bool rocksdb_floor(const std::string& path, std::int64_t max_words,
                   const std::filesystem::path& dir, std::int64_t& words, double& words_per_s,
                   double& words_per_cpu_s, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read " + path;
    return false;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> list;
  std::string scratch;
  examples::for_each_word(text, scratch, [&](const std::string& w) {
    if (static_cast<std::int64_t>(list.size()) < max_words)
      list.push_back(w);
  });
  floor_figures f;
  if (!run_floor(list, dir, f, error))
    return false;
  words = f.words;
  words_per_s = static_cast<double>(f.words) / f.best_s;
  words_per_cpu_s = static_cast<double>(f.words) / f.cpu_s_of_best;
  return true;
}

int state(int argc, char** argv) {
  std::string input;
  int parallelism = 2;
  int rounds = 3;
  std::uint64_t cache_mb = 64;
  std::int64_t floor_words = 1'000'000;
  std::string only;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc)
      input = argv[++i];
    else if (a == "--parallelism" && i + 1 < argc)
      parallelism = std::max(1, std::atoi(argv[++i]));
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--cache" && i + 1 < argc)
      cache_mb = static_cast<std::uint64_t>(std::max(1L, std::atol(argv[++i])));
    else if (a == "--floor-words" && i + 1 < argc)
      floor_words = std::max(1000L, std::atol(argv[++i]));
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a != "state") {
      std::fprintf(stderr,
                   "usage: flint-bench state --input FILE [--parallelism P] [--rounds N] "
                   "[--cache MB] [--floor-words W] [--only NAME,...]\n");
      return 2;
    }
  }
  std::ifstream in(input, std::ios::binary);
  if (input.empty() || !in) {
    std::fprintf(stderr,
                 "flint-bench state: --input FILE is required and readable (make one "
                 "with flint-bench wordcount --input FILE --generate MB)\n");
    return 2;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  std::unordered_set<std::string> distinct;
  std::uint64_t state_bytes = 0;
  std::int64_t total_words = 0;
  {
    std::string scratch;
    examples::for_each_word(text, scratch, [&](const std::string& w) {
      ++total_words;
      if (static_cast<std::int64_t>(words.size()) < floor_words)
        words.push_back(w);
      if (distinct.insert(w).second)
        // As the sum keeps it: the key (length + bytes) and the record (the same + 8).
        state_bytes += 2 * (4 + w.size()) + 8;
    });
  }
  text.clear();
  text.shrink_to_fit();
  // A tenth of the state as the cache counts it (its bookkeeping included).
  std::uint64_t small_cache =
    std::max<std::uint64_t>((state_bytes + distinct.size() * 160) / 10, 16 << 10);

  // Every run's files go under a private directory made here (mkdtemp) and removed on return;
  // a run clears only its own subdirectory.
  auto made = make_private_temp_directory("flint-bench-state-");
  if (!made) {
    std::fprintf(stderr, "flint-bench state: %s\n", made.error().to_string().c_str());
    return 1;
  }
  owned_directory scratch_root(*made);
  const auto scratch = *made / "run";
  std::vector<variant> variants = {
    variant("hashmap", "hashmap", std::nullopt),
    variant("rocksdb_no_cache", "rocksdb", 0),
    variant("rocksdb_cache", "rocksdb", cache_mb << 20),
    variant("rocksdb_cache_tenth", "rocksdb", small_cache),
  };
  floor_figures floor;
  for (int r = 0; r < rounds; ++r) {
    for (auto& v : variants) {
      if (!only.empty() && only.find(v.name) == std::string::npos)
        continue;
      std::string error;
      if (!run_job(input, parallelism, v, scratch, error)) {
        std::fprintf(stderr, "flint-bench state: %s failed: %s\n", v.name, error.c_str());
        return 1;
      }
    }
    std::string error;
    if (!only.empty())
      continue;
    if (!run_floor(words, scratch / "floor", floor, error)) {
      std::fprintf(stderr, "flint-bench state: the bare RocksDB loop failed: %s\n", error.c_str());
      return 1;
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);

  bool outputs_equal = true;
  std::int64_t first_sum = -1;
  for (const auto& v : variants) {
    if (v.seconds.empty())
      continue; // not run (--only)
    if (first_sum < 0)
      first_sum = v.count_sum;
    outputs_equal = outputs_equal && v.updates == total_words && v.count_sum == first_sum;
  }
  auto wps = [&](const variant& v) { return static_cast<double>(total_words) / v.best_s; };
  double floor_wps = static_cast<double>(floor.words) / floor.best_s;
  double floor_cpu_wps = static_cast<double>(floor.words) / floor.cpu_s_of_best;
  auto cpu_wps = [&](const variant& v) {
    return static_cast<double>(total_words) / v.cpu_s_of_best;
  };
  std::string out = "{\"bench\":\"state\",\"parallelism\":" + std::to_string(parallelism)
    + ",\"rounds\":" + std::to_string(rounds) + ",\"words\":" + std::to_string(total_words)
    + ",\"distinct_keys\":" + std::to_string(distinct.size())
    + ",\"state_bytes\":" + std::to_string(state_bytes);
  char buf[512];
  for (const auto& v : variants) {
    if (v.seconds.empty())
      continue; // not run (--only)
    std::snprintf(buf, sizeof buf,
                  ",\"%s\":{\"cache_bytes\":%lld,\"words_per_s\":%.0f,\"cpu_s\":%.3f,"
                  "\"words_per_cpu_s\":%.0f,\"updates\":%lld,\"count_sum\":%lld,\"seconds\":",
                  v.name, static_cast<long long>(v.cache_bytes.value_or(0)), wps(v),
                  v.cpu_s_of_best, cpu_wps(v), static_cast<long long>(v.updates),
                  static_cast<long long>(v.count_sum));
    out += buf;
    out += json_seconds(v.seconds) + "}";
  }
  const auto& heap = variants[0];
  const auto& no_cache = variants[1];
  const auto& cached = variants[2];
  const auto& tenth = variants[3];
  // A figure of a variant not run (--only) is null.
  bool floor_ran = floor.words > 0;
  auto ratio = [](bool both_ran, double a, double b) {
    if (!both_ran)
      return std::string("null");
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", a / b);
    return std::string(text);
  };
  auto ran = [](const variant& v) { return !v.seconds.empty(); };
  if (floor_ran) {
    std::snprintf(buf, sizeof buf,
                  ",\"floor_rocksdb_get_put\":{\"words\":%lld,\"words_per_s\":%.0f,"
                  "\"words_per_cpu_s\":%.0f}",
                  static_cast<long long>(floor.words), floor_wps, floor_cpu_wps);
    out += buf;
  }
  out += ",\"cache_over_hashmap\":" + ratio(ran(cached) && ran(heap), wps(cached), wps(heap));
  out += ",\"cache_over_hashmap_cpu\":"
    + ratio(ran(cached) && ran(heap), cpu_wps(cached), cpu_wps(heap));
  out +=
    ",\"no_cache_over_hashmap\":" + ratio(ran(no_cache) && ran(heap), wps(no_cache), wps(heap));
  out +=
    ",\"cache_over_no_cache\":" + ratio(ran(cached) && ran(no_cache), wps(cached), wps(no_cache));
  out += ",\"tenth_per_core_over_floor\":"
    + ratio(ran(tenth) && floor_ran, wps(tenth) / parallelism, floor_wps);
  out += ",\"tenth_per_cpu_s_over_floor\":"
    + ratio(ran(tenth) && floor_ran, cpu_wps(tenth), floor_cpu_wps);
  out += std::string(",\"outputs_equal\":") + (outputs_equal ? "true" : "false") + "}";
  std::printf("%s\n", out.c_str());
  return outputs_equal ? 0 : 1;
}

} // namespace flint::bench
