#pragma once
/// An ask waiting for its answer: what recording and continuing need. gateway::ask makes one
/// per call (with the caller's typed continuation in a subclass, so one allocation holds both);
/// CAF's two answer handlers share it, and the asking endpoint keeps it until its deadline
/// (rpc_endpoint::expire_ask_after). Shared through pending_ref, counted without atomics.

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

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
  /// pending_ref's count.
  std::uint32_t refs = 0;
};

/// An owning handle on a pending_ask whose count is no atomic: every handle is made, copied and
/// dropped on the asking endpoint's thread (its two CAF answer handlers, its list of open asks,
/// its time-outs), or after the endpoint ended, when no other thread holds one. A shared_ptr's
/// atomic count cost five locked instructions an ask (make, two copies, their drops).
class pending_ref {
public:
  pending_ref() = default;
  explicit pending_ref(pending_ask* p) noexcept : p_(p) {
    if (p_ != nullptr)
      ++p_->refs;
  }
  pending_ref(const pending_ref& other) noexcept : pending_ref(other.p_) {}
  pending_ref(pending_ref&& other) noexcept : p_(other.p_) { other.p_ = nullptr; }
  pending_ref& operator=(pending_ref other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }
  ~pending_ref() {
    if (p_ != nullptr && --p_->refs == 0)
      delete p_;
  }

  pending_ask* get() const noexcept { return p_; }
  pending_ask& operator*() const noexcept { return *p_; }
  pending_ask* operator->() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  std::uint32_t use_count() const noexcept { return p_ != nullptr ? p_->refs : 0; }

private:
  pending_ask* p_ = nullptr;
};

/// A new T (a pending_ask) held by its first pending_ref.
template <class T, class... Args>
pending_ref make_pending(Args&&... args) {
  return pending_ref(new T(std::forward<Args>(args)...));
}

/// Fails `p` with errc::timeout (as an answer that did not come within `p.wait`) and records it.
void time_out(pending_ask& p);

} // namespace flint::rpc::detail
