#pragma once
// Trace records as one node writes them, for the trace tools' tests.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::trace_test {

/// Builds the records one node writes for a cluster in one process (the MiniCluster), with a
/// clock that advances 10 us per record.
class trace_builder {
public:
  std::vector<trace::record> records;

  /// All four records of an ask: send, receive, reply, response.
  void ask(const std::string& from, const std::string& to, const std::string& method,
           trace::outcome result = trace::outcome::ok, const std::string& detail = {}) {
    auto span = ++span_;
    auto sent = push(trace::direction::send, from, to, method, true, span);
    auto received = push(trace::direction::receive, from, to, method, true, span);
    auto& reply = push(trace::direction::reply, to, from, method, true, span);
    reply.result = result;
    reply.detail = detail;
    reply.latency_us = reply.time_us - received.time_us;
    auto& response = push(trace::direction::response, from, to, method, true, span);
    response.result = result;
    response.detail = detail;
    response.latency_us = response.time_us - sent.time_us;
  }

  /// A tell: send and receive.
  void tell(const std::string& from, const std::string& to, const std::string& method,
            trace::outcome received_as = trace::outcome::ok) {
    auto span = ++span_;
    push(trace::direction::send, from, to, method, false, span);
    push(trace::direction::receive, from, to, method, false, span).result = received_as;
  }

private:
  trace::record& push(trace::direction d, const std::string& from, const std::string& to,
                      const std::string& method, bool is_ask, std::uint64_t span) {
    trace::record r;
    r.time_us = now_ += 10;
    r.dir = d;
    r.from = from;
    r.to = to;
    r.method = method;
    r.token = {0x1111222233334444ull, 0x5555666677778888ull};
    r.trace = {7, span, 0};
    r.is_ask = is_ask;
    r.bytes = 40 + static_cast<std::uint32_t>(records.size());
    r.sequence = records.size();
    records.push_back(r);
    return records.back();
  }

  std::int64_t now_ = 1'700'000'000'000'000;
  std::uint64_t span_ = 0x100;
};

inline const std::string job = "job_master/4f1d2c3b";
inline const std::string pool = "slot_pool/4f1d2c3b";
inline const std::string rm = "resource_manager";
inline const std::string te = "task_executor/tm-1";

/// The slot protocol of §6.1: a TaskExecutor registers and reports its slots, a JobMaster
/// registers, its SlotPool requests a slot, the ResourceManager asks the TaskExecutor for it,
/// which offers it to the JobMaster, which deploys a task into it.
trace_builder slot_protocol_trace();

inline const std::vector<std::string> slot_protocol_methods = {
  "register_task_executor", "send_slot_report",      "register_job_manager", "request_slot",
  "request_slot",           "register_task_manager", "offer_slots",          "submit_task"};

} // namespace flint::trace_test
