// The SharedStateRegistry as a plain class: which files may go, in the interleavings a late
// completion notification makes.

#include <doctest/doctest.h>

#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "runtime/actors/job_master/checkpoint/shared_state_registry.hpp"
#include "runtime/state/state_handles.hpp"

namespace flint::job_master::checkpoint {

namespace {

struct recorder {
  std::vector<std::string> removed;
  std::function<void(const std::string&)> fn() {
    return [this](const std::string& f) { removed.push_back(f); };
  }
};

} // namespace

TEST_SUITE("shared state registry") {
  TEST_CASE("a file goes once no checkpoint uses it and every backend moved past its last user") {
    shared_state_registry r;
    recorder rm;
    r.register_checkpoint(1, {"A"});
    r.register_checkpoint(2, {"A", "B"});
    r.unregister_checkpoint({"A"}); // 1 subsumed
    CHECK(r.in_use("A"));
    CHECK(r.delete_unused(10, {}, rm.fn()).empty());
    r.register_checkpoint(3, {"B"});
    r.unregister_checkpoint({"A", "B"}); // 2 subsumed: A unused, last used by 2
    CHECK_FALSE(r.in_use("A"));
    CHECK(r.unused() == 1);
    // A backend of the latest checkpoint still reuses what checkpoint 2 held: A stays.
    CHECK(r.delete_unused(2, {}, rm.fn()).empty());
    // A pending checkpoint's acknowledged snapshot refers to it: it stays.
    CHECK(r.delete_unused(3, {"A"}, rm.fn()).empty());
    CHECK(r.delete_unused(3, {}, rm.fn()) == std::vector<std::string>{"A"});
    CHECK(rm.removed == std::vector<std::string>{"A"});
    CHECK(r.in_use("B"));
  }

  TEST_CASE("a late notification: N+1 reuses N-1's copy that N does not hold, and it survives") {
    // N-1 = 1 holds A. Snapshot 2 began before 1's completion reached the backend: it uploaded
    // the same SST again as B (base -1). Then 1's notification arrived; snapshot 3 reuses A
    // (base 1). 2's completion subsumes 1: A is unused, but the latest checkpoint's backends
    // may still reuse it.
    shared_state_registry r;
    recorder rm;
    r.register_checkpoint(1, {"A"});
    r.register_checkpoint(2, {"B"});
    r.unregister_checkpoint({"A"});
    state::checkpoint_metadata two;
    auto& handle = two.operators.emplace_back().subtasks.emplace_back().keyed.emplace_back();
    handle.incremental = true;
    handle.base_checkpoint_id = -1;
    CHECK(lowest_base_checkpoint(two) == -1);
    CHECK(r.delete_unused(lowest_base_checkpoint(two), {}, rm.fn()).empty());
    // 3 completes referring to A: A is in use again.
    r.register_checkpoint(3, {"A"});
    r.unregister_checkpoint({"B"});
    CHECK(r.in_use("A"));
    CHECK(r.delete_unused(1, {}, rm.fn()).empty()); // B: last used 2, a base of 1 may reuse it
    CHECK(r.delete_unused(3, {}, rm.fn()) == std::vector<std::string>{"B"});
    CHECK(rm.removed == std::vector<std::string>{"B"});
  }

  TEST_CASE("without incremental handles nothing reuses a file") {
    state::checkpoint_metadata m;
    m.operators.emplace_back().subtasks.emplace_back().keyed.emplace_back();
    CHECK(lowest_base_checkpoint(m) == std::numeric_limits<std::int64_t>::max());
  }
}

} // namespace flint::job_master::checkpoint
