#pragma once
/// `state.backend.type: hashmap` (Flink's HashMapStateBackend): a subtask's keyed state on the
/// heap, one ordered map per (state, key group), snapshots in the full format of
/// `backend_entry_format.hpp`. A hash index over each map's keys serves get, put of an existing
/// key and remove with one probe; the order is what prefix listings and snapshots need.

#include "runtime/state/keyed_state_backend.hpp"

#include <map>
#include <string_view>
#include <unordered_map>

namespace flint::state {

class heap_keyed_state_backend final : public keyed_state_backend {
public:
  /// The backend of the subtask owning `key_groups`. Calls with a key group outside them, or a
  /// state number register_state did not give, are bugs (std::out_of_range).
  explicit heap_keyed_state_backend(key_group_range key_groups);

  std::uint32_t register_state(const std::string& name) override;
  bool get(std::uint32_t state, std::int32_t key_group, std::string_view key,
           std::string& value) override;
  void put(std::uint32_t state, std::int32_t key_group, std::string_view key,
           std::string_view value) override;
  void remove(std::uint32_t state, std::int32_t key_group, std::string_view key) override;
  /// `f` must not change this backend.
  void for_each(std::uint32_t state, std::int32_t key_group, std::string_view prefix,
                const std::function<void(std::string_view, std::string_view)>& f) override;

  /// Serializes the backend's own entries and the synchronous participants' now (one buffer
  /// per key group), so later writes do not reach the snapshot; participants that capture their
  /// state (capture_snapshot) are serialized by the upload, key group by key group.
  keyed_snapshot_upload snapshot(std::int64_t checkpoint_id) override;
  /// Full handles of either backend; an incremental RocksDB handle is errc::invalid_argument.
  expected<unit> restore(const std::vector<keyed_state_handle>& handles) override;

  bool add_snapshot_participant(snapshot_participant* p) override;
  void remove_snapshot_participant(snapshot_participant* p) override;

private:
  using entries = std::map<std::string, std::string, std::less<>>;
  /// One (state, key group): the entries in key order, and each entry by its key (the views
  /// point into the map's nodes, which do not move).
  struct key_group_entries {
    entries ordered;
    std::unordered_map<std::string_view, entries::iterator> by_key;
  };
  struct registered_state {
    std::string name;
    /// Index: key group - key_groups_.first.
    std::vector<key_group_entries> groups;
  };

  key_group_entries& group(std::uint32_t state, std::int32_t key_group);

  key_group_range key_groups_;
  std::vector<registered_state> states_;
  std::unordered_map<std::string, std::uint32_t> numbers_;
  std::vector<snapshot_participant*> participants_;
};

} // namespace flint::state
