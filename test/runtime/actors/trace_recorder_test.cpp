// The trace recording point: a bounded ring and an optional JSON-lines file.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "runtime/actors/trace/trace_recorder.hpp"

using namespace flint;

namespace {

trace::record make(const std::string& method) {
  trace::record r;
  r.dir = trace::direction::send;
  r.from = "resource_manager";
  r.to = "task_executor/tm-1";
  r.method = method;
  r.token = {1, 2};
  r.is_ask = true;
  r.bytes = 64;
  return r;
}

} // namespace

TEST_CASE("the ring keeps the newest records up to its capacity, oldest first") {
  std::int64_t now = 1000;
  trace::trace_recorder rec([&] { return now++; }, 3);
  for (int i = 0; i < 5; ++i)
    rec.record_event(make("m" + std::to_string(i)));
  auto all = rec.snapshot();
  REQUIRE(all.size() == 3);
  CHECK(all[0].method == "m2");
  CHECK(all[2].method == "m4");
  CHECK(all[0].sequence == 2);
  CHECK(rec.recorded() == 5);
  auto tail = rec.since(4);
  REQUIRE(tail.size() == 1);
  CHECK(tail[0].method == "m4");
  CHECK(all[0].time_us < all[1].time_us);
}

TEST_CASE("records are appended to a JSON-lines file when enabled") {
  char path[] = "/tmp/flint-trace-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  {
    trace::trace_recorder rec([] { return std::int64_t{42}; });
    REQUIRE(rec.enable_file(path));
    auto r = make("request_slot");
    r.result = trace::outcome::rejected;
    r.detail = "Fencing token mismatch: \"quoted\"\n";
    rec.record_event(r);
    rec.record_event(make("offer_slots"));
  }
  std::ifstream in(path);
  std::string first, second, third;
  REQUIRE(std::getline(in, first));
  REQUIRE(std::getline(in, second));
  CHECK_FALSE(std::getline(in, third));
  CHECK(first.find("\"method\":\"request_slot\"") != std::string::npos);
  CHECK(first.find("\"outcome\":\"rejected\"") != std::string::npos);
  CHECK(first.find("\\\"quoted\\\"\\n") != std::string::npos);
  CHECK(first.find("\"time_us\":42") != std::string::npos);
  CHECK(first.front() == '{');
  CHECK(first.back() == '}');
  CHECK(second.find("\"seq\":1") != std::string::npos);
  std::remove(path);
}

TEST_CASE("to_json keeps well-formed UTF-8 and writes each other byte as U+FFFD") {
  const std::string rc = "\xef\xbf\xbd"; // U+FFFD as UTF-8
  auto r = make("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); // 2-, 3- and 4-byte sequences
  r.from = "task_executor/\xfe";
  r.detail =
    "a\x80" // a lone continuation byte
    "b\xc0\xaf" // an overlong '/'
    "c\xed\xa0\x80" // a UTF-16 surrogate
    "d\xf4\x90\x80\x80" // above U+10FFFF
    "e\xff" // never in UTF-8
    "f\xe2\x82"; // cut off at the end
  auto line = trace::to_json(r);
  CHECK(line.find("\"method\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"") != std::string::npos);
  CHECK(line.find("\"from\":\"task_executor/" + rc + "\"") != std::string::npos);
  CHECK(line.find("\"detail\":\"a" + rc + "b" + rc + rc + "c" + rc + rc + rc + "d" + rc + rc + rc
                  + rc + "e" + rc + "f" + rc + rc + "\"}")
        != std::string::npos);
}

TEST_CASE("a file that cannot be opened is reported, and recording goes on in the ring") {
  trace::trace_recorder rec([] { return std::int64_t{1}; });
  CHECK_FALSE(rec.enable_file("/nonexistent-dir/trace.jsonl"));
  rec.record_event(make("x"));
  CHECK(rec.snapshot().size() == 1);
}

TEST_CASE("ids are never zero and do not repeat") {
  trace::trace_recorder rec([] { return std::int64_t{1}; });
  auto a = rec.next_id();
  auto b = rec.next_id();
  CHECK(a != 0);
  CHECK(b != 0);
  CHECK(a != b);
}

TEST_CASE("REST's status queries, and the calls made to serve them, are marked as monitoring") {
  std::int64_t now = 1000;
  trace::trace_recorder rec([&] { return now++; });
  // A receive starts a handler; what the endpoint sends long after is its own (a timer's).
  auto later = [&] { now += 1'000'000; };
  auto call = [&](trace::direction dir, const std::string& from, const std::string& to,
                  const std::string& method, std::uint64_t trace_id) {
    trace::record r;
    r.dir = dir;
    r.from = from;
    r.to = to;
    r.method = method;
    r.trace.trace_id = trace_id;
    rec.record_event(r);
  };
  using enum trace::direction;
  // The dashboard asks the Dispatcher, which asks the JobMaster (a new trace: REST sends none).
  call(receive, "rest", "dispatcher", "request_job_status", 0);
  call(send, "dispatcher", "job_master/j", "request_job_status", 77);
  call(receive, "dispatcher", "job_master/j", "request_job_status", 77);
  call(reply, "job_master/j", "dispatcher", "request_job_status", 77);
  call(response, "dispatcher", "job_master/j", "request_job_status", 77);
  call(reply, "dispatcher", "rest", "request_job_status", 0);
  // The cluster's own work after it: not marked.
  call(receive, "job_master/j", "dispatcher", "job_reached_terminal_state", 0);
  call(send, "dispatcher", "resource_manager", "disconnect_job_manager", 78);
  call(send, "job_master/j", "task_executor/tm-1", "submit_task", 79);
  call(receive, "metrics", "resource_manager", "request_resource_overview", 0);
  // An endpoint that took a monitoring call and has not answered yet (an asynchronous handler):
  // what it sends at once is the call's, what it sends a second later a timer's.
  call(receive, "rest", "dispatcher", "list_jobs", 0);
  call(send, "dispatcher", "job_master/j", "request_job_status", 80);
  later();
  call(send, "dispatcher", "resource_manager", "heartbeat_from_job_manager", 81);
  auto all = rec.snapshot();
  REQUIRE(all.size() == 13);
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(all[i].monitoring);
  }
  CHECK_FALSE(all[6].monitoring);
  CHECK_FALSE(all[7].monitoring);
  CHECK_FALSE(all[8].monitoring);
  CHECK(all[9].monitoring);
  CHECK(all[10].monitoring);
  CHECK(all[11].monitoring);
  CHECK_FALSE(all[12].monitoring);
  CHECK(trace::to_json(all[0]).find("\"monitoring\":true}") != std::string::npos);
  CHECK(trace::to_json(all[6]).find("monitoring") == std::string::npos);
  CHECK(trace::is_monitoring_client("rest"));
  CHECK(trace::is_monitoring_client("rest-handler-2"));
  CHECK_FALSE(trace::is_monitoring_client("resource_manager"));
  CHECK_FALSE(trace::is_monitoring_client("flint-cli"));
}

TEST_CASE("an event recorded over an older one in its ring slot keeps none of the older fields") {
  // Events are copied into the ring slots' own strings (reused lap after lap): a record that
  // overwrites a longer one, or one with a detail, must read back exactly as it was given.
  std::int64_t now = 1000;
  trace::trace_recorder rec([&] { return now++; }, 2);
  std::string long_name(100, 'x');
  trace::event failed;
  failed.dir = trace::direction::response;
  failed.from = long_name;
  failed.to = "task_executor/tm-1/with-a-long-id";
  failed.method = "request_slot_with_a_long_method_name";
  failed.is_ask = true;
  failed.result = trace::outcome::timeout;
  failed.latency_us = 77;
  failed.detail = "ask request_slot timed out after 10 s (rpc.ask.timeout)";
  failed.trace = {5, 6, 7};
  rec.record_event(failed);
  rec.record_event(failed);
  trace::event ok;
  ok.dir = trace::direction::send;
  ok.from = "rm";
  ok.to = "te";
  ok.method = "hb";
  ok.bytes = 8;
  rec.record_event(ok);
  rec.record_event(ok);
  auto all = rec.snapshot();
  REQUIRE(all.size() == 2);
  for (auto& r : all) {
    CHECK(r.from == "rm");
    CHECK(r.to == "te");
    CHECK(r.method == "hb");
    CHECK(r.detail.empty());
    CHECK(r.latency_us == -1);
    CHECK(r.result == trace::outcome::ok);
    CHECK_FALSE(r.is_ask);
    CHECK(r.bytes == 8);
    CHECK(r.trace.trace_id == 0);
  }
  CHECK(all[0].sequence == 2);
  CHECK(all[1].sequence == 3);
  CHECK(all[0].time_us < all[1].time_us);
  // A whole record goes in the same way.
  auto r = make("offer_slots");
  r.detail = "d";
  rec.record_event(r);
  auto last = rec.snapshot().back();
  CHECK(last.method == "offer_slots");
  CHECK(last.from == "resource_manager");
  CHECK(last.detail == "d");
  CHECK(last.sequence == 4);
}

TEST_CASE("interned names are recorded as ids and read back as their text") {
  trace::trace_recorder rec([] { return std::int64_t{7}; }, 4);
  auto from = trace::intern("resource_manager");
  auto to = trace::intern("task_executor/tm-1/a-name-longer-than-the-small-string-buffer");
  auto method = trace::intern("request_slot");
  CHECK(from != 0);
  CHECK(trace::intern("resource_manager") == from); // once per name
  CHECK(trace::name_text(method) == "request_slot");
  CHECK(trace::name_text(0).empty());
  // Interned ids, a caller's text from the wire, and an error text, lap after lap of the ring.
  for (int i = 0; i < 9; ++i) {
    std::string caller = "caller-" + std::to_string(i);
    rec.record_event(trace::event{.dir = trace::direction::receive,
                                  .from = caller,
                                  .is_ask = true,
                                  .result = i % 2 == 0 ? trace::outcome::ok : trace::outcome::failed,
                                  .detail = i % 2 == 0 ? "" : "failed " + std::to_string(i),
                                  .to_name = to,
                                  .method_name = method});
    rec.record_event(trace::event{.dir = trace::direction::send,
                                  .to = "not interned",
                                  .from_name = from,
                                  .method_name = method});
  }
  auto all = rec.snapshot();
  REQUIRE(all.size() == 4);
  CHECK(all[0].dir == trace::direction::receive);
  CHECK(all[0].from == "caller-7");
  CHECK(all[0].to == trace::name_text(to));
  CHECK(all[0].method == "request_slot");
  CHECK(all[0].detail == "failed 7");
  CHECK(all[1].from == "resource_manager");
  CHECK(all[1].to == "not interned");
  CHECK(all[1].detail.empty());
  CHECK(all[2].from == "caller-8");
  CHECK(all[2].detail.empty()); // the slot's old detail is not read back
  // An id the table never gave is not trusted: the text given with it is recorded.
  rec.record_event(trace::event{.from = "by text", .from_name = 0xFFFFFF});
  CHECK(rec.snapshot().back().from == "by text");
}

TEST_CASE("monitoring marks follow interned names as they follow texts") {
  trace::trace_recorder rec([] { return std::int64_t{100}; });
  auto rest = trace::intern("rest");
  auto dispatcher = trace::intern("dispatcher");
  auto job_master = trace::intern("job_master/j");
  rec.record_event(trace::event{.dir = trace::direction::receive,
                                .from = "rest",
                                .trace = {5, 6, 0},
                                .is_ask = true,
                                .to_name = dispatcher});
  // The Dispatcher's send while serving REST's call belongs to it.
  rec.record_event(trace::event{.dir = trace::direction::send,
                                .trace = {9, 10, 0},
                                .is_ask = true,
                                .from_name = dispatcher,
                                .to_name = job_master});
  rec.record_event(trace::event{.dir = trace::direction::send, .from_name = rest, .to_name = job_master});
  auto all = rec.snapshot();
  REQUIRE(all.size() == 3);
  CHECK(all[0].monitoring);
  CHECK(all[1].monitoring);
  CHECK(all[2].monitoring);
}

TEST_CASE("trace and span ids are unique across the threads that draw them") {
  trace::trace_recorder rec(trace::system_now_us);
  constexpr int per_thread = 20000;
  std::vector<std::uint64_t> a, b;
  std::thread t1([&] {
    for (int i = 0; i < per_thread; ++i)
      a.push_back(rec.next_id());
  });
  std::thread t2([&] {
    for (int i = 0; i < per_thread; ++i)
      b.push_back(rec.next_id());
  });
  t1.join();
  t2.join();
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  CHECK(std::adjacent_find(a.begin(), a.end()) == a.end());
  CHECK(std::find(a.begin(), a.end(), 0u) == a.end());
}

TEST_CASE("the recorder's system clock gives the system clock's time, never going back on a thread") {
  // system_now_us reads the time stamp counter between anchors to the system clock; over 60 ms it
  // calibrates, then interpolates: each reading must lie between the system clock read just
  // before and just after it (two microseconds of rounding either side), on two threads at once.
  auto check_thread = [](int& outside, int& backwards, int& readings) {
    using std::chrono::system_clock;
    auto us = [] {
      return std::chrono::duration_cast<std::chrono::microseconds>(
               system_clock::now().time_since_epoch())
        .count();
    };
    auto end = us() + 60'000;
    std::int64_t last = 0;
    for (auto before = us(); before < end; before = us()) {
      auto t = trace::system_now_us();
      auto after = us();
      if (t < before - 2 || t > after + 2)
        ++outside;
      if (t < last)
        ++backwards;
      last = t;
      ++readings;
    }
  };
  int outside[2] = {}, backwards[2] = {}, readings[2] = {};
  std::thread other([&] { check_thread(outside[1], backwards[1], readings[1]); });
  check_thread(outside[0], backwards[0], readings[0]);
  other.join();
  for (int k = 0; k < 2; ++k) {
    CHECK(readings[k] > 1000);
    CHECK(outside[k] == 0);
    CHECK(backwards[k] == 0);
  }
}

namespace {

/// The detail of writer `k`'s `i`-th event: long (on the heap, not in a string's own buffer) and
/// different for every event, so a torn or mixed-up record shows.
std::string detail_of(int k, int i) {
  return "writer " + std::to_string(k) + " event " + std::to_string(i) + " "
    + std::string(64 + (i % 50), static_cast<char>('a' + k));
}

} // namespace

TEST_CASE("events recorded by concurrent threads are all read, each once, whole and in each thread's order") {
  // Three threads record while a fourth tails the recorder as `flint trace --follow` does; the
  // threads' buffers are small, so writers drain each other's buffers too, while the tail reads.
  constexpr int writers = 3;
  constexpr int per_writer = 20000;
  std::atomic<std::int64_t> clock{0}; // one clock for every thread, as the TSC is
  trace::trace_recorder rec([&] { return clock.fetch_add(1) + 1; }, 1 << 17);
  auto method = trace::intern("concurrent_test_method");
  std::vector<trace::record> tailed;
  std::uint64_t missed = 0;
  std::atomic<bool> done{false};
  std::thread tail([&] {
    std::uint64_t next = 0;
    for (;;) {
      bool last = done.load();
      auto batch = rec.read_from(next, 1000);
      CHECK(batch.next_sequence == next + batch.records.size() + batch.missed);
      missed += batch.missed;
      next = batch.next_sequence;
      for (auto& r : batch.records)
        tailed.push_back(std::move(r));
      if (last && batch.records.empty() && batch.missed == 0)
        break;
    }
  });
  std::vector<std::thread> threads;
  for (int k = 0; k < writers; ++k) {
    threads.emplace_back([&, k] {
      std::string from = "writer-" + std::to_string(k); // as text from the wire: not interned
      for (int i = 0; i < per_writer; ++i) {
        auto detail = i % 3 == 0 ? detail_of(k, i) : std::string();
        rec.record_event(trace::event{.dir = trace::direction::receive,
                                      .from = from,
                                      .trace = {static_cast<std::uint64_t>(k + 1),
                                                static_cast<std::uint64_t>(i + 1), 0},
                                      .bytes = static_cast<std::uint32_t>(i),
                                      .result = i % 3 == 0 ? trace::outcome::failed
                                                           : trace::outcome::ok,
                                      .latency_us = i * 7,
                                      .detail = detail,
                                      .method_name = method});
      }
    });
  }
  for (auto& t : threads)
    t.join();
  done = true;
  tail.join();
  CHECK(missed == 0);
  REQUIRE(tailed.size() == writers * per_writer);
  std::vector<int> next_of(writers, 0);
  std::int64_t last_time = 0;
  int out_of_time_order = 0;
  for (std::size_t s = 0; s < tailed.size(); ++s) {
    const auto& r = tailed[s];
    REQUIRE(r.sequence == s);
    auto k = static_cast<int>(r.trace.trace_id) - 1;
    REQUIRE(k >= 0);
    REQUIRE(k < writers);
    auto i = static_cast<int>(r.trace.span_id) - 1;
    CAPTURE(k);
    CAPTURE(i);
    REQUIRE(i == next_of[k]++); // none lost, none twice, in the thread's order
    CHECK(r.from == "writer-" + std::to_string(k));
    CHECK(r.method == "concurrent_test_method");
    CHECK(r.bytes == static_cast<std::uint32_t>(i));
    CHECK(r.latency_us == i * 7);
    CHECK(r.result == (i % 3 == 0 ? trace::outcome::failed : trace::outcome::ok));
    CHECK(r.detail == (i % 3 == 0 ? detail_of(k, i) : std::string()));
    if (r.time_us < last_time)
      ++out_of_time_order;
    last_time = r.time_us;
  }
  // Each drain merges by time; only a drain's first events can be older than the last one's.
  CHECK(out_of_time_order < static_cast<int>(tailed.size()) / 20);
}

namespace {

/// A caller thread records a send, then hands the call to a callee thread that records its
/// receive (a CAF mailbox between them) and hands the answer back, while a reader drains the
/// buffers: however the drains fall, each receive's sequence number must be after its send's.
/// Returns how many receives came before their send.
int receives_before_sends(trace::trace_recorder& rec) {
  constexpr int calls = 20000;
  std::atomic<int> handed{-2};
  std::atomic<int> received{-1}; // the caller waits for its answer, as an ask does
  std::atomic<bool> done{false};
  std::thread callee([&] {
    // The callee's buffer comes first in the recorder's list: taken buffer by buffer, its
    // receives would come before the caller's sends.
    rec.record_event(trace::event{.dir = trace::direction::send, .from = "callee", .to = "x"});
    handed.store(-1, std::memory_order_release);
    for (int i = 0; i < calls; ++i) {
      while (handed.load(std::memory_order_acquire) < i) {
      }
      rec.record_event(trace::event{.dir = trace::direction::receive,
                                    .from = "caller",
                                    .to = "callee",
                                    .trace = {1, static_cast<std::uint64_t>(i + 1), 0}});
      received.store(i, std::memory_order_release);
    }
  });
  std::thread reader([&] {
    while (!done.load())
      (void)rec.recorded();
  });
  while (handed.load(std::memory_order_acquire) < -1) {
  }
  for (int i = 0; i < calls; ++i) {
    rec.record_event(trace::event{.dir = trace::direction::send,
                                  .from = "caller",
                                  .to = "callee",
                                  .trace = {1, static_cast<std::uint64_t>(i + 1), 0}});
    handed.store(i, std::memory_order_release);
    while (received.load(std::memory_order_acquire) < i) {
    }
  }
  callee.join();
  done = true;
  reader.join();
  auto all = rec.snapshot();
  CHECK(all.size() == 2 * calls + 1);
  std::vector<std::int64_t> sent_at(calls + 1, -1);
  int before_send = 0;
  for (const auto& r : all) {
    if (r.from == "callee")
      continue;
    if (r.dir == trace::direction::send)
      sent_at[r.trace.span_id] = static_cast<std::int64_t>(r.sequence);
    else if (sent_at[r.trace.span_id] < 0)
      ++before_send;
  }
  return before_send;
}

} // namespace

TEST_CASE("a call's receive never gets a sequence number before its send, across threads") {
  std::atomic<std::int64_t> clock{0}; // one clock for both threads, finer than their calls
  trace::trace_recorder rec([&] { return clock.fetch_add(1) + 1; }, 1 << 17);
  CHECK(receives_before_sends(rec) == 0);
}

TEST_CASE("with the system clock a receive is after its send even in the same microsecond") {
  // A call handed between two threads takes well under a microsecond here, so most sends and
  // receives share their time; the drain orders them by the time stamp counter's readings.
  trace::trace_recorder rec(trace::system_now_us, 1 << 17);
  CHECK(receives_before_sends(rec) == 0);
}
