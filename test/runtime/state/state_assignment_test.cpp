#include "runtime/state/state_assignment.hpp"

#include "runtime/state/key_group_range.hpp"
#include "runtime/state/keyed_state_files.hpp"
#include "runtime/state/operator_snapshot.hpp"

#include "test/runtime/state/state_test_util.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace flint;
using namespace flint::state;
using flint::state::test::bytes;
using flint::state::test::op_id;
using flint::state::test::text;

namespace {

constexpr int max_parallelism = 16;
const graph::operator_id keyed_op = op_id(1); // keyed and list state
const graph::operator_id list_op = op_id(2); // list state only

/// Keyed state of subtask `index` of `parallelism`: key group g holds "g<g>".
keyed_state_handle keyed_state_of(int parallelism, int index) {
  auto range = key_group_range_for_operator(max_parallelism, parallelism, index);
  std::vector<std::vector<char>> groups;
  for (int g = range.first; g <= range.last; ++g)
    groups.push_back(bytes("g" + std::to_string(g)));
  auto handle = write_keyed_state("", range.first, groups);
  REQUIRE(handle);
  return *handle;
}

/// A checkpoint of the chain [keyed_op, list_op] at `parallelism`, with `entries[i]` list entries
/// of subtask i ("e0", "e1", ... numbered across subtasks).
checkpoint_metadata checkpoint_of(int parallelism, const std::vector<int>& entries,
                                  std::vector<bool> finished) {
  checkpoint_metadata m;
  m.checkpoint_id = 17;
  operator_state keyed{keyed_op, "keyed-uid", parallelism, max_parallelism, {}, finished};
  operator_state list{list_op, std::nullopt, parallelism, max_parallelism, {}, finished};
  int next = 0;
  for (int i = 0; i < parallelism; ++i) {
    operator_subtask_state k{keyed_op, {keyed_state_of(parallelism, i)}, {}};
    operator_subtask_state l{list_op, {}, {}};
    for (int e = 0; e < entries[i]; ++e) {
      auto entry = bytes("e" + std::to_string(next++));
      k.list_entries.push_back(entry);
      l.list_entries.push_back(entry);
    }
    keyed.subtasks.push_back(k);
    list.subtasks.push_back(l);
  }
  m.operators = {keyed, list};
  return m;
}

vertex_operators chain(int parallelism) {
  return {{keyed_op, list_op}, {"keyed-uid", std::nullopt}, parallelism, max_parallelism};
}

std::vector<std::string> entries_of(const operator_subtask_state& s) {
  std::vector<std::string> out;
  for (const auto& e : s.list_entries)
    out.push_back(text(e));
  return out;
}

/// Reads the new subtask's key groups as its task would: its range, through every handle.
std::map<int, std::string> key_groups_of(const task_restore& restore, int parallelism, int index) {
  auto range = key_group_range_for_operator(max_parallelism, parallelism, index);
  operator_state_restore op(restore.state.operators[0], restore.state.finished, true);
  std::map<int, std::string> out;
  auto read =
    op.for_each_key_group(range.first, range.last, [&](std::int32_t g, std::span<const char> b) {
      CHECK(out.count(g) == 0);
      out[g] = text(b);
    });
  REQUIRE(read);
  return out;
}

/// Every key group of the new ranges is read exactly once and holds what was written, and each
/// new subtask got exactly the old handles that intersect its range.
void check_keyed_rescaling(const checkpoint_metadata& old,
                           const std::vector<task_restore>& restores, int new_parallelism) {
  const auto& old_state = *old.find(keyed_op);
  int covered = 0;
  for (int i = 0; i < new_parallelism; ++i) {
    auto range = key_group_range_for_operator(max_parallelism, new_parallelism, i);
    std::vector<keyed_state_handle> intersecting;
    for (const auto& subtask : old_state.subtasks)
      for (const auto& h : subtask.keyed)
        if (!range.intersect({h.first_key_group, h.last_key_group}).empty())
          intersecting.push_back(h);
    CHECK(restores[i].state.operators[0].keyed == intersecting);
    auto groups = key_groups_of(restores[i], new_parallelism, i);
    CHECK(static_cast<int>(groups.size()) == range.size());
    for (auto& [g, b] : groups) {
      CHECK(range.contains(g));
      CHECK(b == "g" + std::to_string(g));
    }
    covered += static_cast<int>(groups.size());
  }
  CHECK(covered == max_parallelism);
}

} // namespace

TEST_CASE("at the same parallelism every subtask gets back exactly its own state") {
  auto old = checkpoint_of(2, {3, 2}, {false, false});
  auto restores = assign_states(old, chain(2));
  REQUIRE(restores);
  REQUIRE(restores->size() == 2);
  for (int i = 0; i < 2; ++i) {
    const auto& r = (*restores)[i];
    CHECK(r.checkpoint_id == 17);
    REQUIRE(r.state.operators.size() == 2);
    CHECK(r.state.operators[0].operator_id == keyed_op);
    CHECK(r.state.operators[1].operator_id == list_op);
    CHECK(r.state.operators[0] == old.operators[0].subtasks[i]);
    CHECK(r.state.operators[1] == old.operators[1].subtasks[i]);
    CHECK_FALSE(r.state.finished);
  }
  check_keyed_rescaling(old, *restores, 2);
}

TEST_CASE("rescaling from 2 to 3 splits key groups by range and deals list entries round robin") {
  auto old = checkpoint_of(2, {3, 2}, {false, false});
  auto restores = assign_states(old, chain(3));
  REQUIRE(restores);
  REQUIRE(restores->size() == 3);
  check_keyed_rescaling(old, *restores, 3);
  // Old ranges [0,7] [8,15]; new [0,5] [6,10] [11,15]: the middle one needs both old handles.
  CHECK((*restores)[0].state.operators[0].keyed.size() == 1);
  CHECK((*restores)[1].state.operators[0].keyed.size() == 2);
  CHECK((*restores)[2].state.operators[0].keyed.size() == 1);
  for (int o = 0; o < 2; ++o) {
    CHECK(entries_of((*restores)[0].state.operators[o]) == std::vector<std::string>{"e0", "e3"});
    CHECK(entries_of((*restores)[1].state.operators[o]) == std::vector<std::string>{"e1", "e4"});
    CHECK(entries_of((*restores)[2].state.operators[o]) == std::vector<std::string>{"e2"});
  }
  CHECK((*restores)[1].state.operators[1].keyed.empty());
}

TEST_CASE("rescaling from 3 to 2 loses no key group and no list entry") {
  auto old = checkpoint_of(3, {1, 0, 4}, {false, false, false});
  auto restores = assign_states(old, chain(2));
  REQUIRE(restores);
  REQUIRE(restores->size() == 2);
  check_keyed_rescaling(old, *restores, 2);
  // Old ranges [0,5] [6,10] [11,15]; new [0,7] [8,15].
  CHECK((*restores)[0].state.operators[0].keyed.size() == 2);
  CHECK((*restores)[1].state.operators[0].keyed.size() == 2);
  CHECK(entries_of((*restores)[0].state.operators[0])
        == std::vector<std::string>{"e0", "e2", "e4"});
  CHECK(entries_of((*restores)[1].state.operators[0]) == std::vector<std::string>{"e1", "e3"});
}

TEST_CASE("finished flags follow the old subtask, or all old subtasks after rescaling") {
  auto partly = checkpoint_of(2, {0, 0}, {true, false});
  auto same = assign_states(partly, chain(2));
  REQUIRE(same);
  CHECK((*same)[0].state.finished);
  CHECK_FALSE((*same)[1].state.finished);

  auto rescaled = assign_states(partly, chain(3));
  REQUIRE(rescaled);
  for (const auto& r : *rescaled)
    CHECK_FALSE(r.state.finished);

  auto all = checkpoint_of(2, {0, 0}, {true, true});
  auto all_rescaled = assign_states(all, chain(3));
  REQUIRE(all_rescaled);
  for (const auto& r : *all_rescaled)
    CHECK(r.state.finished);
}

TEST_CASE("operators the checkpoint does not know start empty, in chain order") {
  auto old = checkpoint_of(2, {1, 1}, {false, false});
  auto new_op = op_id(3);
  vertex_operators vertex{{new_op, keyed_op}, {}, 2, max_parallelism};
  auto restores = assign_states(old, vertex);
  REQUIRE(restores);
  for (int i = 0; i < 2; ++i) {
    const auto& ops = (*restores)[i].state.operators;
    REQUIRE(ops.size() == 2);
    CHECK(ops[0] == operator_subtask_state{new_op, {}, {}});
    CHECK(ops[1] == old.operators[0].subtasks[i]);
  }

  auto nothing = assign_states(checkpoint_metadata{}, chain(2));
  REQUIRE(nothing);
  REQUIRE(nothing->size() == 2);
  CHECK((*nothing)[1].state.operators[0].empty());
  CHECK_FALSE((*nothing)[1].state.finished);
}

TEST_CASE("keyed state of another max parallelism cannot be restored") {
  auto old = checkpoint_of(2, {1, 1}, {false, false});
  auto vertex = chain(2);
  vertex.max_parallelism = 256;
  auto refused = assign_states(old, vertex);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message
        == "Cannot restore operator keyed-uid: max parallelism 256 of the job differs from 16 "
           "in the checkpoint");

  vertex.uids.clear();
  auto by_id = assign_states(old, vertex);
  REQUIRE_FALSE(by_id);
  CHECK(by_id.error().message
        == "Cannot restore operator keyed-uid: max parallelism 256 of the job differs from 16 "
           "in the checkpoint"); // the checkpoint knows the uid
  old.operators[0].uid.reset();
  auto no_uid = assign_states(old, vertex);
  REQUIRE_FALSE(no_uid);
  CHECK(no_uid.error().message
        == "Cannot restore operator " + keyed_op.to_string()
          + ": max parallelism 256 of the job differs from 16 in the checkpoint");

  // List state alone does not depend on the max parallelism.
  vertex_operators list_only{{list_op}, {}, 3, 256};
  CHECK(assign_states(old, list_only));
}

TEST_CASE("check_state_matched refuses state of operators the new program lacks") {
  auto old = checkpoint_of(2, {1, 1}, {false, false});
  const std::string path = "/ckp/job/chk-17";
  CHECK(check_state_matched(old, {keyed_op, list_op}, false, path));
  CHECK(check_state_matched(old, {list_op, keyed_op, op_id(9)}, false, path));

  auto missing_keyed = check_state_matched(old, {list_op}, false, path);
  REQUIRE_FALSE(missing_keyed);
  CHECK(missing_keyed.error().message
        == "Failed to rollback to checkpoint/savepoint /ckp/job/chk-17. Cannot map "
           "checkpoint/savepoint state for operator "
          + keyed_op.to_string()
          + " (uid keyed-uid) to the new program, because the operator is not available in the "
            "new program. If you want to allow to skip this, you can set the "
            "--allowNonRestoredState option on the CLI.");
  auto missing_list = check_state_matched(old, {keyed_op}, false, path);
  REQUIRE_FALSE(missing_list);
  CHECK(missing_list.error().message.find("for operator " + list_op.to_string() + " to the new")
        != std::string::npos);

  CHECK(check_state_matched(old, {}, true, path));

  // An operator without any state in the checkpoint never fails the check.
  checkpoint_metadata stateless;
  stateless.operators.push_back({op_id(5), "map", 2, 128, {{op_id(5), {}, {}}}, {false, false}});
  CHECK(check_state_matched(stateless, {}, false, path));
}
