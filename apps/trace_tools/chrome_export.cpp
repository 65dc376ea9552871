#include "apps/trace_tools/chrome_export.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/trace_tools/detail/call_index.hpp"
#include "apps/trace_tools/trace_filter.hpp"

namespace flint::trace {

namespace {

using detail::call_index;
using detail::local_endpoint;

std::string hex_id(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// One slice of the Chrome export before it is placed on a thread: an ask's span or a tell.
struct chrome_slice {
  std::string endpoint;
  std::int64_t begin_us = 0;
  std::int64_t end_us = 0;
  nlohmann::json event; // without pid, tid and ts
  std::vector<nlohmann::json> flows; // flow ends bound to this slice, same time
};

/// Threads of the export. Asks of one endpoint overlap without nesting (a JobMaster deploys to
/// four slots at once; a handler replies before the call it made is answered), and viewers drop
/// or mangle slices that are not nested on a thread. So each endpoint gets as many lanes
/// (threads) as its overlaps need: a slice goes on the first lane where it nests.
class chrome_threads {
public:
  explicit chrome_threads(nlohmann::json& metadata) : metadata_(metadata) {}

  /// Slices must come in order of begin (and, for equal begins, longer first).
  std::pair<int, int> place(const std::string& endpoint, std::int64_t begin_us,
                            std::int64_t end_us) {
    auto& lanes = endpoint_lanes(endpoint);
    for (auto& l : lanes) {
      // What ended before this begins is closed; an end equal to the begin may still count as
      // open to a viewer, so it is not closed here.
      while (!l.open_ends.empty() && l.open_ends.back() < begin_us)
        l.open_ends.pop_back();
      if (l.open_ends.empty() || l.open_ends.back() >= end_us) {
        l.open_ends.push_back(end_us);
        return {l.pid, l.tid};
      }
    }
    auto& l = add_lane(endpoint, lanes);
    l.open_ends.push_back(end_us);
    return {l.pid, l.tid};
  }

private:
  struct lane {
    int pid = 0;
    int tid = 0;
    std::vector<std::int64_t> open_ends; // a stack: innermost last
  };

  std::vector<lane>& endpoint_lanes(const std::string& endpoint) {
    auto it = lanes_.find(endpoint);
    if (it != lanes_.end())
      return it->second;
    auto& lanes = lanes_[endpoint];
    order_.emplace(endpoint, static_cast<int>(order_.size()) + 1);
    add_lane(endpoint, lanes);
    return lanes;
  }

  lane& add_lane(const std::string& endpoint, std::vector<lane>& lanes) {
    using nlohmann::json;
    auto node = node_of(endpoint);
    auto [pit, fresh] = pids_.emplace(node, static_cast<int>(pids_.size()) + 1);
    if (fresh) {
      metadata_.push_back({{"ph", "M"},
                           {"name", "process_name"},
                           {"pid", pit->second},
                           {"tid", 0},
                           {"args", {{"name", node}}}});
      metadata_.push_back({{"ph", "M"},
                           {"name", "process_sort_index"},
                           {"pid", pit->second},
                           {"tid", 0},
                           {"args", {{"sort_index", pit->second}}}});
    }
    lane l{pit->second, ++last_tid_, {}};
    auto name = lanes.empty() ? endpoint : endpoint + " (" + std::to_string(lanes.size() + 1) + ")";
    metadata_.push_back({{"ph", "M"},
                         {"name", "thread_name"},
                         {"pid", l.pid},
                         {"tid", l.tid},
                         {"args", {{"name", name}}}});
    // Lanes of one endpoint stay together, endpoints in order of first appearance.
    metadata_.push_back(
      {{"ph", "M"},
       {"name", "thread_sort_index"},
       {"pid", l.pid},
       {"tid", l.tid},
       {"args", {{"sort_index", order_.at(endpoint) * 1000 + static_cast<int>(lanes.size())}}}});
    lanes.push_back(l);
    return lanes.back();
  }

  nlohmann::json& metadata_;
  std::map<std::string, int> pids_;
  std::map<std::string, int> order_;
  std::map<std::string, std::vector<lane>> lanes_;
  int last_tid_ = 0;
};

} // namespace

std::string export_chrome(std::span<const record> records) {
  using nlohmann::json;
  std::int64_t t0 = 0;
  if (!records.empty())
    t0 = std::min_element(records.begin(), records.end(), [](const auto& a, const auto& b) {
           return a.time_us < b.time_us;
         })->time_us;

  auto args_of = [](const record& r) {
    json a = {{"from", r.from},
              {"to", r.to},
              {"token", r.token.to_string()},
              {"bytes", r.bytes},
              {"outcome", to_string(r.result)},
              {"trace_id", hex_id(r.trace.trace_id)},
              {"span_id", hex_id(r.trace.span_id)},
              {"parent_span_id", hex_id(r.trace.parent_span_id)},
              {"seq", r.sequence}};
    if (!r.detail.empty())
      a["detail"] = r.detail;
    if (r.latency_us >= 0)
      a["latency_us"] = r.latency_us;
    return a;
  };

  call_index calls(records);
  std::vector<chrome_slice> slices;
  // The arrow from a send to its receipt, keyed by span id; each end is written right after the
  // slice it binds to (the one open on its thread then), as viewers read events in order.
  auto add_flows = [&](chrome_slice& slice, const record& r) {
    if (r.dir == direction::send && call_index::find(calls.receive, r))
      slice.flows.push_back(
        {{"ph", "s"}, {"name", r.method}, {"cat", "flow"}, {"id", hex_id(r.trace.span_id)}});
    if (r.dir == direction::receive && call_index::find(calls.send, r))
      slice.flows.push_back({{"ph", "f"},
                             {"bp", "e"},
                             {"name", r.method},
                             {"cat", "flow"},
                             {"id", hex_id(r.trace.span_id)}});
  };
  // A complete event for one side of an ask: `start` opens it, `end` (when recorded) closes it
  // and supplies the outcome; without `start`, the latency says when it began.
  auto ask_span = [&](const record* start, const record* end, const char* side) {
    const record& any = start != nullptr ? *start : *end;
    chrome_slice slice;
    slice.endpoint = local_endpoint(any);
    slice.begin_us =
      start != nullptr ? start->time_us : end->time_us - std::max<std::int64_t>(0, end->latency_us);
    slice.end_us = std::max(slice.begin_us, end != nullptr ? end->time_us : slice.begin_us);
    json a = args_of(end != nullptr ? *end : *start);
    a["side"] = side;
    // A reply names the callee as its sender; the span always reads caller to callee.
    a["from"] = any.dir == direction::reply ? any.to : any.from;
    a["to"] = any.dir == direction::reply ? any.from : any.to;
    if (start != nullptr)
      a["request_bytes"] = start->bytes;
    if (end != nullptr)
      a["answer_bytes"] = end->bytes;
    else
      a["answer"] = "not recorded";
    // A call refused before it was answered keeps that outcome even without an answer record.
    if (start != nullptr && start->result != outcome::ok
        && (end == nullptr || end->result == outcome::ok))
      a["outcome"] = to_string(start->result);
    slice.event = {{"ph", "X"},
                   {"name", any.method},
                   {"cat", "ask"},
                   {"dur", slice.end_us - slice.begin_us},
                   {"args", a}};
    if (start != nullptr)
      add_flows(slice, *start);
    slices.push_back(std::move(slice));
  };

  for (const auto& r : records) {
    if (!r.is_ask) {
      if (r.dir != direction::send && r.dir != direction::receive)
        continue; // tells have no answers; tolerate odd input
      chrome_slice slice;
      slice.endpoint = local_endpoint(r);
      slice.begin_us = slice.end_us = r.time_us;
      json a = args_of(r);
      a["side"] = r.dir == direction::send ? "caller" : "callee";
      slice.event = {{"ph", "i"}, {"s", "t"}, {"name", r.method}, {"cat", "tell"}, {"args", a}};
      add_flows(slice, r);
      slices.push_back(std::move(slice));
      continue;
    }
    switch (r.dir) {
      case direction::send: {
        auto resp = call_index::find(calls.response, r);
        ask_span(&r, resp ? &records[*resp] : nullptr, "caller");
        break;
      }
      case direction::response:
        if (!call_index::find(calls.send, r))
          ask_span(nullptr, &r, "caller");
        break;
      case direction::receive: {
        auto rep = call_index::find(calls.reply, r);
        ask_span(&r, rep ? &records[*rep] : nullptr, "callee");
        break;
      }
      case direction::reply:
        if (!call_index::find(calls.receive, r))
          ask_span(nullptr, &r, "callee");
        break;
    }
  }

  // By begin, enclosing slices before what they enclose; record order breaks ties.
  std::stable_sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) {
    if (a.begin_us != b.begin_us)
      return a.begin_us < b.begin_us;
    return a.end_us > b.end_us;
  });
  json metadata = json::array();
  json timed = json::array();
  chrome_threads threads(metadata);
  for (auto& slice : slices) {
    auto [pid, tid] = threads.place(slice.endpoint, slice.begin_us, slice.end_us);
    auto place = [&](json& e) {
      e["pid"] = pid;
      e["tid"] = tid;
      e["ts"] = slice.begin_us - t0;
      timed.push_back(std::move(e));
    };
    place(slice.event);
    for (auto& flow : slice.flows)
      place(flow);
  }
  json all = std::move(metadata);
  for (auto& e : timed)
    all.push_back(std::move(e));
  json doc = {{"traceEvents", std::move(all)}, {"displayTimeUnit", "ms"}};
  // Endpoint ids and error texts are bytes as recorded; replace what is not UTF-8.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace flint::trace
