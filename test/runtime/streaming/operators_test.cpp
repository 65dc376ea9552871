// The data plane's building blocks without a cluster: key groups, serializers, record text,
// channel selection and the text file split.

#include "runtime/streaming/key_groups.hpp"
#include "runtime/streaming/operators.hpp"
#include "runtime/streaming/record_format.hpp"
#include "runtime/streaming/type_serializer.hpp"

#include <doctest/doctest.h>

#include <atomic>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace flint;
using namespace flint::streaming;

namespace {

template <class T>
struct vector_output : output<T> {
  std::vector<T> values;
  void collect(T value) override { values.push_back(std::move(value)); }
};

struct recording_writer : record_writer {
  std::size_t channels;
  std::vector<std::size_t> picked;
  explicit recording_writer(std::size_t n) : channels(n) {}
  using record_writer::emit;
  void emit(std::span<const char>, std::size_t channel, bool) override { picked.push_back(channel); }
  std::size_t num_channels() const override { return channels; }
};

template <class T>
T round_trip(const T& value) {
  std::vector<char> bytes;
  type_serializer<T>::write(value, bytes);
  byte_reader in(bytes);
  T out = type_serializer<T>::read(in);
  CHECK(in.at_end());
  return out;
}

} // namespace

TEST_CASE("key groups follow Flink's formulas") {
  CHECK(default_max_parallelism(1) == 128);
  CHECK(default_max_parallelism(100) == 256);
  CHECK(default_max_parallelism(200) == 512);
  CHECK(default_max_parallelism(30000) == 32768);
  // murmur_hash is non-negative and the ranges of the subtasks tile the key groups.
  for (int h : {0, 1, -1, 42, 123456789, -2147483647 - 1})
    CHECK(murmur_hash(h) >= 0);
  for (int p : {1, 2, 3, 4, 7}) {
    int next = 0;
    for (int i = 0; i < p; ++i) {
      auto range = key_group_range_for_operator(128, p, i);
      CHECK(range.first == next);
      for (int g = range.first; g <= range.last; ++g)
        CHECK(operator_index_for_key_group(128, p, g) == i);
      next = range.last + 1;
    }
    CHECK(next == 128);
  }
  // Java's String.hashCode.
  CHECK(key_hash(std::string("hello")) == 99162322);
  CHECK(key_hash(std::int64_t{1} << 32) == 1);
  CHECK(key_hash(true) == 1231);
}

TEST_CASE("records of the supported types survive serialization") {
  CHECK(round_trip(std::int64_t{-5}) == -5);
  CHECK(round_trip(2.5) == 2.5);
  CHECK(round_trip(true));
  CHECK(round_trip(std::string("word")) == "word");
  auto t = std::tuple<std::string, std::int64_t, double, bool>("a", 3, 0.5, false);
  CHECK(round_trip(t) == t);
  auto p = std::pair<std::string, int>("b", 7);
  CHECK(round_trip(p) == p);
  std::vector<char> truncated{1, 0};
  byte_reader in(truncated);
  CHECK_THROWS_AS(type_serializer<std::int64_t>::read(in), std::runtime_error);
}

TEST_CASE("records print as Flink prints them") {
  std::string out;
  format_record(out, std::tuple<std::string, std::int64_t>("word", 3));
  CHECK(out == "(word,3)");
  out.clear();
  format_record(out, std::pair<int, double>(1, 2.0));
  CHECK(out == "(1,2.0)");
  out.clear();
  format_record(out, true);
  CHECK(out == "true");
}

TEST_CASE("channel selectors pick Flink's channels") {
  SUBCASE("rebalance is round robin from the subtask's channel") {
    recording_writer w(3);
    network_output target{&w, graph::partitioner_kind::rebalance, nullptr, 128};
    record_writer_output<std::int64_t> out(target, 1);
    for (int i = 0; i < 5; ++i)
      out.collect(i);
    CHECK(w.picked == std::vector<std::size_t>{1, 2, 0, 1, 2});
  }
  SUBCASE("rescale starts at channel 0") {
    recording_writer w(2);
    network_output target{&w, graph::partitioner_kind::rescale, nullptr, 128};
    record_writer_output<std::int64_t> out(target, 1);
    for (int i = 0; i < 3; ++i)
      out.collect(i);
    CHECK(w.picked == std::vector<std::size_t>{0, 1, 0});
  }
  SUBCASE("broadcast sends to every channel, forward to the one") {
    recording_writer w(3);
    record_writer_output<std::int64_t> out(
      network_output{&w, graph::partitioner_kind::broadcast, nullptr, 128}, 0);
    out.collect(1);
    CHECK(w.picked == std::vector<std::size_t>{0, 1, 2});
    recording_writer f(1);
    record_writer_output<std::int64_t> fwd(
      network_output{&f, graph::partitioner_kind::forward, nullptr, 128}, 3);
    fwd.collect(1);
    CHECK(f.picked == std::vector<std::size_t>{0});
  }
}

TEST_CASE("a text file split among subtasks yields every line once") {
  auto path =
    std::filesystem::temp_directory_path() / ("flint_split_" + std::to_string(::getpid()) + ".txt");
  std::vector<std::string> lines;
  {
    std::ofstream f(path, std::ios::binary);
    for (int i = 0; i < 1000; ++i) {
      lines.push_back(std::string(static_cast<std::size_t>(i % 37), 'a' + static_cast<char>(i % 26))
                      + std::to_string(i));
      f << lines.back() << (i % 5 == 0 ? "\r\n" : "\n");
    }
    f << "last line without newline";
    lines.push_back("last line without newline");
  }
  for (int p : {1, 2, 3, 4, 7}) {
    std::vector<std::string> all;
    for (int i = 0; i < p; ++i) {
      operator_context ctx;
      ctx.subtask_index = i;
      ctx.parallelism = p;
      auto out = std::make_unique<vector_output<std::string>>();
      auto* seen = out.get();
      text_file_source source(path.string(), ctx, std::move(out));
      source.open();
      while (source.emit_next(100) != source_status::end_of_input) {
      }
      all.insert(all.end(), seen->values.begin(), seen->values.end());
    }
    CHECK_MESSAGE(all == lines, "parallelism " << p);
  }
  std::filesystem::remove(path);

  operator_context ctx;
  text_file_source missing("/nonexistent/flint/input.txt", ctx,
                           std::make_unique<vector_output<std::string>>());
  CHECK_THROWS_WITH_AS(missing.open(), doctest::Contains("does not exist"), std::runtime_error);
}

TEST_CASE("a sequence is split into one range per subtask") {
  std::vector<std::int64_t> all;
  for (int i = 0; i < 3; ++i) {
    operator_context ctx;
    ctx.subtask_index = i;
    ctx.parallelism = 3;
    auto out = std::make_unique<vector_output<std::int64_t>>();
    auto* seen = out.get();
    sequence_source source(1, 10, ctx, std::move(out));
    while (source.emit_next(4) != source_status::end_of_input) {
    }
    all.insert(all.end(), seen->values.begin(), seen->values.end());
  }
  CHECK(all == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

TEST_CASE(
  "a source stops between two records once the task's interrupt flag is raised from outside") {
  // The TaskExecutor raises the flag before its cancel mail: a step of a source (4096 records at
  // most) ends at the next record instead of running to its end first.
  std::atomic<bool> interrupt{false};
  bool yield = false;
  operator_context ctx;
  ctx.yield = &yield;
  ctx.interrupt = &interrupt;
  struct raising_output : output<std::int64_t> {
    std::atomic<bool>* flag;
    std::vector<std::int64_t> values;
    void collect(std::int64_t value) override {
      values.push_back(value);
      if (values.size() == 10)
        flag->store(true);
    }
  };
  auto out = std::make_unique<raising_output>();
  out->flag = &interrupt;
  auto* seen = out.get();
  sequence_source source(1, 100000, ctx, std::move(out));
  CHECK(source.emit_next(4096) == source_status::more_available);
  CHECK(seen->values.size() == 10);
  // The yield flag alone still stops it too, and neither raised lets it run the whole step.
  interrupt = false;
  yield = true;
  CHECK(source.emit_next(4096) == source_status::more_available);
  CHECK(seen->values.size() == 11);
  yield = false;
  seen->flag = nullptr;
  struct plain : output<std::int64_t> {
    void collect(std::int64_t) override {}
  };
  operator_context quiet;
  quiet.interrupt = &interrupt;
  sequence_source whole(1, 100000, quiet, std::make_unique<plain>());
  CHECK(whole.emit_next(4096) == source_status::more_available);
  CHECK(quiet.must_yield() == false);
  interrupt = true;
  CHECK(quiet.must_yield());
}

TEST_CASE(
  "a chained operator is its upstream's output: records reach it with no forwarding call between") {
  auto sink = std::make_unique<vector_output<std::string>>();
  auto* seen = sink.get();
  filter_operator<std::string> keep_long([](const std::string& s) { return s.size() > 2; },
                                         std::move(sink));
  operator_context ctx;
  ctx.chained_targets.push_back(&keep_long);
  output_ref<std::string> out(make_output<std::string>(ctx));
  CHECK(&*out == static_cast<output<std::string>*>(&keep_long));
  out->collect_ref("ab");
  out->collect_ref("abc");
  out->collect(std::string("abcd"));
  CHECK(seen->values == std::vector<std::string>{"abc", "abcd"});
  // A network output or a fan-out is its own target.
  discarding_output<std::string> drop;
  CHECK(drop.target() == &drop);
}

TEST_CASE(
  "string keys hash to Java's String.hashCode at every length, whatever their buffer held before") {
  auto reference = [](const std::string& s) {
    std::uint32_t h = 0;
    for (unsigned char c : s)
      h = 31 * h + c;
    return static_cast<std::int32_t>(h);
  };
  std::string word;
  // A buffer that once held a longer string keeps its bytes past the end: they must not count.
  word.reserve(64);
  word.assign(40, '\xee');
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string fresh;
    for (std::size_t i = 0; i < n; ++i)
      fresh += static_cast<char>(i % 3 == 0 ? 'A' + i : i % 3 == 1 ? '_' : 0xc3 + i);
    word.assign(fresh);
    CHECK(key_hash(fresh) == reference(fresh));
    CHECK(key_hash(word) == reference(fresh));
  }
  CHECK(key_hash(std::string("Aa")) == 2112);
  CHECK(key_hash(std::string("BB")) == 2112);
  CHECK(key_hash(std::string("polygenelubricants")) == -2147483648);
}

namespace {

/// Counts its copies (moves are free).
struct copy_counted {
  static inline int copies = 0;
  int value = 0;
  explicit copy_counted(int v) : value(v) {}
  copy_counted(const copy_counted& other) : value(other.value) { ++copies; }
  copy_counted(copy_counted&&) noexcept = default;
  copy_counted& operator=(const copy_counted& other) {
    value = other.value;
    ++copies;
    return *this;
  }
  copy_counted& operator=(copy_counted&&) noexcept = default;
};

/// An output that only reads what it is given by reference (as a chained operator does).
struct reading_output final : output<copy_counted> {
  std::vector<int>* seen;
  explicit reading_output(std::vector<int>* s) : seen(s) {}
  void collect(copy_counted value) override { seen->push_back(value.value); }
  void collect_ref(const copy_counted& value) override { seen->push_back(value.value); }
};

} // namespace

TEST_CASE("a broadcasting output hands a record to every output but the last by reference") {
  std::vector<int> seen;
  std::vector<std::unique_ptr<output<copy_counted>>> outputs;
  for (int i = 0; i < 3; ++i)
    outputs.push_back(std::make_unique<reading_output>(&seen));
  broadcasting_output<copy_counted> out(std::move(outputs));
  copy_counted::copies = 0;
  out.collect(copy_counted(7));
  CHECK(seen == std::vector<int>{7, 7, 7});
  CHECK(copy_counted::copies == 0);
  out.collect_ref(copy_counted(8));
  CHECK(copy_counted::copies == 0);
}
