#include "runtime/state/state_assignment.hpp"

#include "runtime/state/key_group_range.hpp"

#include <algorithm>
#include <unordered_set>

namespace flint::state {

namespace {

std::string operator_name(const graph::operator_id& id, const std::optional<std::string>& uid) {
  return uid ? *uid : id.to_string();
}

key_group_range range_of(const keyed_state_handle& handle) {
  return {handle.first_key_group, handle.last_key_group};
}

/// The state of one operator for subtask `index` of `parallelism`.
operator_subtask_state assign_operator(const operator_state& old, const graph::operator_id& id,
                                       int parallelism, int max_parallelism, int index) {
  operator_subtask_state out;
  out.operator_id = id;
  auto range = key_group_range_for_operator(max_parallelism, parallelism, index);
  for (const auto& subtask : old.subtasks)
    for (const auto& handle : subtask.keyed)
      if (!range_of(handle).intersect(range).empty())
        out.keyed.push_back(handle);
  if (old.parallelism == parallelism) {
    if (static_cast<std::size_t>(index) < old.subtasks.size())
      out.list_entries = old.subtasks[index].list_entries;
    return out;
  }
  std::size_t k = 0;
  for (const auto& subtask : old.subtasks)
    for (const auto& entry : subtask.list_entries)
      if (k++ % parallelism == static_cast<std::size_t>(index))
        out.list_entries.push_back(entry);
  return out;
}

} // namespace

expected<std::vector<task_restore>> assign_states(const checkpoint_metadata& metadata,
                                                  const vertex_operators& vertex) {
  auto p = vertex.parallelism;
  auto mp = vertex.max_parallelism;
  if (vertex.operators.empty() || p < 1 || mp < p
      || (!vertex.uids.empty() && vertex.uids.size() != vertex.operators.size()))
    return make_error(errc::invalid_argument,
                      "Cannot assign state to a vertex of "
                        + std::to_string(vertex.operators.size()) + " operators, "
                        + std::to_string(vertex.uids.size()) + " uids, parallelism "
                        + std::to_string(p) + " and max parallelism " + std::to_string(mp));

  std::vector<const operator_state*> old(vertex.operators.size());
  for (std::size_t o = 0; o < vertex.operators.size(); ++o) {
    old[o] = metadata.find(vertex.operators[o]);
    if (old[o] == nullptr || !old[o]->has_keyed_state() || old[o]->max_parallelism == mp)
      continue;
    auto uid = vertex.uids.empty() ? old[o]->uid : vertex.uids[o];
    return make_error(errc::invalid_argument,
                      "Cannot restore operator " + operator_name(vertex.operators[o], uid)
                        + ": max parallelism " + std::to_string(mp) + " of the job differs from "
                        + std::to_string(old[o]->max_parallelism) + " in the checkpoint");
  }
  // Every operator of a chain records the same finished flags; the head speaks for it (or the
  // first operator the checkpoint knows, when the head is new).
  auto finished_source = std::find_if(old.begin(), old.end(), [](auto* op) { return op; });
  const operator_state* flags = finished_source == old.end() ? nullptr : *finished_source;

  std::vector<task_restore> out(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    auto& restore = out[i];
    restore.checkpoint_id = metadata.checkpoint_id;
    for (std::size_t o = 0; o < vertex.operators.size(); ++o) {
      if (old[o] == nullptr) {
        restore.state.operators.push_back(operator_subtask_state{vertex.operators[o], {}, {}});
        continue;
      }
      restore.state.operators.push_back(assign_operator(*old[o], vertex.operators[o], p, mp, i));
    }
    if (flags == nullptr)
      restore.state.finished = false;
    else if (flags->parallelism == p)
      restore.state.finished = static_cast<std::size_t>(i) < flags->finished.size()
        && flags->finished[static_cast<std::size_t>(i)];
    else
      restore.state.finished = flags->fully_finished();
  }
  return out;
}

expected<unit> check_state_matched(const checkpoint_metadata& metadata,
                                   const std::vector<graph::operator_id>& job_operators,
                                   bool allow_non_restored_state,
                                   const std::string& checkpoint_path) {
  if (allow_non_restored_state)
    return unit{};
  std::unordered_set<graph::operator_id> known(job_operators.begin(), job_operators.end());
  for (const auto& op : metadata.operators) {
    if (!op.has_state() || known.contains(op.operator_id))
      continue;
    auto name = op.operator_id.to_string();
    if (op.uid)
      name += " (uid " + *op.uid + ")";
    return make_error(errc::illegal_state,
                      "Failed to rollback to checkpoint/savepoint " + checkpoint_path
                        + ". Cannot map checkpoint/savepoint state for operator " + name
                        + " to the new program, because the operator is not available in the "
                          "new program. If you want to allow to skip this, you can set the "
                          "--allowNonRestoredState option on the CLI.");
  }
  return unit{};
}

} // namespace flint::state
