#pragma once
/// The one recording point per node for RPC traffic (DESIGN.md "Traces"): every envelope sent or
/// received is recorded into a bounded ring and, when enabled, appended to a JSON-lines file.
///
/// Endpoints on different threads record concurrently, and a call records four events, so
/// recording shares nothing between threads: each thread writes its events into a buffer of its
/// own (per recorder) and publishes each with a release store of the buffer's head — no lock, no
/// shared counter, no read-modify-write. A reader (snapshot, tail, the file) first drains the
/// threads' buffers into the node's ring under one mutex, and that is where events get their
/// sequence numbers; a thread whose buffer is full drains it the same way.

#include <cstdint>
#include <fstream>
#include <functional>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/trace/trace_names.hpp"

namespace flint::trace {

enum class direction : std::uint8_t {
  send, ///< the caller put an envelope on the wire (ask or tell)
  receive, ///< the callee took it from its mailbox
  reply, ///< the callee answered an ask
  response, ///< the caller got the answer (or its error, or its timeout)
};

enum class outcome : std::uint8_t {
  ok,
  rejected, ///< fencing token missing or different: not executed
  malformed, ///< bytes that do not decode
  unknown_method, ///< no such method at the receiver
  failed, ///< the handler answered with an error
  timeout, ///< no answer within the ask timeout
  unreachable, ///< the receiver is gone
};

const char* to_string(direction d);
const char* to_string(outcome o);

struct record {
  std::int64_t time_us = 0; ///< microseconds since the Unix epoch
  direction dir = direction::send;
  std::string from;
  std::string to;
  std::string method;
  rpc::fencing_token token;
  rpc::trace_context trace;
  bool is_ask = false;
  std::uint32_t bytes = 0;
  outcome result = outcome::ok;
  std::int64_t latency_us = -1; ///< for responses: send to answer; -1 when not applicable
  std::string detail; ///< error text, when there is one
  std::uint64_t sequence = 0; ///< position in this node's stream of records
  /// Part of a monitoring query, not of the cluster's own work: a call from or to a monitoring
  /// client (REST, whose dashboard polls several times a second, or the metrics collector), or a
  /// call an endpoint made while serving one, and everything in that call's trace. Set by the
  /// recorder (is_monitoring_client); the timeline hides these by default.
  bool monitoring = false;
};

/// One event as an endpoint hands it to the recorder. A name is an interned id when the caller
/// has one (from_name, to_name, method_name: the ring slot stores the id, a few bytes), else a
/// view (from, to, method) copied into the slot's own string, whose buffer is reused lap after
/// lap. Either way, once the ring is warm, recording an event allocates nothing; a record's
/// strings are made when it is read. Fields mean what record's do.
struct event {
  std::int64_t time_us = 0; ///< 0: the recorder reads its clock
  direction dir = direction::send;
  std::string_view from;
  std::string_view to;
  std::string_view method;
  rpc::fencing_token token;
  rpc::trace_context trace;
  bool is_ask = false;
  std::uint32_t bytes = 0;
  outcome result = outcome::ok;
  std::int64_t latency_us = -1;
  std::string_view detail;
  bool monitoring = false;
  /// Interned names, when the caller has them; they take the place of from, to and method.
  name_id from_name = 0;
  name_id to_name = 0;
  name_id method_name = 0;
};

/// Whether `endpoint_id` is a monitoring client: REST ("rest", "rest…") or "metrics".
bool is_monitoring_client(std::string_view endpoint_id);

/// One JSON object (no trailing newline) with the fields above, always valid UTF-8: a byte of a
/// string field that is not part of a well-formed UTF-8 sequence is written as U+FFFD.
std::string to_json(const record& r);

std::int64_t system_now_us(); // below

namespace detail {
struct thread_buffer; // a thread's unpublished events (trace_recorder.cpp)
} // namespace detail

class trace_recorder {
public:
  using clock_fn = std::function<std::int64_t()>;

  /// `now_us` gives the time stamps (injected: tests and replays pass their own). `capacity`
  /// records are kept in the node's ring; each recording thread also buffers up to
  /// `thread_capacity` events not drained into it yet (a power of two, at least 2).
  explicit trace_recorder(clock_fn now_us, std::size_t capacity = 8192,
                          std::size_t thread_capacity = 256);
  ~trace_recorder();
  trace_recorder(const trace_recorder&) = delete;
  trace_recorder& operator=(const trace_recorder&) = delete;

  /// Also append every record to `path` as JSON lines. Returns false if it cannot be opened.
  bool enable_file(const std::string& path);

  /// Records `e` into the calling thread's buffer: no lock and no shared read-modify-write
  /// unless the buffer is full (then this thread drains the buffers) or a file is open (then the
  /// record is drained and written at once, so the file can be tailed live).
  void record_event(const event& e);
  /// The same for a whole record (tests, replays); its sequence is assigned anew.
  void record_event(const record& r);

  /// A copy of the ring, oldest first. Like every read below, it first drains what the threads
  /// have recorded, so it holds every event recorded before the call (on any thread) that the
  /// ring still keeps.
  std::vector<record> snapshot() const;

  /// Records whose sequence number is at least `from_sequence` (for live tails).
  std::vector<record> since(std::uint64_t from_sequence) const;

  /// One step of a live tail: what `read_from` found.
  struct tail_batch {
    /// Consecutive records (apart from `missed` ones), oldest first.
    std::vector<record> records;
    /// Records at or after the asked sequence that are gone (the ring overwrote them, or
    /// `clear()` dropped them) and so are not in `records`.
    std::uint64_t missed = 0;
    /// Where the next read continues: one past the last record looked at.
    std::uint64_t next_sequence = 0;
  };

  /// Up to `max_records` records from `from_sequence` on, in order, and how many of those were
  /// lost. A sequence number is given to a record only once it is complete, so a tail that
  /// continues at `next_sequence` never skips one.
  tail_batch read_from(std::uint64_t from_sequence, std::size_t max_records) const;

  /// How many records were given sequence numbers (after draining the threads' buffers).
  std::uint64_t recorded() const;
  std::int64_t now_us() const { return system_clock_ ? system_now_us() : now_us_(); }

  /// Fresh ids for trace and span fields, unique per node and unlikely to collide across nodes.
  /// Drawn from a counter of the calling thread (no shared counter between endpoints' threads).
  std::uint64_t next_id();

  void clear();

  /// Tests only: called by each drain right after its first look at the head of its `i`-th
  /// thread buffer (in the order threads first recorded), with the drain's lock held, so a test
  /// can publish events between a drain's looks.
  void on_drain_look_for_testing(std::function<void(std::size_t)> f) { drain_look_ = std::move(f); }

  /// A ring slot, and an entry of a thread's buffer: record's fields with names as interned ids
  /// (see event), plain data (88 bytes) copied with one assignment, so recording touches little
  /// memory.
  struct slot {
    bool filled = false;
    direction dir = direction::send;
    bool is_ask = false;
    outcome result = outcome::ok;
    bool monitoring = false;
    bool has_detail = false;
    name_id from = 0, to = 0, method = 0; ///< 0: the text is in the slot's texts
    std::uint32_t bytes = 0;
    std::int64_t time_us = 0;
    std::int64_t latency_us = -1;
    std::uint64_t sequence = 0; ///< in a thread's buffer: the event's order key (trace_recorder.cpp)
    rpc::fencing_token token;
    rpc::trace_context trace;
  };
  /// The texts of a slot that have no id (a caller named on the wire, an error), beside the
  /// slots and touched only then; their buffers are reused lap after lap.
  struct slot_texts {
    std::string from, to, method, detail;
  };

private:
  record to_record(const slot& s, const slot_texts& t) const;
  /// The ring slot of a sequence (a mask when the capacity is a power of two).
  std::size_t index_of(std::uint64_t sequence) const noexcept {
    return capacity_mask_ != 0 ? static_cast<std::size_t>(sequence & capacity_mask_)
                               : static_cast<std::size_t>(sequence % capacity_);
  }
  /// The calling thread's buffer for this recorder (registered on first use).
  detail::thread_buffer& local_buffer();
  detail::thread_buffer& register_thread();
  /// Moves what the threads published into the ring, giving sequence numbers, merged by the
  /// events' order keys (the time stamp counter's readings; drain_mtx_ held). With `cutoff`, an event is left for the next drain when an event
  /// published while this drain looked could precede it (see trace_recorder.cpp).
  /// Returns whether it took every event published before it looked.
  bool drain(bool cutoff) const;
  /// Drains until every event published before the call is in the ring (drain_mtx_ held).
  void drain_published() const;

  clock_fn now_us_;
  bool system_clock_ = false; ///< now_us_ is system_now_us: called directly
  std::size_t capacity_;
  std::uint64_t capacity_mask_ = 0; ///< capacity_ - 1 when a power of two (> 1), else 0
  std::size_t thread_capacity_;
  std::uint64_t id_; ///< unique in the process, never reused: keys the threads' buffer caches
  std::uint64_t id_base_;

  /// Everything below is touched only under drain_mtx_ (the drain, the readers, registration).
  mutable std::mutex drain_mtx_;
  mutable std::unique_ptr<slot[]> ring_; // fixed capacity, overwritten in place
  mutable std::unique_ptr<slot_texts[]> texts_; // one per slot
  mutable std::uint64_t next_sequence_ = 0;
  mutable std::vector<std::shared_ptr<detail::thread_buffer>> buffers_;
  struct merge_cursor {
    detail::thread_buffer* buffer;
    std::uint64_t next, end;
  };
  mutable std::vector<merge_cursor> cursors_; // reused by each drain
  std::function<void(std::size_t)> drain_look_;
  mutable std::ofstream file_;
  std::atomic<bool> file_enabled_{false};

  /// Whether `e` is monitoring (see record::monitoring). Lock-free: an endpoint serving a
  /// monitoring call, and the trace ids of monitoring calls, are kept in small hashed tables
  /// (a rare collision of endpoint or trace ids marks a record wrongly; the timeline then hides
  /// it unless its toggle is on).
  struct resolved; // an event's time and names, resolved once (trace_recorder.cpp)
  bool mark_monitoring(const event& e, const resolved& r);
  static constexpr std::size_t monitoring_slots = 256;
  /// How long after taking a monitoring call an endpoint's sends count as made by its handler.
  static constexpr std::int64_t handler_window_us = 2000;
  /// Per endpoint (by hash): the hash while it serves a monitoring call, else 0, and since when.
  std::unique_ptr<std::atomic<std::uint64_t>[]> serving_monitoring_ =
    std::make_unique<std::atomic<std::uint64_t>[]>(monitoring_slots);
  std::unique_ptr<std::atomic<std::int64_t>[]> serving_since_us_ =
    std::make_unique<std::atomic<std::int64_t>[]>(monitoring_slots);
  /// Trace ids of recent monitoring calls.
  std::unique_ptr<std::atomic<std::uint64_t>[]> monitoring_traces_ =
    std::make_unique<std::atomic<std::uint64_t>[]>(monitoring_slots);
};

/// Wall-clock microseconds; what apps inject into the recorder (which then calls it directly).
/// Read from the CPU's time stamp counter (x86: ~10 ns instead of the system clock's ~22 ns on a VM's vDSO; four reads per
/// traced call), calibrated against the system clock once (over its first 20 ms of use) and
/// re-anchored to it by each thread every millisecond: the same time as the system clock to
/// within a microsecond, and never going back on one thread.
std::int64_t system_now_us();

} // namespace flint::trace
