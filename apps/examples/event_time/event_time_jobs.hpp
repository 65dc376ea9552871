#pragma once
/// The event-time examples as reusable pipelines, so the job libraries
/// (build/jobs/windowed_clicks.so, session_window.so, interval_join.so), the `event_time_example`
/// program and every process that rebuilds a job build exactly the same graph. Each reads the
/// flags it knows (`<name>_flags`, std::invalid_argument with its usage on anything else) and
/// adds its pipeline to an environment (`build_<name>`). All run until cancelled unless --count
/// bounds their generated input; --rate sets its records per second in all (0: unlimited);
/// --output DIR writes text files under DIR (an exactly-once file sink when the job
/// checkpoints) instead of printing.

#include "apps/examples/event_time/generated_streams.hpp"

#include <string>
#include <vector>

namespace flint::examples {

/// Clicks per user per tumbling event-time window over a generated, out-of-order click stream:
/// one click a millisecond of event time, displaced by up to --disorder-ms (300), every
/// --late-every-th (97) click --late-by-ms (2500) late; watermarks --bound-ms (500) behind;
/// windows of --window-ms (1000) take clicks --lateness-ms (1000) after their end (firing again,
/// marked "late firing"), and later clicks go to a side output. Prints
/// `user-3 [12000,13000) clicks=97` and `late user-3 at 9512`, or writes DIR/counts and
/// DIR/late. Default rate 1000 a second (about real time).
example_flags windowed_clicks_flags(const std::vector<std::string>& args);
void build_windowed_clicks(api::stream_execution_environment& env, const example_flags& flags);
inline constexpr const char* windowed_clicks_job_name = "Windowed Clicks";

/// Each user's event-time sessions (gap --gap-ms, 500): a click every 2 ms of event time by a
/// user on line in that second (each is on line two seconds in three), displaced by up to
/// --disorder-ms, watermarks --bound-ms behind. Prints `user-3 session [12000,15998)
/// clicks=412`, or writes DIR/sessions. Default rate 500 a second (about real time).
example_flags session_window_flags(const std::vector<std::string>& args);
void build_session_window(api::stream_execution_environment& env, const example_flags& flags);
inline constexpr const char* session_window_job_name = "Session Windows";

/// Orders joined with their payments: two generated streams, an order and a payment every 10 ms
/// of event time, a payment paying an order placed up to 7 s before it; keyed by order id, an
/// interval join between(0, 5 s) pairs them. Prints `order 1234 user-4 25.31 paid by payment
/// 1402 after 1680 ms`, or writes DIR/paid. Default rate 100 a second per stream (about real
/// time).
example_flags interval_join_flags(const std::vector<std::string>& args);
void build_interval_join(api::stream_execution_environment& env, const example_flags& flags);
inline constexpr const char* interval_join_job_name = "Interval Join";

} // namespace flint::examples
