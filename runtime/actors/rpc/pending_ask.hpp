#pragma once
/// An ask waiting for its answer: what recording and continuing need. gateway::ask makes one
/// per call (with the caller's typed continuation in a subclass, so one allocation holds both);
/// CAF's two answer handlers share it, and the asking endpoint keeps it until its deadline
/// (rpc_endpoint::expire_ask_after).

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/envelope/fencing_token.hpp"
#include "runtime/actors/trace/trace_names.hpp"
#include "runtime/common/expected.hpp"

namespace flint::trace {
class trace_recorder;
}

namespace flint::rpc::detail {

struct pending_ask {
  virtual ~pending_ask() = default;
  /// Runs the caller's continuation with a view of the reply bytes, valid while it runs.
  virtual void complete(expected<std::span<const char>> reply) = 0;

  trace::trace_recorder* rec = nullptr;
  /// Who asks whom for what: interned names, or (id 0) the text.
  trace::name_id sender_name = 0;
  trace::name_id target_name = 0;
  trace::name_id method_name = 0;
  std::string sender;
  std::string target;
  const char* method = "";
  fencing_token token;
  trace_context trace;
  std::int64_t sent_us = 0;
  std::chrono::nanoseconds wait{};
  /// Set when its answer (or CAF's error for it) arrived: the asking endpoint's list of open asks
  /// drops it without asking CAF.
  bool answered = false;
};

/// Fails `p` with errc::timeout (as an answer that did not come within `p.wait`) and records it.
void time_out(pending_ask& p);

} // namespace flint::rpc::detail
