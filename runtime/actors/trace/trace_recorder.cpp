#include "runtime/actors/trace/trace_recorder.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace flint::trace {

const char* to_string(direction d) {
  switch (d) {
    case direction::send: return "send";
    case direction::receive: return "receive";
    case direction::reply: return "reply";
    case direction::response: return "response";
  }
  return "?";
}

const char* to_string(outcome o) {
  switch (o) {
    case outcome::ok: return "ok";
    case outcome::rejected: return "rejected";
    case outcome::malformed: return "malformed";
    case outcome::unknown_method: return "unknown_method";
    case outcome::failed: return "failed";
    case outcome::timeout: return "timeout";
    case outcome::unreachable: return "unreachable";
  }
  return "?";
}

namespace {

/// Length of the well-formed UTF-8 sequence that `s` starts with (Unicode's table 3-7: no
/// overlong forms, no surrogates, nothing above U+10FFFF), or 0 if it starts with none.
std::size_t utf8_sequence_length(std::string_view s) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char lead = byte(0);
  if (lead < 0x80)
    return 1;
  std::size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0)
      second_min = 0xA0;
    if (lead == 0xED)
      second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0)
      second_min = 0x90;
    if (lead == 0xF4)
      second_max = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < second_min || byte(1) > second_max)
    return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF)
      return 0;
  return length;
}

/// `s` as a JSON string. Endpoint ids and error texts are copied into records as they come and
/// need not be UTF-8, which JSON requires: each byte that is not part of a well-formed sequence
/// is written as U+FFFD (the replacement character, as UTF-8), so every line parses.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    char c = s[i];
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else if (auto length = utf8_sequence_length(s.substr(i)); length == 0) {
          out += "\xEF\xBF\xBD";
        } else {
          out.append(s.substr(i, length));
          i += length;
          continue;
        }
    }
    ++i;
  }
  out += '"';
}

void append_field(std::string& out, const char* key, const std::string& value) {
  out += '"';
  out += key;
  out += "\":";
  append_json_string(out, value);
  out += ',';
}

void append_field(std::string& out, const char* key, std::int64_t value) {
  out += '"';
  out += key;
  out += "\":";
  out += std::to_string(value);
  out += ',';
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

std::string to_json(const record& r) {
  std::string out = "{";
  append_field(out, "seq", static_cast<std::int64_t>(r.sequence));
  append_field(out, "time_us", r.time_us);
  append_field(out, "dir", to_string(r.dir));
  append_field(out, "from", r.from);
  append_field(out, "to", r.to);
  append_field(out, "method", r.method);
  append_field(out, "kind", r.is_ask ? "ask" : "tell");
  append_field(out, "token", r.token.to_string());
  append_field(out, "trace_id", hex(r.trace.trace_id));
  append_field(out, "span_id", hex(r.trace.span_id));
  append_field(out, "parent_span_id", hex(r.trace.parent_span_id));
  append_field(out, "bytes", static_cast<std::int64_t>(r.bytes));
  append_field(out, "outcome", to_string(r.result));
  if (r.latency_us >= 0)
    append_field(out, "latency_us", r.latency_us);
  if (!r.detail.empty())
    append_field(out, "detail", r.detail);
  if (r.monitoring)
    out += "\"monitoring\":true,";
  out.back() = '}';
  return out;
}

namespace {

/// One interned name, with what recording asks of it precomputed.
struct name_entry {
  std::string text;
  std::size_t hash = 0; ///< std::hash of the text | 1 (never 0)
  bool monitoring_client = false;
};

/// The process's interned names. Entries are written once, under the lock, and never move or
/// change: readers find them by id without a lock (chunks are published with release stores).
class name_table {
public:
  name_id intern(std::string_view text) {
    std::lock_guard<std::mutex> guard(mtx_);
    if (auto i = index_.find(text); i != index_.end())
      return i->second;
    auto id = count_.load(std::memory_order_relaxed);
    if (id >= chunk_size * max_chunks)
      return 0; // full: events carry the text
    auto c = id / chunk_size;
    auto* chunk = chunks_[c].load(std::memory_order_relaxed);
    if (chunk == nullptr) {
      chunk = new name_entry[chunk_size]; // never freed: ids stay valid for the process's life
      chunks_[c].store(chunk, std::memory_order_release);
    }
    auto& e = chunk[id % chunk_size];
    e.text.assign(text);
    e.hash = std::hash<std::string_view>{}(e.text) | 1;
    e.monitoring_client = is_monitoring_client(e.text);
    index_.emplace(std::string_view(e.text), id); // the entry never moves: the view stays valid
    count_.store(id + 1, std::memory_order_release);
    return id;
  }

  const name_entry* get(name_id id) const {
    if (id == 0 || id >= count_.load(std::memory_order_acquire))
      return nullptr;
    return &chunks_[id / chunk_size].load(std::memory_order_acquire)[id % chunk_size];
  }

private:
  static constexpr std::uint32_t chunk_size = 1024;
  // 65 536 names at most (a few MB): per-job and per-peer names (a JobMaster's, a TaskExecutor's
  // address) are interned too and never freed, so a session cluster running jobs for months
  // fills the table; past it, events carry their text as before interning.
  static constexpr std::uint32_t max_chunks = 64;
  std::mutex mtx_;
  std::unordered_map<std::string_view, name_id> index_;
  std::atomic<name_entry*> chunks_[max_chunks] = {};
  std::atomic<std::uint32_t> count_{1}; // 0 is "none"
};

name_table& names() {
  static auto* table = new name_table; // outlives every recorder and static destructor
  return *table;
}

/// A name of an event, resolved once: its text, and its entry when interned.
struct resolved_name {
  const name_entry* entry;
  std::string_view text;

  resolved_name(name_id id, std::string_view view)
    : entry(names().get(id)),
      text(entry != nullptr ? std::string_view(entry->text) : view) {}
  bool monitoring_client() const {
    return entry != nullptr ? entry->monitoring_client : is_monitoring_client(text);
  }
  std::size_t hash() const {
    return entry != nullptr ? entry->hash : std::hash<std::string_view>{}(text) | 1;
  }
};

} // namespace

name_id intern(std::string_view text) {
  return names().intern(text);
}

std::string_view name_text(name_id id) {
  auto* e = names().get(id);
  return e != nullptr ? std::string_view(e->text) : std::string_view{};
}

record trace_recorder::to_record(std::size_t index) const {
  const auto& s = ring_[index];
  const auto& t = texts_[index];
  auto name = [](name_id id, const std::string& text) {
    return id != 0 ? std::string(name_text(id)) : text;
  };
  record r;
  r.time_us = s.time_us;
  r.dir = s.dir;
  r.from = name(s.from, t.from);
  r.to = name(s.to, t.to);
  r.method = name(s.method, t.method);
  r.token = s.token;
  r.trace = s.trace;
  r.is_ask = s.is_ask;
  r.bytes = s.bytes;
  r.result = s.result;
  r.latency_us = s.latency_us;
  if (s.has_detail)
    r.detail = t.detail;
  r.sequence = s.sequence;
  r.monitoring = s.monitoring;
  return r;
}

/// Holds one ring slot; writers of different slots never wait for each other.
class trace_recorder::slot_guard {
public:
  explicit slot_guard(const slot& s) : s_(s) {
    while (s_.busy.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~slot_guard() { s_.busy.clear(std::memory_order_release); }

private:
  const slot& s_;
};

trace_recorder::trace_recorder(clock_fn now_us, std::size_t capacity)
  : now_us_(std::move(now_us)),
    capacity_(capacity == 0 ? 1 : capacity),
    ring_(std::make_unique<slot[]>(capacity_)),
    texts_(std::make_unique<slot_texts[]>(capacity_)) {
  if (capacity_ > 1 && (capacity_ & (capacity_ - 1)) == 0)
    capacity_mask_ = capacity_ - 1;
  std::random_device rd;
  id_base_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

bool trace_recorder::enable_file(const std::string& path) {
  std::lock_guard<std::mutex> guard(file_mtx_);
  file_.open(path, std::ios::app);
  file_enabled_ = file_.is_open();
  return file_enabled_;
}

bool is_monitoring_client(std::string_view endpoint_id) {
  return endpoint_id.starts_with("rest") || endpoint_id == "metrics";
}

struct trace_recorder::resolved {
  std::int64_t time_us;
  resolved_name from, to, method;
};

bool trace_recorder::mark_monitoring(const event& e, const resolved& r) {
  bool monitoring = e.monitoring || r.from.monitoring_client() || r.to.monitoring_client();
  // A send an endpoint makes while it handles a monitoring call is part of it (the Dispatcher
  // forwarding REST's request_job_status to the JobMaster): sent by the handler, so right after
  // the receive. A later send (a timer's heartbeat) is the endpoint's own.
  if (!monitoring && e.dir == direction::send) {
    auto h = r.from.hash();
    auto i = h % monitoring_slots;
    monitoring = serving_monitoring_[i].load(std::memory_order_relaxed) == h
      && r.time_us - serving_since_us_[i].load(std::memory_order_relaxed) <= handler_window_us;
  }
  auto tid = e.trace.trace_id;
  auto& traced = monitoring_traces_[tid % monitoring_slots];
  if (!monitoring && tid != 0)
    monitoring = traced.load(std::memory_order_relaxed) == tid;
  if (monitoring && tid != 0 && traced.load(std::memory_order_relaxed) != tid)
    traced.store(tid, std::memory_order_relaxed);
  // What an endpoint takes from its mailbox starts a handler; its reply ends it.
  if (e.dir == direction::receive || e.dir == direction::reply) {
    const auto& endpoint = e.dir == direction::receive ? r.to : r.from;
    auto h = endpoint.hash();
    auto i = h % monitoring_slots;
    if (monitoring && e.dir == direction::receive) {
      serving_since_us_[i].store(r.time_us, std::memory_order_relaxed);
      serving_monitoring_[i].store(h, std::memory_order_relaxed);
    } else if (serving_monitoring_[i].load(std::memory_order_relaxed) == h) {
      auto expected = h;
      serving_monitoring_[i].compare_exchange_strong(expected, 0, std::memory_order_relaxed);
    }
  }
  return monitoring;
}

void trace_recorder::record_event(const event& e) {
  const resolved names{e.time_us != 0 ? e.time_us : now_us_(),
                       {e.from_name, e.from}, {e.to_name, e.to}, {e.method_name, e.method}};
  bool monitoring = mark_monitoring(e, names);
  auto sequence = next_sequence_.fetch_add(1, std::memory_order_relaxed);
  // Only when a file is open: a std::optional<record> here cost a 232-byte zeroing per event.
  std::unique_ptr<record> for_file;
  {
    const auto index = index_of(sequence);
    auto& r = ring_[index];
    auto& texts = texts_[index];
    slot_guard guard(r);
    auto name = [](const resolved_name& n, name_id id, std::string& text) -> name_id {
      if (n.entry != nullptr)
        return id;
      text.assign(n.text);
      return 0;
    };
    r.time_us = names.time_us;
    r.dir = e.dir;
    r.from = name(names.from, e.from_name, texts.from);
    r.to = name(names.to, e.to_name, texts.to);
    r.method = name(names.method, e.method_name, texts.method);
    r.token = e.token;
    r.trace = e.trace;
    r.is_ask = e.is_ask;
    r.bytes = e.bytes;
    r.result = e.result;
    r.latency_us = e.latency_us;
    r.has_detail = !e.detail.empty();
    if (r.has_detail)
      texts.detail.assign(e.detail);
    r.sequence = sequence;
    r.monitoring = monitoring;
    r.filled = true;
    if (file_enabled_.load(std::memory_order_relaxed))
      for_file = std::make_unique<record>(to_record(index));
  }
  // The ring is larger than a core's cache: the next event's slot was last written a lap ago and
  // is in no cache, and taking its lock (an atomic exchange) would wait for memory. Fetched now,
  // the next slot is at hand when the next event (~0.5 µs later in a busy call path, from this
  // thread or another) comes.
  const auto next = index_of(sequence + 1);
  __builtin_prefetch(&ring_[next], 1);
  __builtin_prefetch(reinterpret_cast<const char*>(&ring_[next]) + 64, 1);
  __builtin_prefetch(&texts_[next], 1);
  if (for_file) {
    // One line per record, flushed so `flint trace` can tail the file live.
    auto line = to_json(*for_file);
    std::lock_guard<std::mutex> guard(file_mtx_);
    file_ << line << '\n';
    file_.flush();
  }
}

void trace_recorder::record_event(const record& r) {
  record_event(event{r.time_us, r.dir, r.from, r.to, r.method, r.token, r.trace, r.is_ask,
                     r.bytes, r.result, r.latency_us, r.detail, r.monitoring});
}

std::vector<record> trace_recorder::snapshot() const {
  return since(0);
}

std::vector<record> trace_recorder::since(std::uint64_t from_sequence) const {
  auto end = next_sequence_.load(std::memory_order_acquire);
  auto begin = end > capacity_ ? end - capacity_ : 0;
  begin = std::max(begin, from_sequence);
  std::vector<record> out;
  if (begin < end)
    out.reserve(end - begin);
  for (auto seq = begin; seq < end; ++seq) {
    const auto& s = ring_[index_of(seq)];
    slot_guard guard(s);
    // A slot still being written for `seq` (or already reused) is skipped, not waited for.
    if (s.filled && s.sequence == seq)
      out.push_back(to_record(index_of(seq)));
  }
  return out;
}

trace_recorder::tail_batch trace_recorder::read_from(std::uint64_t from_sequence,
                                                     std::size_t max_records) const {
  tail_batch batch;
  auto end = next_sequence_.load(std::memory_order_acquire);
  auto oldest = end > capacity_ ? end - capacity_ : 0;
  auto seq = std::max(from_sequence, oldest);
  batch.missed = seq - std::min(seq, from_sequence);
  auto cleared = cleared_before_.load(std::memory_order_acquire);
  for (; seq < end && batch.records.size() < max_records; ++seq) {
    const auto& s = ring_[index_of(seq)];
    slot_guard guard(s);
    if (s.filled && s.sequence == seq) {
      batch.records.push_back(to_record(index_of(seq)));
    } else if ((s.filled && s.sequence > seq) || seq < cleared) {
      ++batch.missed; // overwritten by a newer lap since `end` was read, or cleared
    } else {
      break; // reserved, not yet written: the next read picks it up
    }
  }
  batch.next_sequence = seq;
  return batch;
}

std::uint64_t trace_recorder::recorded() const {
  return next_sequence_.load(std::memory_order_acquire);
}

std::uint64_t trace_recorder::next_id() {
  // Each thread counts in its own range (a shared counter would move a cache line between the
  // caller's and the callee's threads on every call): thread k's n-th id mixes
  // id_base_ + k * 2^40 + n, distinct for distinct (k, n) below 2^40 ids a thread.
  static std::atomic<std::uint64_t> threads{0};
  thread_local const std::uint64_t thread_base =
    threads.fetch_add(1, std::memory_order_relaxed) << 40;
  thread_local std::uint64_t n = 0;
  // A multiplication by an odd constant is a bijection: distinct inputs, distinct ids, spread
  // out; never zero (zero means "none").
  auto id = (id_base_ + thread_base + ++n) * 0x9E3779B97F4A7C15ull;
  return id == 0 ? 1 : id;
}

void trace_recorder::clear() {
  cleared_before_.store(next_sequence_.load(std::memory_order_acquire), std::memory_order_release);
  for (std::size_t i = 0; i < capacity_; ++i) {
    slot_guard guard(ring_[i]);
    ring_[i].filled = false;
  }
}

namespace {

std::int64_t read_system_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

#if defined(__x86_64__) || defined(__i386__)
constexpr bool has_tsc = true;
inline std::uint64_t read_tsc() {
  return __rdtsc();
}
#else
constexpr bool has_tsc = false;
inline std::uint64_t read_tsc() {
  return 0;
}
#endif

/// The system clock and the time stamp counter read together: the counter read just before and
/// just after the clock, so a reading the thread was preempted in (a wide pair) can be refused.
struct clock_pair {
  std::uint64_t tsc_before, tsc_after;
  std::int64_t us;
  std::uint64_t tsc() const { return tsc_before + (tsc_after - tsc_before) / 2; }
};

clock_pair read_pair() {
  clock_pair p;
  p.tsc_before = read_tsc();
  p.us = read_system_clock_us();
  p.tsc_after = read_tsc();
  return p;
}

/// Microseconds per counter tick, as a 32.32 fixed-point factor; 0 until calibrated. Calibrated
/// once, from two readings of the system clock and the counter at least 20 ms apart (the first
/// calls of the process read the system clock; a thread keeps reading it until then).
std::atomic<std::uint64_t> us_per_tick_q32{0};
std::atomic<std::uint64_t> calibration_tsc{0};
std::atomic<std::int64_t> calibration_us{0};

constexpr std::int64_t calibration_span_us = 20'000;
/// A thread re-reads the system clock (its anchor) when its last one is this old: between
/// anchors its time is the anchor's plus the ticks since, so the calibration's error (a few
/// parts per million) stays well under a microsecond, and a step of the system clock (NTP) shows
/// within a millisecond.
constexpr std::int64_t anchor_span_us = 1'000;
/// A reading whose counter pair spans more ticks than this was preempted: not used as an anchor.
constexpr std::uint64_t max_pair_ticks = 2'000;

/// Calibration's start point is a (counter, clock) pair one thread read: two atomics set by two
/// threads racing at start-up could pair one thread's counter with another's clock (a factor
/// 25% off for a 5 ms preemption, for the whole process). Calibration only runs in a process's
/// first 20 ms, so a lock costs nothing that matters.
std::mutex calibration_mutex;

void calibrate(const clock_pair& p) {
  if (p.tsc_after - p.tsc_before > max_pair_ticks)
    return;
  std::lock_guard lock(calibration_mutex);
  if (us_per_tick_q32.load(std::memory_order_relaxed) != 0)
    return;
  auto start_tsc = calibration_tsc.load(std::memory_order_acquire);
  if (start_tsc == 0) {
    calibration_us.store(p.us, std::memory_order_relaxed);
    std::uint64_t none = 0;
    calibration_tsc.compare_exchange_strong(none, p.tsc(), std::memory_order_release);
    return;
  }
  auto span_us = p.us - calibration_us.load(std::memory_order_relaxed);
  if (span_us < calibration_span_us || p.tsc() <= start_tsc) {
    if (span_us < 0 || p.tsc() <= start_tsc) // the clock stepped back: start again
      calibration_tsc.store(0, std::memory_order_release);
    return;
  }
  auto ticks = p.tsc() - start_tsc;
  auto factor = (static_cast<unsigned __int128>(span_us) << 32) / ticks;
  if (factor == 0 || factor > (std::uint64_t{1} << 32)) // < 1 tick per µs: not a usable counter
    return;
  std::uint64_t none = 0;
  us_per_tick_q32.compare_exchange_strong(none, static_cast<std::uint64_t>(factor),
                                          std::memory_order_release);
}

/// A thread's anchor: the system clock and the counter read together, and the last time given.
struct thread_anchor {
  std::uint64_t tsc = 0;
  std::int64_t us = 0;
  std::uint64_t span_ticks = 0; ///< anchor_span_us in ticks (0: no anchor yet)
  std::int64_t last_us = 0;
};

std::int64_t fast_now_us() {
  thread_local thread_anchor a;
  auto factor = us_per_tick_q32.load(std::memory_order_relaxed);
  auto now_tsc = read_tsc();
  if (factor != 0 && a.span_ticks != 0 && now_tsc - a.tsc < a.span_ticks) {
    auto us = a.us
      + static_cast<std::int64_t>((static_cast<unsigned __int128>(now_tsc - a.tsc) * factor) >> 32);
    // The calibration's error must not make a thread's time run back at its next anchor.
    a.last_us = std::max(a.last_us, us);
    return a.last_us;
  }
  auto p = read_pair();
  if (factor == 0) {
    calibrate(p);
    factor = us_per_tick_q32.load(std::memory_order_acquire);
  }
  if (factor != 0 && p.tsc_after - p.tsc_before <= max_pair_ticks) {
    a.tsc = p.tsc();
    a.us = p.us;
    a.span_ticks = (static_cast<std::uint64_t>(anchor_span_us) << 32) / factor;
  } else {
    a.span_ticks = 0; // keep reading the system clock
  }
  // A step back of the system clock (NTP) by less than the anchor span is held at the last
  // time given, so one thread's records never go back in time; a bigger step is taken as it is.
  if (p.us < a.last_us && a.last_us - p.us <= anchor_span_us)
    return a.last_us;
  a.last_us = p.us;
  return p.us;
}

} // namespace

namespace {

/// Whether the counter ticks at one rate on every core, in sync: the CPU says its counter is
/// invariant (CPUID 0x80000007 EDX bit 8) and the kernel still keeps time with it (it moves off
/// `tsc` when it finds the cores' counters apart). Otherwise a thread moved to another core could
/// jump by the cores' offset, and the system clock is read instead.
bool tsc_usable() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) == 0 || (edx & (1u << 8)) == 0)
    return false;
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return static_cast<bool>(source >> name) && name == "tsc";
#else
  return false;
#endif
}

} // namespace

std::int64_t system_now_us() {
  if constexpr (has_tsc) {
    static const bool usable = tsc_usable();
    if (usable)
      return fast_now_us();
  }
  return read_system_clock_us();
}

} // namespace flint::trace
