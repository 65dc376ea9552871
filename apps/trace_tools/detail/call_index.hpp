#pragma once
/// What both exports need to pair the records of one call (private to apps/trace_tools).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::trace::detail {

/// The endpoint on whose thread a record happened: the caller sends and gets responses, the
/// callee receives and replies (whose record names the callee as `from`).
inline const std::string& local_endpoint(const record& r) {
  return r.dir == direction::receive ? r.to : r.from;
}

/// Where each direction of a call sits in `records`, keyed by span id (0 means "not traced").
struct call_index {
  std::unordered_map<std::uint64_t, std::size_t> send, receive, reply, response;

  explicit call_index(std::span<const record> records) {
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      if (r.trace.span_id == 0)
        continue;
      auto& slot = r.dir == direction::send ? send
        : r.dir == direction::receive       ? receive
        : r.dir == direction::reply         ? reply
                                            : response;
      slot.emplace(r.trace.span_id, i); // the first wins if a span repeats
    }
  }

  static std::optional<std::size_t> find(const std::unordered_map<std::uint64_t, std::size_t>& m,
                                         const record& r) {
    if (r.trace.span_id == 0)
      return std::nullopt;
    auto it = m.find(r.trace.span_id);
    if (it == m.end())
      return std::nullopt;
    return it->second;
  }
};

} // namespace flint::trace::detail
