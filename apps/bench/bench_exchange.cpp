// flint-bench exchange: throughput of one remote channel (credit-based, 32 KiB buffers, records
// serialized on the producer and read back on the consumer) from a producer process to a consumer
// process, and in the same run bare CAF `std::vector<char>` messages of the buffer size sent
// one-way with a window of outstanding messages as large as the channel's credit budget
// (acknowledged in batches of --bare-ack-batch). The bare messages carry as many bytes as the
// channel's buffers do (the records and their 4-byte lengths), so `ratio` compares the time of
// the same bytes on the wire. The second process is this binary with --serve; it produces, this
// process consumes. With --tls each round also runs the channel and the bare messages over mutual
// TLS against a second producing process (`tls_ratio`: channel over bare, both over TLS).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/message_view.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "apps/bench/benches.hpp"
#include "apps/bench/bench_tls.hpp"
#include "apps/bench/serving_child.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/network/input_gate.hpp"
#include "runtime/network/result_partition_manager.hpp"
#include "runtime/network/shuffle_environment.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/remote_input_channel.hpp"
#include "runtime/network/transport/network_router.hpp"
#include "runtime/network/transport/partition_request_server.hpp"
#include "runtime/network/transport/remote_channel_client.hpp"
#include "runtime/network/transport/transport_messages.hpp"

namespace flint::bench {

namespace {

using namespace flint::network;
using namespace flint::network::transport;
using clock_type = std::chrono::steady_clock;

using produce_atom = caf::atom_constant<caf::atom("xb_produce")>;
using write_atom = caf::atom_constant<caf::atom("xb_write")>;
using bare_start_atom = caf::atom_constant<caf::atom("xb_bstart")>;
using bare_ack_atom = caf::atom_constant<caf::atom("xb_back")>;

struct options {
  /// Per round. Many short interleaved rounds give a steadier median ratio on a noisy machine than
  /// a few long ones (3 x 256 MB swung from 0.5x to 1.0x between runs).
  std::size_t mb = 128;
  std::size_t record_bytes = 100;
  /// Bare messages outstanding; 0 = the channel's credit budget (exclusive + floating buffers).
  std::size_t window = 0;
  int rounds = 9;
  std::string policy = "stealing";
  /// CAF worker threads per process; 0 keeps CAF's default (max(cores, 4)).
  std::size_t workers = 0;
  /// Freed buffers per add_credit (remote_input_channel::set_credit_batch); 1 = one per buffer.
  std::size_t credit_batch = remote_input_channel::default_credit_batch;
  /// Also run each round's channel and bare messages over mutual TLS, against a second producing
  /// process.
  bool tls = false;
  /// Acknowledgements of the bare sink: one per this many messages (the channel's credit batch
  /// announces freed buffers in the same way).
  std::size_t bare_ack_batch = 1;
  /// "channel" or "bare" runs only that kind (profiling one of them); empty runs both.
  std::string only;
  /// How the producer writes: "task" as a stream task does (an actor that writes until the pool
  /// runs dry and is mailed when a buffer is back), "thread" from a thread of its own that sleeps
  /// on a condition variable while the pool is dry.
  std::string writer = "task";
  /// --serve over TLS (the certificate files the measuring side made).
  std::string tls_keystore, tls_truststore;
};

// ---- producer process ----------------------------------------------------------------------

/// The writers' CPU time and time blocked on the pool, summed over rounds (reported by --serve at
/// exit: whether the producing thread keeps its queue full between sends).
std::atomic<std::uint64_t> writer_cpu_ns{0}, writer_blocked_ns{0}, writer_wake_ns{0},
  writer_waits{0};

std::uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ULL
    + static_cast<std::uint64_t>(t.tv_nsec);
}

/// Writes records into a partition from its own thread (the producing task), waiting for the pool
/// under backpressure.
void write_records(const std::shared_ptr<result_partition>& p, std::size_t record_bytes,
                   std::size_t total, const std::shared_ptr<std::atomic<bool>>& stop) {
  std::string record(record_bytes, '\0');
  for (std::size_t i = 0; i < record_bytes; ++i)
    record[i] = static_cast<char>('a' + i % 26);
  struct waiter {
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
    clock_type::time_point notified;
  };
  auto cpu0 = thread_cpu_ns();
  std::uint64_t blocked_ns = 0;
  struct account {
    std::uint64_t cpu0;
    std::uint64_t& blocked;
    ~account() {
      writer_cpu_ns += thread_cpu_ns() - cpu0;
      writer_blocked_ns += blocked;
    }
  } accounted{cpu0, blocked_ns};
  for (std::size_t written = 0; written < total; written += record_bytes) {
    // As a task's record writer does (streaming::partition_writer::claim): the record goes
    // straight into the current buffer when its frame fits there, through the serializer when
    // it spans buffers or needs a new one.
    if (char* at = p->claim_record(record_bytes, 0)) {
      std::memcpy(at, record.data(), record_bytes);
      continue;
    }
    auto r = p->emit_record(record, 0);
    while (r == emit_result::blocked) {
      auto b0 = clock_type::now();
      auto w = std::make_shared<waiter>();
      if (p->notify_when_available([w] {
            std::lock_guard<std::mutex> g{w->m};
            w->ready = true;
            w->notified = clock_type::now();
            w->cv.notify_one();
          })) {
        std::unique_lock<std::mutex> lock{w->m};
        while (!w->cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return w->ready; }))
          if (*stop)
            return;
        writer_wake_ns += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - w->notified)
            .count());
        ++writer_waits;
      }
      blocked_ns += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - b0).count());
      r = p->resume();
    }
  }
  p->finish();
}

struct task_writer_state {
  std::shared_ptr<result_partition> partition;
  std::string record;
  std::uint64_t records_left = 0;
  /// When the pool's listener fired and when the writer ran dry (for the wake-up counters).
  std::shared_ptr<std::atomic<std::int64_t>> notified_ns;
  clock_type::time_point blocked_since;
  static inline const char* name = "flint.bench.task_writer";
};

/// The producing task as a stream task runs (runtime/streaming/stream_task.cpp): it writes records
/// in turns of its mailbox, and when the partition's pool runs dry it registers for the next buffer
/// and returns; the pool's listener mails it (a CAF enqueue, no thread asleep on a condition
/// variable).
caf::behavior task_writer(caf::stateful_actor<task_writer_state>* self,
                          std::shared_ptr<result_partition> p, std::size_t record_bytes,
                          std::size_t total) {
  auto& st = self->state;
  st.partition = std::move(p);
  st.record.resize(record_bytes);
  for (std::size_t i = 0; i < record_bytes; ++i)
    st.record[i] = static_cast<char>('a' + i % 26);
  st.records_left = (total + record_bytes - 1) / record_bytes;
  st.notified_ns = std::make_shared<std::atomic<std::int64_t>>(0);
  self->send(self, write_atom::value, false);
  return {
    [self](write_atom, bool woken) {
      auto& st = self->state;
      auto& part = *st.partition;
      auto cpu0 = thread_cpu_ns();
      struct account {
        std::uint64_t cpu0;
        ~account() { writer_cpu_ns += thread_cpu_ns() - cpu0; }
      } accounted{cpu0};
      auto now_ns = [] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 clock_type::now().time_since_epoch())
          .count();
      };
      if (woken) {
        auto now = clock_type::now();
        writer_wake_ns += static_cast<std::uint64_t>(now_ns() - st.notified_ns->load());
        writer_blocked_ns += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now - st.blocked_since).count());
        ++writer_waits;
      }
      auto wait = [self, &st, &part, &now_ns] {
        st.blocked_since = clock_type::now();
        caf::weak_actor_ptr weak = caf::actor_cast<caf::weak_actor_ptr>(self->ctrl());
        auto notified = st.notified_ns;
        if (part.notify_when_available([weak, notified, now_ns] {
              notified->store(now_ns());
              if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak))
                caf::anon_send(caf::actor_cast<caf::actor>(strong), write_atom::value, true);
            }))
          return;
        self->send(self, write_atom::value, false);
      };
      if (part.has_pending_record() && part.resume() == emit_result::blocked)
        return wait();
      // A turn writes at most this many records, then yields the worker (the mailbox's turn).
      std::size_t turn = 4096;
      const auto size = st.record.size();
      for (; st.records_left > 0 && turn > 0; --st.records_left, --turn) {
        // As a task's record writer does (streaming::partition_writer::claim).
        if (char* at = part.claim_record(size, 0)) {
          std::memcpy(at, st.record.data(), size);
          continue;
        }
        if (part.emit_record(st.record, 0) == emit_result::blocked) {
          --st.records_left;
          return wait();
        }
      }
      if (st.records_left > 0)
        return self->send(self, write_atom::value, false);
      part.finish();
      self->quit();
    },
  };
}

/// The producing TaskExecutor's partitions (the job is the benchmark's own).
const graph::job_id bench_job{0xbe, 0xbe};

struct control_state {
  shuffle_environment* env = nullptr;
  std::vector<std::thread>* writers = nullptr;
  std::vector<caf::actor>* task_writers = nullptr;
  bool task = true;
  std::shared_ptr<std::atomic<bool>> stop;
  static inline const char* name = "flint.bench.exchange_control";
};

/// Makes partition `round` and starts its writer; the consumer then requests it.
caf::behavior exchange_control(caf::stateful_actor<control_state>* self, shuffle_environment* env,
                               std::vector<std::thread>* writers,
                               std::vector<caf::actor>* task_writers, bool task,
                               std::shared_ptr<std::atomic<bool>> stop) {
  self->state.env = env;
  self->state.writers = writers;
  self->state.task_writers = task_writers;
  self->state.task = task;
  self->state.stop = stop;
  return {
    [self](produce_atom, std::uint64_t round, std::uint64_t record_bytes,
           std::uint64_t total) -> bool {
      result_partition_id id{graph::intermediate_data_set_id{0xbe, 0xcc},
                             static_cast<std::int32_t>(round)};
      auto p = self->state.env->create_partition(bench_job, id, 1);
      if (!p) {
        std::fprintf(stderr, "flint-bench exchange: %s\n", p.error().to_string().c_str());
        return false;
      }
      if (self->state.task)
        self->state.task_writers->push_back(
          self->system().spawn(task_writer, *p, record_bytes, total));
      else
        self->state.writers->emplace_back(write_records, *p, record_bytes, total,
                                          self->state.stop);
      return true;
    },
  };
}

struct bare_source_state {
  caf::actor sink;
  std::vector<char> payload;
  std::uint64_t left = 0;
  static inline const char* name = "flint.bench.bare_source";
};

/// Sends `count` messages of `size` bytes to the sink, at most `window` unacknowledged.
caf::behavior bare_source(caf::stateful_actor<bare_source_state>* self) {
  auto send_some = [self](std::uint64_t n) {
    auto& st = self->state;
    for (; n > 0 && st.left > 0; --n, --st.left)
      self->send(st.sink, st.payload);
  };
  return {
    [self, send_some](bare_start_atom, const caf::actor& sink, std::uint64_t count,
                      std::uint64_t size, std::uint64_t window) {
      self->state.sink = sink;
      self->state.payload.assign(size, 'x');
      self->state.left = count;
      send_some(window);
    },
    [send_some](bare_ack_atom, std::uint64_t n) { send_some(n); },
  };
}

int serve(const options& o) {
  auto shuffle = std::make_shared<shuffle_environment>(network_config{});
  auto& env = *shuffle;
  caf::actor_system_config cfg;
  rpc::configure_node(cfg,
                      {o.policy, o.workers, true, tls_of(o.tls_keystore, o.tls_truststore), {}});
  caf::actor_system sys{cfg};
  std::vector<std::thread> writers;
  std::vector<caf::actor> task_writers;
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto stats = std::make_shared<server_stats>();
  server_options server_opts;
  server_opts.stats = stats;
  auto server = spawn_partition_request_server(sys, *env.partitions_of(bench_job), server_opts);
  auto control =
    sys.spawn(exchange_control, &env, &writers, &task_writers, o.writer == "task", stop);
  auto bare = sys.spawn(bare_source);
  auto locator = rpc::spawn_endpoint_locator(sys);
  rpc::register_endpoint(locator, "partition_server", server);
  rpc::register_endpoint(locator, "exchange_control", control);
  rpc::register_endpoint(locator, "bare_source", bare);
  auto port = rpc::publish_locator(sys, locator, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "%s\n", port.error().to_string().c_str());
    return 1;
  }
  std::printf("port=%u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  for (auto& a : {server, control, bare, locator})
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  *stop = true;
  for (auto& t : writers)
    t.join();
  {
    // A task writer whose consumer left waits for a buffer that never comes back.
    caf::scoped_actor waiter{sys, true};
    for (auto& w : task_writers) {
      caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
      waiter->wait_for(w);
    }
  }
  env.release_all();
  auto sent = stats->data_buffers_sent.load();
  std::fprintf(
    stderr,
    "{\"bench\":\"exchange\",\"kind\":\"producer\",\"data_buffers_sent\":%llu,"
    "\"mean_backlog\":%.2f,\"writer_cpu_us_per_buffer\":%.1f,"
    "\"writer_blocked_us_per_buffer\":%.1f,\"writer_waits_per_buffer\":%.2f,"
    "\"writer_wake_us\":%.1f,\"buffers_per_sending_turn\":%.2f,"
    "\"credit_stalls_per_turn\":%.2f}\n",
    static_cast<unsigned long long>(sent),
    sent > 0 ? static_cast<double>(stats->backlog_sent.load()) / sent : 0.0,
    sent > 0 ? static_cast<double>(writer_cpu_ns.load()) / 1000.0 / sent : 0.0,
    sent > 0 ? static_cast<double>(writer_blocked_ns.load()) / 1000.0 / sent : 0.0,
    sent > 0 ? static_cast<double>(writer_waits.load()) / sent : 0.0,
    writer_waits > 0 ? static_cast<double>(writer_wake_ns.load()) / 1000.0 / writer_waits : 0.0,
    stats->sending_turns > 0
      ? static_cast<double>(sent) / static_cast<double>(stats->sending_turns.load())
      : 0.0,
    stats->sending_turns > 0 ? static_cast<double>(stats->credit_stalls.load())
                                 / static_cast<double>(stats->sending_turns.load())
                             : 0.0);
  return 0;
}

// ---- consumer process ----------------------------------------------------------------------

struct result {
  double seconds = 0;
  std::uint64_t bytes = 0;
  std::uint64_t records = 0;
  std::uint64_t messages = 0;
  std::string error;
  /// The channel's counters at each arrival (remote_input_channel::stats), channel rounds only.
  remote_input_channel::arrival_stats arrivals = {};
  /// Time the consuming actor spent on buffer messages (routing them into the channel and reading
  /// their records, credit included), channel rounds only.
  std::uint64_t handler_ns = 0;
};

/// The consuming task of one round: a gate with one remote channel fed from the actor's mailbox,
/// records read as buffers arrive.
struct channel_consumer final : consumer_routes {
  network_config config;
  std::shared_ptr<network_buffer_pool> global = network_buffer_pool::make(64, config.segment_size);
  input_gate gate{0, *global->create_buffer_pool(0, config.floating_buffers_per_gate)};
  remote_input_channel* channel = nullptr;
  std::unique_ptr<remote_channel_client> client;
  record_deserializer deserializer;
  result out;
  std::promise<void> done;
  bool finished = false;

  channel_consumer(result_partition_id id, std::size_t credit_batch) {
    auto remote = std::make_unique<remote_input_channel>(input_channel_id{0, 0}, 0, id, 0, global,
                                                         gate.floating_pool(),
                                                         config.buffers_per_channel, credit_batch);
    channel = remote.get();
    gate.add_channel(std::move(remote));
  }
  ~channel_consumer() override {
    client.reset();
    deserializer.clear();
    gate.release();
  }

  void finish(std::string error = {}) {
    if (finished)
      return;
    finished = true;
    out.error = std::move(error);
    done.set_value();
  }

  void after() {
    ++out.messages;
    if (finished)
      return;
    while (auto next = gate.poll_next()) {
      if (next->is_event()) {
        if (next->buf.kind() == buffer_kind::end_of_partition)
          finish();
        continue;
      }
      deserializer.set_next_buffer(std::move(next->buf));
      std::span<const char> record;
      while (deserializer.next_record(record) == deserialization_result::record) {
        ++out.records;
        out.bytes += record.size();
      }
    }
  }

  remote_channel_client* client_of(const input_channel_id&) override { return client.get(); }
  bool is_reading(const input_channel_id&) const override { return !finished; }
  void fail(error cause) override { finish(cause.to_string()); }
  void server_down(const caf::down_msg&) override {}

  /// As a stream task: every transport message goes through the router.
  caf::behavior behavior(caf::event_based_actor* self) {
    self->set_default_handler(
      [this](caf::scheduled_actor* me, caf::message_view& x) -> caf::result<caf::message> {
        auto& content = x.content();
        auto t0 = clock_type::now();
        if (!route_to_consumer(content, *this))
          return caf::drop(me, x);
        if (is_message<buffer_message>(content) || is_message<local_buffer_message>(content)) {
          after();
          out.handler_ns += static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - t0).count());
        }
        return caf::message{};
      });
    // Not empty, or the actor would quit at once.
    return {[](caf::atom_constant<caf::atom("xb_nop")>) {}};
  }
};

result run_channel(caf::actor_system& sys, const caf::actor& control, const caf::actor& server,
                   std::uint64_t round, const options& o, std::size_t total) {
  result_partition_id id{graph::intermediate_data_set_id{0xbe, 0xcc},
                         static_cast<std::int32_t>(round)};
  channel_consumer consumer{id, o.credit_batch};
  {
    caf::scoped_actor self{sys, true};
    bool ok = false;
    self
      ->request(control, std::chrono::seconds(10), produce_atom::value, round,
                static_cast<std::uint64_t>(o.record_bytes), static_cast<std::uint64_t>(total))
      .receive([&](bool r) { ok = r; }, [&](caf::error&) {});
    if (!ok) {
      consumer.out.error = "the producer could not create its partition";
      return consumer.out;
    }
  }
  auto fut = consumer.done.get_future();
  auto t0 = clock_type::now();
  auto actor =
    sys.spawn([&consumer](caf::event_based_actor* self) { return consumer.behavior(self); });
  if (auto ok = consumer.gate.setup(); !ok)
    return result{0, 0, 0, 0, ok.error().to_string()};
  if (auto ok = consumer.gate.request_partitions(); !ok)
    return result{0, 0, 0, 0, ok.error().to_string()};
  consumer.client =
    std::make_unique<remote_channel_client>(actor, server, *consumer.channel, consumer.config);
  consumer.client->request();
  if (fut.wait_for(std::chrono::seconds(120)) != std::future_status::ready)
    consumer.finish("timed out");
  consumer.out.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  // The actor's behavior points into `consumer`: wait for it to go before `consumer` does.
  caf::scoped_actor waiter{sys, true};
  waiter->wait_for(actor);
  consumer.out.arrivals = consumer.channel->stats();
  return consumer.out;
}

struct bare_sink_state {
  caf::actor source;
  std::uint64_t expected = 0;
  std::uint64_t ack_batch = 1;
  std::uint64_t unacked = 0;
  result* out = nullptr;
  std::promise<void>* done = nullptr;
  static inline const char* name = "flint.bench.bare_sink";
};

caf::behavior bare_sink(caf::stateful_actor<bare_sink_state>* self, caf::actor source,
                        std::uint64_t expected, std::uint64_t ack_batch, result* out,
                        std::promise<void>* done) {
  self->state.source = std::move(source);
  self->state.expected = expected;
  self->state.ack_batch = ack_batch;
  self->state.out = out;
  self->state.done = done;
  return {
    [self](const std::vector<char>& bytes) {
      auto& st = self->state;
      st.out->bytes += bytes.size();
      ++st.out->messages;
      if (++st.unacked >= st.ack_batch) {
        self->send(st.source, bare_ack_atom::value, st.unacked);
        st.unacked = 0;
      }
      if (st.out->messages == st.expected)
        st.done->set_value();
    },
  };
}

result run_bare(caf::actor_system& sys, const caf::actor& source, std::size_t total,
                std::size_t window, std::size_t message_bytes, std::size_t ack_batch) {
  result out;
  std::promise<void> done;
  auto fut = done.get_future();
  auto count = static_cast<std::uint64_t>((total + message_bytes - 1) / message_bytes);
  auto t0 = clock_type::now();
  // A batch larger than the window would stall the source.
  auto batch = static_cast<std::uint64_t>(std::clamp<std::size_t>(ack_batch, 1, window));
  auto sink = sys.spawn(bare_sink, source, count, batch, &out, &done);
  caf::anon_send(source, bare_start_atom::value, sink, count,
                 static_cast<std::uint64_t>(message_bytes), static_cast<std::uint64_t>(window));
  if (fut.wait_for(std::chrono::seconds(120)) != std::future_status::ready)
    out.error = "timed out";
  out.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  out.records = out.messages;
  caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
  caf::scoped_actor waiter{sys, true};
  waiter->wait_for(sink);
  return out;
}

double mb_per_s(const result& r) {
  return r.seconds > 0 ? static_cast<double>(r.bytes) / r.seconds / 1e6 : 0;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void report(const char* kind, int round, const result& r) {
  std::printf(
    "{\"bench\":\"exchange\",\"kind\":\"%s\",\"round\":%d,\"bytes\":%llu,\"seconds\":%.3f,"
    "\"mb_per_s\":%.1f,\"records_per_s\":%.0f,\"messages\":%llu%s%s%s}\n",
    kind, round, static_cast<unsigned long long>(r.bytes), r.seconds, mb_per_s(r),
    r.seconds > 0 ? static_cast<double>(r.records) / r.seconds : 0.0,
    static_cast<unsigned long long>(r.messages), r.error.empty() ? "" : ",\"error\":\"",
    r.error.c_str(), r.error.empty() ? "" : "\"");
  std::fflush(stdout);
}

int parse(int argc, char** argv, options& o, bool& serve_mode) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--serve") {
      serve_mode = true;
    } else if (a == "--mb" && (v = next())) {
      o.mb = std::max<std::size_t>(1, static_cast<std::size_t>(std::atoll(v)));
    } else if (a == "--record-bytes" && (v = next())) {
      o.record_bytes = std::max<std::size_t>(1, static_cast<std::size_t>(std::atoll(v)));
    } else if (a == "--window" && (v = next())) {
      o.window = static_cast<std::size_t>(std::atoll(v));
    } else if (a == "--rounds" && (v = next())) {
      o.rounds = std::max(1, std::atoi(v));
    } else if (a == "--credit-batch" && (v = next())) {
      o.credit_batch = std::max<std::size_t>(1, static_cast<std::size_t>(std::atoll(v)));
    } else if (a == "--bare-ack-batch" && (v = next())) {
      o.bare_ack_batch = std::max<std::size_t>(1, static_cast<std::size_t>(std::atoll(v)));
    } else if (a == "--only" && (v = next())) {
      o.only = v;
      if (o.only != "channel" && o.only != "bare") {
        std::fprintf(stderr, "flint-bench exchange: --only must be channel or bare\n");
        return 2;
      }
    } else if (a == "--writer" && (v = next())) {
      o.writer = v;
      if (o.writer != "task" && o.writer != "thread") {
        std::fprintf(stderr, "flint-bench exchange: --writer must be task or thread\n");
        return 2;
      }
    } else if (a == "--tls") {
      o.tls = true;
    } else if (a == "--tls-keystore" && (v = next())) {
      o.tls_keystore = v;
    } else if (a == "--tls-truststore" && (v = next())) {
      o.tls_truststore = v;
    } else if (a == "--workers" && (v = next())) {
      o.workers = static_cast<std::size_t>(std::atoll(v));
    } else if (a == "--scheduler" && (v = next())) {
      o.policy = v;
      if (o.policy != "stealing" && o.policy != "sharing") {
        std::fprintf(stderr, "flint-bench exchange: --scheduler must be stealing or sharing\n");
        return 2;
      }
    } else {
      std::fprintf(
        stderr,
        "usage: flint-bench exchange [--mb N] [--record-bytes B] [--window W] [--rounds R] "
        "[--scheduler stealing|sharing] [--workers N] [--credit-batch N] [--bare-ack-batch N] "
        "[--only channel|bare] [--writer task|thread] [--tls]\n");
      return 2;
    }
  }
  return 0;
}

/// The bytes the channel's buffers carry for `total` bytes of records: each record has its
/// 4-byte length in front.
std::size_t wire_bytes(std::size_t total, std::size_t record_bytes) {
  auto records = (total + record_bytes - 1) / record_bytes;
  return total + 4 * records;
}

/// What a channel's buffers carried (records and their lengths), in MB/s.
double channel_wire_mb_per_s(const result& r) {
  return r.seconds > 0 ? static_cast<double>(r.bytes + 4 * r.records) / r.seconds / 1e6 : 0;
}

/// Median channel and bare rates of one transport (plain or TLS) and their ratios.
struct series {
  std::vector<double> channel_mb, channel_wire_mb, channel_rps, bare_mb, paired;
  remote_input_channel::arrival_stats arrivals;
  std::uint64_t handler_ns = 0;

  void add(const std::optional<result>& c, const std::optional<result>& b) {
    if (c) {
      auto& a = c->arrivals;
      arrivals.data_buffers += a.data_buffers;
      arrivals.outstanding += a.outstanding;
      arrivals.unannounced += a.unannounced;
      arrivals.free += a.free;
      arrivals.queued += a.queued;
      arrivals.backlog += a.backlog;
      arrivals.announcements += a.announcements;
      arrivals.announced += a.announced;
      handler_ns += c->handler_ns;
      channel_mb.push_back(mb_per_s(*c));
      channel_wire_mb.push_back(channel_wire_mb_per_s(*c));
      channel_rps.push_back(c->seconds > 0 ? static_cast<double>(c->records) / c->seconds : 0);
    }
    if (b)
      bare_mb.push_back(mb_per_s(*b));
    // The channel over the bare round right after it: drift common to both cancels out.
    if (c && b && mb_per_s(*b) > 0)
      paired.push_back(channel_wire_mb_per_s(*c) / mb_per_s(*b));
  }
  /// The consumer's means per data buffer, on stderr as the producer's counters: credit the
  /// producer held at an arrival (the buffers in flight), free buffers unannounced, free in all,
  /// queued, backlog, credit per add_credit, and the consuming actor's time per buffer message.
  void print_arrivals(const char* kind) const {
    auto n = static_cast<double>(std::max<std::uint64_t>(1, arrivals.data_buffers));
    std::fprintf(stderr,
                "{\"bench\":\"exchange\",\"kind\":\"%s\",\"data_buffers\":%llu,"
                "\"in_flight\":%.2f,\"unannounced\":%.2f,\"free\":%.2f,\"queued\":%.2f,"
                "\"backlog\":%.2f,\"credit_per_announcement\":%.2f,"
                "\"handler_us_per_buffer\":%.2f}\n",
                kind, static_cast<unsigned long long>(arrivals.data_buffers),
                static_cast<double>(arrivals.outstanding) / n,
                static_cast<double>(arrivals.unannounced) / n, static_cast<double>(arrivals.free) / n,
                static_cast<double>(arrivals.queued) / n, static_cast<double>(arrivals.backlog) / n,
                arrivals.announcements > 0 ? static_cast<double>(arrivals.announced)
                                               / static_cast<double>(arrivals.announcements)
                                           : 0.0,
                static_cast<double>(handler_ns) / 1000.0 / n);
  }
  /// The same bytes on the wire: the channel's buffers against the bare messages.
  double ratio() const {
    auto b = median(bare_mb);
    return b > 0 ? median(channel_wire_mb) / b : 0.0;
  }
};

} // namespace

int exchange(int argc, char** argv) {
  options o;
  bool serve_mode = false;
  if (auto rc = parse(argc, argv, o, serve_mode); rc != 0)
    return rc;
  if (serve_mode)
    return serve(o);

  network_config net;
  auto window = o.window > 0 ? o.window : net.buffers_per_channel + net.floating_buffers_per_gate;
  auto total = o.mb * 1000 * 1000;

  serving_child child(
    {"exchange", "--serve", "--scheduler", o.policy, "--workers", std::to_string(o.workers),
     "--writer", o.writer});
  if (!child.port()) {
    std::fprintf(stderr, "flint-bench exchange: the producing process did not start\n");
    return 1;
  }
  auto port = *child.port();
  // With --tls a second producing process serves over mutual TLS; each round runs the channel
  // and the bare messages over both, so drift on a noisy machine hits both alike.
  std::optional<bench_certificates> certs;
  std::optional<serving_child> tls_child;
  if (o.tls) {
    auto made = bench_certificates::make("exchange");
    if (!made)
      return 1;
    certs.emplace(std::move(*made));
    tls_child.emplace(std::vector<std::string>{
      "exchange", "--serve", "--scheduler", o.policy, "--workers", std::to_string(o.workers),
      "--writer", o.writer, "--tls-keystore", certs->server(), "--tls-truststore", certs->ca()});
    if (!tls_child->port()) {
      std::fprintf(stderr, "flint-bench exchange: the TLS producing process did not start\n");
      return 1;
    }
  }

  int rc = 0;
  {
    caf::actor_system_config cfg;
    rpc::configure_node(cfg, {o.policy, o.workers, true, {}, {}});
    caf::actor_system sys{cfg};
    auto server = rpc::connect_endpoint(sys, "127.0.0.1", port, "partition_server");
    auto control = rpc::connect_endpoint(sys, "127.0.0.1", port, "exchange_control");
    auto bare = rpc::connect_endpoint(sys, "127.0.0.1", port, "bare_source");
    if (!server || !control || !bare) {
      std::fprintf(stderr, "flint-bench exchange: cannot reach the producing process\n");
      return 1;
    }
    caf::actor_system_config tls_cfg;
    if (certs)
      rpc::configure_node(tls_cfg,
                          {o.policy, o.workers, true, tls_of(certs->client(), certs->ca()), {}});
    std::optional<caf::actor_system> tls_sys;
    caf::actor tls_server, tls_control, tls_bare;
    if (certs) {
      tls_sys.emplace(tls_cfg);
      auto s = rpc::connect_endpoint(*tls_sys, "127.0.0.1", *tls_child->port(), "partition_server");
      auto c = rpc::connect_endpoint(*tls_sys, "127.0.0.1", *tls_child->port(), "exchange_control");
      auto b = rpc::connect_endpoint(*tls_sys, "127.0.0.1", *tls_child->port(), "bare_source");
      if (!s || !c || !b) {
        std::fprintf(stderr, "flint-bench exchange: cannot reach the TLS producing process: %s\n",
                     (!s     ? s.error()
                        : !c ? c.error()
                             : b.error())
                       .to_string()
                       .c_str());
        return 1;
      }
      tls_server = *s;
      tls_control = *c;
      tls_bare = *b;
    }
    // Warm-up (connections, allocator, caches), not reported.
    bool run_c = o.only != "bare", run_b = o.only != "channel";
    std::uint64_t round = 0;
    auto warm = std::min<std::size_t>(total, 32 * 1000 * 1000);
    if (run_c)
      run_channel(sys, *control, *server, round++, o, warm);
    if (run_b)
      run_bare(sys, *bare, wire_bytes(warm, o.record_bytes), window, net.segment_size,
               o.bare_ack_batch);
    if (tls_sys && run_c)
      run_channel(*tls_sys, tls_control, tls_server, round++, o, warm);
    if (tls_sys && run_b)
      run_bare(*tls_sys, tls_bare, wire_bytes(warm, o.record_bytes), window, net.segment_size,
               o.bare_ack_batch);
    series plain, tls;
    // Interleaved rounds so drift on a noisy machine hits both alike.
    for (int i = 0; i < o.rounds && rc == 0; ++i) {
      auto one = [&](caf::actor_system& s, const caf::actor& ctl, const caf::actor& srv,
                     const caf::actor& src, const char* c_kind, const char* b_kind) {
        std::optional<result> c, b;
        if (run_c) {
          c = run_channel(s, ctl, srv, round++, o, total);
          report(c_kind, i, *c);
        }
        if (run_b) {
          b = run_bare(s, src, wire_bytes(total, o.record_bytes), window, net.segment_size,
                       o.bare_ack_batch);
          report(b_kind, i, *b);
        }
        if ((c && !c->error.empty()) || (b && !b->error.empty()))
          rc = 1;
        return std::make_pair(c, b);
      };
      auto [c, b] = one(sys, *control, *server, *bare, "channel", "bare");
      plain.add(c, b);
      if (tls_sys && rc == 0) {
        auto [tc, tb] = one(*tls_sys, tls_control, tls_server, tls_bare, "channel_tls", "bare_tls");
        tls.add(tc, tb);
      }
    }
    if (rc == 0 && run_c) {
      plain.print_arrivals("consumer");
      if (tls_sys)
        tls.print_arrivals("consumer_tls");
    }
    if (rc == 0) {
      std::string tls_fields;
      if (tls_sys) {
        char buf[300];
        auto c = median(plain.channel_wire_mb);
        std::snprintf(buf, sizeof(buf),
                      ",\"tls_channel_mb_per_s\":%.1f,\"tls_channel_wire_mb_per_s\":%.1f,"
                      "\"tls_bare_mb_per_s\":%.1f,\"tls_ratio\":%.2f,\"tls_paired_ratio\":%.2f,"
                      "\"tls_over_plain\":%.2f",
                      median(tls.channel_mb), median(tls.channel_wire_mb), median(tls.bare_mb),
                      tls.ratio(), median(tls.paired),
                      c > 0 ? median(tls.channel_wire_mb) / c : 0.0);
        tls_fields = buf;
      }
      auto b = median(plain.bare_mb);
      std::printf(
        "{\"bench\":\"exchange\",\"kind\":\"summary\",\"mb\":%zu,\"record_bytes\":%zu,"
        "\"buffer_bytes\":%zu,\"bare_window\":%zu,\"bare_ack_batch\":%zu,\"credit_budget\":%zu,"
        "\"rounds\":%d,\"scheduler\":\"%s\",\"workers\":%zu,\"credit_batch\":%zu,"
        "\"channel_mb_per_s\":%.1f,\"channel_wire_mb_per_s\":%.1f,\"channel_records_per_s\":%.0f,"
        "\"bare_mb_per_s\":%.1f,\"bare_messages_per_s\":%.0f,\"ratio\":%.2f,"
        "\"paired_ratio\":%.2f,\"payload_ratio\":%.2f%s,\"goal\":\">= 0.8\"}\n",
        o.mb, o.record_bytes, net.segment_size, window, o.bare_ack_batch,
        net.buffers_per_channel + net.floating_buffers_per_gate, o.rounds, o.policy.c_str(),
        o.workers, o.credit_batch, median(plain.channel_mb), median(plain.channel_wire_mb),
        median(plain.channel_rps), b, b * 1e6 / static_cast<double>(net.segment_size),
        plain.ratio(), median(plain.paired), b > 0 ? median(plain.channel_mb) / b : 0.0,
        tls_fields.c_str());
      std::fflush(stdout);
    }
  }
  return rc;
}

} // namespace flint::bench
