#pragma once
/// The keyed fold behind reduce and sum (Flink's StreamGroupedReduce).

#include "runtime/streaming/key_groups.hpp"
#include "runtime/streaming/keyed_backend_holder.hpp"
#include "runtime/streaming/keyed_state.hpp"
#include "runtime/streaming/operator_api.hpp"

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace flint::streaming {

/// How a keyed operator finds a record's key: a field read in place (`key_by<N>` under a fold
/// that never changes that field: state then holds the values alone, keyed by the field) or the
/// user's selector (returns the key by value; state holds key and value).
template <class T, class K>
struct key_extractor {
  std::function<K(const T&)> select;
  const K& (*field)(const T&) = nullptr;
};

/// A key that is tuple field `I` of the record (`key_by<I>`), read in place by a call the
/// compiler sees through (`KeyField` of keyed_reduce_operator).
template <std::size_t I>
struct tuple_key_field {
  template <class T>
  const auto& operator()(const T& value) const noexcept {
    return std::get<I>(value);
  }
};

/// `sum<I>`'s fold: adds tuple field `I` of the next record to the accumulated one, in place
/// (`Fold` of keyed_reduce_operator).
template <std::size_t I>
struct tuple_field_sum {
  template <class T>
  void operator()(T& acc, const T& next) const {
    std::get<I>(acc) += std::get<I>(next);
  }
};

/// `reduce(fn)`'s fold with the user's function by its own type: the value becomes
/// `fn(value, next)` (`Fold` of keyed_reduce_operator).
template <class F>
struct replacing_fold {
  F fn;
  template <class T>
  void operator()(T& acc, const T& next) {
    acc = fn(std::as_const(acc), next);
  }
};

namespace detail {

/// Field `I` of a tuple whose wire form has a fixed size: a number (not a bool, whose byte is
/// checked when read).
template <class F>
inline constexpr bool fixed_wire_field_v = std::is_arithmetic_v<F> && !std::is_same_v<F, bool>;

template <class T, class KeyField, class Fold>
struct in_place_sum {
  static constexpr bool value = false;
};

/// `key_by<I>().sum<M>()` over a tuple whose key field I is a string and whose other fields are
/// numbers: a record's key and summand sit at offsets known from the key's length, so the keyed
/// reduce reads both from the record's bytes (keyed_reduce_operator::process_serialized).
template <class... Fs, std::size_t I, std::size_t M>
struct in_place_sum<std::tuple<Fs...>, tuple_key_field<I>, tuple_field_sum<M>> {
  using tuple = std::tuple<Fs...>;
  static constexpr bool value = I != M && I < sizeof...(Fs) && M < sizeof...(Fs)
    && std::is_same_v<std::tuple_element_t<I, tuple>, std::string> && [] {
         bool fixed = true;
         std::size_t j = 0;
         ((fixed = fixed && (j++ == I || fixed_wire_field_v<Fs>)), ...);
         return fixed;
       }();
  static constexpr std::size_t key_index = I;
  static constexpr std::size_t sum_index = M;
  /// Bytes of fields [from, to), none of them the key.
  static constexpr std::size_t fixed_bytes(std::size_t from, std::size_t to) {
    std::size_t sizes[] = {sizeof(Fs)...};
    std::size_t n = 0;
    for (auto j = from; j < to; ++j)
      n += j == I ? 0 : sizes[j];
    return n;
  }
};

} // namespace detail

/// Folds each key's records and emits every new value (Flink's StreamGroupedReduce), with the
/// value state of each key kept in the subtask's keyed state table (`keyed_state.hpp`), tagged
/// with its key group. `fold(acc, next)` updates a key's value in place (sum does; it spares a
/// copy of the record); without it `fn(acc, next)` replaces the value.
///
/// `KeyField` and `Fold`, when not void, are known to the compiler and called directly, once or
/// twice per record (the API's `key_by<N>` with `sum` or `reduce`): `KeyField` reads the key in
/// place instead of `key.field` (which must still be set when the state holds values keyed in
/// place, and null when it holds key and value) and `key.select`; `Fold` replaces `fn` and `fold`.
template <class T, class K, class KeyField = void, class Fold = void>
class keyed_reduce_operator final : public one_input_operator<T> {
  static constexpr bool static_key = !std::is_void_v<KeyField>;
  static constexpr bool static_fold = !std::is_void_v<Fold>;
  using fold_object = std::conditional_t<static_fold, Fold, std::monostate>;

public:
  keyed_reduce_operator(std::function<T(const T&, const T&)> fn, std::function<K(const T&)> key,
                        const operator_context& ctx, std::unique_ptr<output<T>> out)
    : keyed_reduce_operator(std::move(fn), nullptr, key_extractor<T, K>{std::move(key)}, ctx,
                            std::move(out)) {}

  keyed_reduce_operator(std::function<T(const T&, const T&)> fn,
                        std::function<void(T&, const T&)> fold, key_extractor<T, K> key,
                        const operator_context& ctx, std::unique_ptr<output<T>> out,
                        fold_object static_fold = {})
    : fn_(std::move(fn)),
      fold_(std::move(fold)),
      static_fold_(std::move(static_fold)),
      key_(std::move(key)),
      max_parallelism_(ctx.key_group_max_parallelism),
      range_(ctx.key_groups),
      backend_(ctx.state_backend, ctx.key_groups),
      out_(std::move(out)) {}

  /// `state.backend.type: rocksdb`: the values live in RocksDB (state larger than memory);
  /// hashmap keeps them in the table above, the fast path.
  void open() override {
    if (uses_backend())
      state_ = backend_.get().register_state("reduce");
  }

  void process_element(const T& value) override {
    if (backend_.made()) {
      process_in_backend(value);
      return;
    }
    if (key_.field) {
      const K& key = field_of(value);
      auto hash = key_hash(key);
      if (auto* current =
            by_field_.find(hash, [&](const T& entry) { return same_key(field_of(entry), key); }))
        update(*current, value);
      else
        out_->collect_ref(by_field_.insert(hash, key_group_of(hash), value));
    } else if constexpr (static_key) {
      const K& key = KeyField{}(value); // copied only for a new key
      auto hash = key_hash(key);
      if (auto* current = by_selector_.find(
            hash, [&](const std::pair<K, T>& entry) { return same_key(entry.first, key); }))
        update(current->second, value);
      else
        out_->collect_ref(by_selector_.insert(hash, key_group_of(hash), {key, value}).second);
    } else {
      K key = key_.select(value);
      auto hash = key_hash(key);
      if (auto* current = by_selector_.find(
            hash, [&](const std::pair<K, T>& entry) { return same_key(entry.first, key); }))
        update(current->second, value);
      else
        out_->collect_ref(
          by_selector_.insert(hash, key_group_of(hash), {std::move(key), value}).second);
    }
  }

  void collect_ref(const T& value) override { process_element(value); }

  /// A record from the network. `key_by<I>().sum<M>()` over a tuple of a string key and numbers
  /// with state in the table reads the record in place: the key's bytes are hashed and probed
  /// where they lie and the summand added from its offset; a record is built only for a new key
  /// (the entry stored). Anything else, and any record whose bytes are too short for its
  /// lengths, goes through the deserialized object (which reports what is wrong).
  void process_serialized(std::span<const char> record) override {
    if constexpr (detail::in_place_sum<T, KeyField, Fold>::value) {
      if (key_.field && !backend_.made() && process_in_place(record))
        return;
    }
    one_input_operator<T>::process_serialized(record);
  }

  /// Keys held in state (for tests).
  std::size_t num_keys() const { return by_field_.size() + by_selector_.size(); }

  /// Records of a known key whose summand was added from their bytes, no object built (for
  /// tests: the in-place read ran).
  std::uint64_t num_summed_in_place() const { return summed_in_place_; }

  /// Each key group's entries, serialized: the values (keyed by a field), or key and value.
  state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) override {
    state::operator_snapshot s;
    if (backend_.made()) {
      s.keyed_upload = backend_.get().snapshot(checkpoint_id);
      return s;
    }
    s.first_key_group = range_.first;
    s.key_groups.resize(static_cast<std::size_t>(range_.size()));
    auto& groups = s.key_groups;
    auto first = range_.first;
    by_field_.for_each([&](int group, const T& value) {
      type_serializer<T>::write(value, groups[static_cast<std::size_t>(group - first)]);
    });
    by_selector_.for_each([&](int group, const std::pair<K, T>& entry) {
      auto& out = groups[static_cast<std::size_t>(group - first)];
      type_serializer<K>::write(entry.first, out);
      type_serializer<T>::write(entry.second, out);
    });
    return s;
  }

  /// Only this subtask's key groups are read (after a rescale the handles hold others too).
  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.has_keyed_state())
      return;
    if (uses_backend()) {
      if (auto restored = backend_.get().restore(restore.keyed_handles()); !restored)
        throw std::runtime_error(restored.error().message);
      return;
    }
    auto read = restore.for_each_key_group(
      range_.first, range_.last, [&](std::int32_t, std::span<const char> bytes) {
        byte_reader in(bytes);
        while (!in.at_end()) {
          if (key_.field) {
            T value = type_serializer<T>::read(in);
            auto hash = key_hash(field_of(value));
            by_field_.insert(hash, key_group_of(hash), std::move(value));
          } else {
            K key = type_serializer<K>::read(in);
            T value = type_serializer<T>::read(in);
            auto hash = key_hash(key);
            by_selector_.insert(hash, key_group_of(hash), {std::move(key), std::move(value)});
          }
        }
      });
    if (!read)
      throw std::runtime_error(read.error().message);
  }

  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    backend_.notify_checkpoint_complete(checkpoint_id);
  }

private:
  bool uses_backend() const { return backend_.options().type == "rocksdb"; }

  /// The in-place read of process_serialized; false (nothing done) when the record's bytes are
  /// shorter than its key's length says.
  bool process_in_place(std::span<const char> record) {
    using layout = detail::in_place_sum<T, KeyField, Fold>;
    constexpr std::size_t key_index = layout::key_index;
    constexpr std::size_t sum_index = layout::sum_index;
    constexpr std::size_t before = layout::fixed_bytes(0, key_index);
    constexpr std::size_t after = layout::fixed_bytes(key_index + 1, std::tuple_size_v<T>);
    if (record.size() < before + 4 + after)
      return false;
    std::uint32_t n = 0;
    std::memcpy(&n, record.data() + before, 4);
    if (record.size() - (before + 4 + after) < n)
      return false;
    const char* key = record.data() + before + 4;
    auto hash = java_string_hash(key, n);
    auto* current = by_field_.find(hash, [&](const T& entry) {
      const auto& k = std::get<key_index>(entry);
      return same_key_bytes(k.data(), k.size(), key, n);
    });
    if (!current) {
      byte_reader in(record);
      out_->collect_ref(by_field_.insert(hash, key_group_of(hash), type_serializer<T>::read(in)));
      return true;
    }
    constexpr std::size_t at = sum_index < key_index
      ? layout::fixed_bytes(0, sum_index)
      : before + 4 + layout::fixed_bytes(key_index + 1, sum_index);
    std::tuple_element_t<sum_index, T> next;
    std::memcpy(&next, record.data() + at + (sum_index < key_index ? 0 : n), sizeof next);
    std::get<sum_index>(*current) += next;
    ++summed_in_place_;
    out_->collect_ref(*current);
    return true;
  }

  /// A value read, folded and written back per record, as bytes (Flink's RocksDB ValueState).
  void process_in_backend(const T& value) {
    key_bytes_.clear();
    std::int32_t hash = 0;
    if (key_.field) {
      const K& key = field_of(value);
      hash = key_hash(key);
      type_serializer<K>::write(key, key_bytes_);
    } else {
      K key = select_of(value);
      hash = key_hash(key);
      type_serializer<K>::write(key, key_bytes_);
    }
    int group = key_group_of(hash);
    std::string_view key(key_bytes_.data(), key_bytes_.size());
    value_bytes_.clear();
    auto& backend = backend_.get();
    if (backend.get(state_, group, key, stored_)) {
      byte_reader in(std::span<const char>(stored_.data(), stored_.size()));
      T current = type_serializer<T>::read(in);
      update(current, value);
      type_serializer<T>::write(current, value_bytes_);
    } else {
      out_->collect_ref(value);
      type_serializer<T>::write(value, value_bytes_);
    }
    backend.put(state_, group, key, std::string_view(value_bytes_.data(), value_bytes_.size()));
  }

  /// The key group of a new key, which must be one of this subtask's.
  int key_group_of(std::int32_t key_hash) const {
    int group = assign_to_key_group(key_hash, max_parallelism_);
    if (!range_.contains(group))
      throw std::logic_error(
        "Key group " + std::to_string(group) + " is not in KeyGroupRange{startKeyGroup="
        + std::to_string(range_.first) + ", endKeyGroup=" + std::to_string(range_.last)
        + "}: the record reached the wrong subtask");
    return group;
  }

  const K& field_of(const T& value) const {
    if constexpr (static_key)
      return KeyField{}(value);
    else
      return key_.field(value);
  }

  K select_of(const T& value) const {
    if constexpr (static_key)
      return KeyField{}(value);
    else
      return key_.select(value);
  }

  void update(T& current, const T& value) {
    if constexpr (static_fold)
      static_fold_(current, value);
    else if (fold_)
      fold_(current, value);
    else
      current = fn_(current, value);
    out_->collect_ref(current);
  }

  std::function<T(const T&, const T&)> fn_;
  std::function<void(T&, const T&)> fold_;
  [[no_unique_address]] fold_object static_fold_;
  key_extractor<T, K> key_;
  int max_parallelism_;
  key_group_range range_;
  /// The values themselves when the key is a field of them, else (key, value) pairs.
  keyed_value_table<T> by_field_;
  keyed_value_table<std::pair<K, T>> by_selector_;
  keyed_backend_holder backend_;
  std::uint32_t state_ = 0;
  std::vector<char> key_bytes_;
  std::vector<char> value_bytes_;
  std::string stored_;
  std::uint64_t summed_in_place_ = 0;
  output_ref<T> out_;
};

} // namespace flint::streaming
