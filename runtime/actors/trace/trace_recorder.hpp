#pragma once
/// The one recording point per node for RPC traffic (DESIGN.md "Traces"): every envelope sent or
/// received is recorded into a bounded ring and, when enabled, appended to a JSON-lines file.
///
/// Endpoints on different threads record concurrently. A shared mutex made them queue behind
/// each other (a futex sleep costs more than a whole local RPC), so each record reserves its
/// slot with an atomic counter and only that slot is locked, briefly, while it is written.

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

class trace_recorder {
public:
  using clock_fn = std::function<std::int64_t()>;

  /// `now_us` gives the time stamps (injected: tests and replays pass their own).
  explicit trace_recorder(clock_fn now_us, std::size_t capacity = 8192);

  /// Also append every record to `path` as JSON lines. Returns false if it cannot be opened.
  bool enable_file(const std::string& path);

  void record_event(const event& e);
  /// The same for a whole record (tests, replays); its sequence is assigned anew.
  void record_event(const record& r);

  /// A copy of the ring, oldest first.
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
  /// lost. Stops before a record that is reserved but still being written, so a tail that
  /// continues at `next_sequence` never skips one.
  tail_batch read_from(std::uint64_t from_sequence, std::size_t max_records) const;

  std::uint64_t recorded() const;
  std::int64_t now_us() const { return now_us_(); }

  /// Fresh ids for trace and span fields, unique per node and unlikely to collide across nodes.
  /// Drawn from a counter of the calling thread (no shared counter between endpoints' threads).
  std::uint64_t next_id();

  void clear();

private:
  /// A ring slot: record's fields with names as interned ids (see event), in under two cache
  /// lines, so recording touches little memory. Text that has no id (a caller named on the wire,
  /// an error) goes to the slot's texts, touched only then. Aligned to cache lines: a slot is two
  /// lines of its own (threads writing neighbouring slots share none).
  struct alignas(64) slot {
    mutable std::atomic_flag busy = ATOMIC_FLAG_INIT;
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
    std::uint64_t sequence = 0;
    rpc::fencing_token token;
    rpc::trace_context trace;
  };
  /// The texts of a slot, their buffers reused lap after lap.
  struct alignas(64) slot_texts {
    std::string from, to, method, detail;
  };
  record to_record(std::size_t index) const;
  /// The ring slot of a sequence (a mask when the capacity is a power of two: a division is
  /// ~40 cycles, on every event).
  std::size_t index_of(std::uint64_t sequence) const noexcept {
    return capacity_mask_ != 0 ? static_cast<std::size_t>(sequence & capacity_mask_)
                               : static_cast<std::size_t>(sequence % capacity_);
  }
  class slot_guard;

  clock_fn now_us_;
  std::size_t capacity_;
  std::uint64_t capacity_mask_ = 0; ///< capacity_ - 1 when a power of two (> 1), else 0
  std::unique_ptr<slot[]> ring_; // fixed capacity, overwritten in place
  std::unique_ptr<slot_texts[]> texts_; // one per slot
  /// Sequences below this were dropped by `clear()`: a tail passes over them.
  std::atomic<std::uint64_t> cleared_before_{0};
  std::uint64_t id_base_;
  /// Written by every record, from every endpoint's thread: on its own cache line, so the
  /// fields above stay shared (read-only) between threads.
  alignas(64) std::atomic<std::uint64_t> next_sequence_{0};
  char pad_after_sequence_[64 - sizeof(std::atomic<std::uint64_t>)] = {};
  std::mutex file_mtx_;
  std::ofstream file_;
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

/// Wall-clock microseconds; what apps inject into the recorder. Read from the CPU's time stamp
/// counter (x86: ~10 ns instead of the system clock's ~22 ns on a VM's vDSO; four reads per
/// traced call), calibrated against the system clock once (over its first 20 ms of use) and
/// re-anchored to it by each thread every millisecond: the same time as the system clock to
/// within a microsecond, and never going back on one thread.
std::int64_t system_now_us();

} // namespace flint::trace
