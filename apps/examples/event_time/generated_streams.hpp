#pragma once
/// The generated inputs of the event-time examples (windowed_clicks, session_window,
/// interval_join): each record is a pure function of its index, so a job restored from a
/// checkpoint or a savepoint, at any parallelism, sees the very records it would have seen, and
/// its output can be checked against a run without failures.
///
/// Event time is the index's own (`ms_per_record` apart, from 0), displaced earlier by up to
/// `disorder_ms` (bounded out-of-orderness); at the default rates one second of event time passes
/// in about one second, so windows fire as they would on live data.

#include "api/api.hpp"
#include "api/data_generator_source.hpp"
#include "runtime/streaming/record_type.hpp"

#include <algorithm>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace flint::examples {

/// SplitMix64: a well-mixed 64-bit hash of the index (the examples' only randomness).
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct click {
  std::int64_t user = 0;
  std::int64_t at = 0;
  bool operator==(const click&) const = default;
};
FLINT_RECORD(click, user, at);

struct order {
  std::int64_t id = 0;
  std::int64_t user = 0;
  std::int64_t cents = 0;
  std::int64_t at = 0;
  bool operator==(const order&) const = default;
};
FLINT_RECORD(order, id, user, cents, at);

struct payment {
  std::int64_t id = 0;
  std::int64_t order_id = 0;
  std::int64_t cents = 0;
  std::int64_t at = 0;
  bool operator==(const payment&) const = default;
};
FLINT_RECORD(payment, id, order_id, cents, at);

/// `--name value` flags shared by the examples; each example reads the ones it knows.
struct example_flags {
  std::int64_t count = api::unbounded_count;
  double rate = -1; // -1: the example's default
  int splits = 1;
  std::string output;
  std::int64_t users = 10;
  std::int64_t disorder_ms = 300;
  std::int64_t bound_ms = 500;
  std::int64_t window_ms = 1000;
  std::int64_t lateness_ms = 1000;
  std::int64_t late_every = 97;
  std::int64_t late_by_ms = 2500;
  std::int64_t gap_ms = 500;
};

/// Parses `args`; an unknown flag throws with `usage`.
inline example_flags parse_example_flags(const std::vector<std::string>& args,
                                         const std::vector<std::string>& known,
                                         const std::string& usage) {
  example_flags f;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    bool is_known = false;
    for (const auto& k : known)
      is_known = is_known || k == a;
    if (!is_known || i + 1 >= args.size())
      throw std::invalid_argument("unexpected argument '" + a + "'; usage: " + usage);
    const auto& v = args[++i];
    auto number = [&] {
      try {
        return std::stoll(v);
      } catch (const std::exception&) {
        throw std::invalid_argument(a + " takes a number, not '" + v + "'");
      }
    };
    if (a == "--count") f.count = number();
    else if (a == "--rate") f.rate = static_cast<double>(number());
    else if (a == "--splits") f.splits = static_cast<int>(number());
    else if (a == "--output") f.output = v;
    else if (a == "--users") f.users = number();
    else if (a == "--disorder-ms") f.disorder_ms = number();
    else if (a == "--bound-ms") f.bound_ms = number();
    else if (a == "--window-ms") f.window_ms = number();
    else if (a == "--lateness-ms") f.lateness_ms = number();
    else if (a == "--late-every") f.late_every = number();
    else if (a == "--late-by-ms") f.late_by_ms = number();
    else if (a == "--gap-ms") f.gap_ms = number();
  }
  if (f.count < 0 || f.users <= 0 || f.disorder_ms < 0 || f.bound_ms < 0 || f.window_ms <= 0
      || f.lateness_ms < 0 || f.late_every < 0 || f.late_by_ms < 0 || f.gap_ms <= 0 || f.splits < 1)
    throw std::invalid_argument("flags must be positive (counts, sizes) or zero; usage: " + usage);
  return f;
}

/// The rate limit: `--rate 0` none, else the given or the example's default records per second
/// (the whole source's, Flink's RateLimiterStrategy.perSecond).
inline api::rate_limiter_strategy rate_of(const example_flags& f, double default_rate) {
  double r = f.rate < 0 ? default_rate : f.rate;
  return r == 0 ? api::rate_limiter_strategy::no_op() : api::rate_limiter_strategy::per_second(r);
}

/// Displacement of record `index` of stream `salt`: [0, disorder_ms).
inline std::int64_t jitter(std::uint64_t salt, std::int64_t index, std::int64_t disorder_ms) {
  if (disorder_ms == 0)
    return 0;
  return static_cast<std::int64_t>((mix(salt ^ static_cast<std::uint64_t>(index)) >> 11)
                                   % static_cast<std::uint64_t>(disorder_ms));
}

/// Click `i`: one per millisecond of event time, of a user picked by the hash; every
/// `late_every`-th arrives `late_by_ms` late (0: none).
inline click click_at(std::int64_t i, const example_flags& f) {
  auto h = mix(static_cast<std::uint64_t>(i));
  click c;
  c.user = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(f.users));
  c.at = i - jitter(1, i, f.disorder_ms);
  if (f.late_every > 0 && i % f.late_every == f.late_every - 1)
    c.at -= f.late_by_ms;
  if (c.at < 0)
    c.at = 0;
  return c;
}

/// Whether `user` is on line during second `slot` of event time (two seconds in three).
inline bool active_in(std::int64_t user, std::int64_t slot) {
  return mix(static_cast<std::uint64_t>(user) * 1000003ULL + static_cast<std::uint64_t>(slot)) % 3
    != 0;
}

/// Session click `i`: one per 2 ms of event time, by a user on line in that second (the hashed
/// user, or the next one on line), so each user's clicks come in sessions of whole seconds
/// separated by a second off line at least.
inline click session_click_at(std::int64_t i, const example_flags& f) {
  click c;
  std::int64_t t = 2 * i;
  std::int64_t slot = t / 1000;
  auto first = static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(i))
                                         % static_cast<std::uint64_t>(f.users));
  c.user = first;
  for (std::int64_t k = 0; k < f.users; ++k) {
    auto u = (first + k) % f.users;
    if (active_in(u, slot)) {
      c.user = u;
      break;
    }
  }
  c.at = std::max<std::int64_t>(0, t - jitter(2, i, f.disorder_ms));
  return c;
}

/// Order `i`: one per 10 ms of event time.
inline order order_at(std::int64_t i, const example_flags& f) {
  auto h = mix(static_cast<std::uint64_t>(i) ^ 0x0de5ULL);
  order o;
  o.id = i;
  o.user = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(f.users));
  o.cents = 100 + static_cast<std::int64_t>((h >> 20) % 9900);
  o.at = std::max<std::int64_t>(0, 10 * i - jitter(3, i, f.disorder_ms));
  return o;
}

/// Payment `j`: one per 10 ms of event time, paying the order placed up to 7 s before (orders
/// paid within the join's 5 s join; later ones and unpaid orders do not).
inline payment payment_at(std::int64_t j, const example_flags& f) {
  auto h = mix(static_cast<std::uint64_t>(j) ^ 0x9a7ULL);
  payment p;
  p.id = j;
  auto window = static_cast<std::uint64_t>(std::min<std::int64_t>(700, j + 1));
  p.order_id = j - static_cast<std::int64_t>(h % window);
  p.cents = order_at(p.order_id, f).cents;
  p.at = std::max<std::int64_t>(0, 10 * j - jitter(4, j, f.disorder_ms));
  return p;
}

/// "[start,end)" of a window in event-time milliseconds.
inline std::string window_text(std::int64_t start, std::int64_t end) {
  return "[" + std::to_string(start) + "," + std::to_string(end) + ")";
}

} // namespace flint::examples
