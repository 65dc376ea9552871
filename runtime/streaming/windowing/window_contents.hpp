#pragma once
/// What a window keeps of its elements, as bytes in the keyed state backend (the window state of
/// Flink's WindowOperator: a ListState for process functions and evictors, a ReducingState for
/// reduce, an AggregatingState for aggregate). Each policy adds an element to a window's bytes,
/// merges two windows' bytes (session windows) and turns the bytes into what the window function
/// takes.

#include "runtime/streaming/time/element_time.hpp"
#include "runtime/streaming/type_serializer.hpp"
#include "runtime/streaming/windowing/evictor.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flint::streaming {

namespace window_detail {

template <class V>
void append_value(std::string& out, const V& value) {
  auto at = out.size();
  out.resize(at + type_serializer<V>::size(value));
  type_serializer<V>::write_to(value, out.data() + at);
}

template <class V>
V read_value(std::string_view bytes) {
  byte_reader in(std::span<const char>(bytes.data(), bytes.size()));
  return type_serializer<V>::read(in);
}

template <class V>
std::string value_bytes(const V& value) {
  std::string out;
  append_value(out, value);
  return out;
}

} // namespace window_detail

/// Every element with its timestamp, one after another (Flink's ListState of the window, of
/// TimestampedValue with an evictor). Adding appends; merging concatenates. The window operator
/// keeps each element in an entry of its own and reads the window as their concatenation.
template <class In>
class list_contents {
public:
  using element_type = In;
  using result_type = std::vector<In>;
  static constexpr bool keeps_elements = true;

  void add(std::string& bytes, bool exists, const In& value, const element_time& time) const {
    (void)exists;
    append(bytes, value, time.has_timestamp, time.timestamp);
  }
  void merge_into(std::string& target, bool exists, std::string_view source) const {
    (void)exists;
    target.append(source);
  }
  result_type result(std::string_view bytes) const {
    result_type out;
    for_each(bytes, [&](In&& value, bool, std::int64_t) { out.push_back(std::move(value)); });
    return out;
  }
  std::vector<timestamped_value<In>> elements(std::string_view bytes) const {
    std::vector<timestamped_value<In>> out;
    for_each(bytes, [&](In&& value, bool has_timestamp, std::int64_t timestamp) {
      if (has_timestamp)
        out.emplace_back(std::move(value), timestamp);
      else
        out.emplace_back(std::move(value));
    });
    return out;
  }
  std::string encode(const std::vector<timestamped_value<In>>& elements) const {
    std::string out;
    for (const auto& e : elements)
      append(out, e.value, e.has_timestamp, e.timestamp);
    return out;
  }

private:
  static void append(std::string& out, const In& value, bool has_timestamp,
                     std::int64_t timestamp) {
    out.push_back(has_timestamp ? '\1' : '\0');
    if (has_timestamp)
      window_detail::append_value(out, timestamp);
    window_detail::append_value(out, value);
  }
  template <class F>
  static void for_each(std::string_view bytes, F&& f) {
    byte_reader in(std::span<const char>(bytes.data(), bytes.size()));
    while (!in.at_end()) {
      char flag = 0;
      in.read(&flag, 1);
      std::int64_t timestamp = 0;
      if (flag != 0)
        timestamp = type_serializer<std::int64_t>::read(in);
      f(type_serializer<In>::read(in), flag != 0, timestamp);
    }
  }
};

/// One value folded by the user's reduce function (Flink's ReducingState).
template <class In, class F>
class reducing_contents {
public:
  using element_type = In;
  using result_type = In;
  static constexpr bool keeps_elements = false;

  explicit reducing_contents(F reduce) : reduce_(std::move(reduce)) {}

  void add(std::string& bytes, bool exists, const In& value, const element_time&) {
    if (!exists) {
      bytes.clear();
      window_detail::append_value(bytes, value);
      return;
    }
    auto folded = reduce_(window_detail::read_value<In>(bytes), value);
    bytes.clear();
    window_detail::append_value(bytes, folded);
  }
  void merge_into(std::string& target, bool exists, std::string_view source) {
    if (!exists) {
      target.assign(source);
      return;
    }
    auto folded =
      reduce_(window_detail::read_value<In>(target), window_detail::read_value<In>(source));
    target.clear();
    window_detail::append_value(target, folded);
  }
  result_type result(std::string_view bytes) const { return window_detail::read_value<In>(bytes); }

  // Typed: the window operator's heap accumulators (window_accumulators.hpp) keep the value
  // decoded between elements; the bytes are the same as above.
  using state_type = In;
  state_type create(const In& value) const { return value; }
  void add_to(state_type& folded, const In& value) { folded = reduce_(std::move(folded), value); }
  state_type decode(std::string_view bytes) const { return window_detail::read_value<In>(bytes); }
  static void encode(const state_type& folded, std::string& bytes) {
    window_detail::append_value(bytes, folded);
  }
  result_type result_of(const state_type& folded) const { return folded; }
  /// Two partial folds into one (the global side of a two-phase window aggregate).
  state_type merge_states(state_type folded, const state_type& other) {
    return reduce_(std::move(folded), other);
  }

private:
  F reduce_;
};

/// An accumulator of the user's aggregate function (Flink's AggregatingState): `Agg` has
/// `Acc create_accumulator()`, `Acc add(const In&, Acc)`, `Out get_result(const Acc&)` and
/// `Acc merge(Acc, Acc)`.
template <class In, class Agg>
class aggregating_contents {
public:
  using element_type = In;
  using accumulator_type = std::decay_t<decltype(std::declval<Agg&>().create_accumulator())>;
  using result_type =
    std::decay_t<decltype(std::declval<Agg&>().get_result(std::declval<const accumulator_type&>()))>;
  static constexpr bool keeps_elements = false;

  explicit aggregating_contents(Agg agg) : agg_(std::move(agg)) {}

  void add(std::string& bytes, bool exists, const In& value, const element_time&) {
    accumulator_type acc =
      exists ? window_detail::read_value<accumulator_type>(bytes) : agg_.create_accumulator();
    acc = agg_.add(value, std::move(acc));
    bytes.clear();
    window_detail::append_value(bytes, acc);
  }
  void merge_into(std::string& target, bool exists, std::string_view source) {
    if (!exists) {
      target.assign(source);
      return;
    }
    auto merged = agg_.merge(window_detail::read_value<accumulator_type>(target),
                             window_detail::read_value<accumulator_type>(source));
    target.clear();
    window_detail::append_value(target, merged);
  }
  result_type result(std::string_view bytes) {
    return agg_.get_result(window_detail::read_value<accumulator_type>(bytes));
  }

  // Typed, as reducing_contents.
  using state_type = accumulator_type;
  state_type create(const In& value) { return agg_.add(value, agg_.create_accumulator()); }
  void add_to(state_type& acc, const In& value) { acc = agg_.add(value, std::move(acc)); }
  state_type decode(std::string_view bytes) const {
    return window_detail::read_value<accumulator_type>(bytes);
  }
  static void encode(const state_type& acc, std::string& bytes) {
    window_detail::append_value(bytes, acc);
  }
  result_type result_of(const state_type& acc) { return agg_.get_result(acc); }
  /// Two partial accumulators into one (the global side of a two-phase window aggregate).
  state_type merge_states(state_type acc, const state_type& other) {
    return agg_.merge(std::move(acc), other);
  }

private:
  Agg agg_;
};

/// The contents of the global window operator of a two-phase window aggregate (Flink SQL's
/// GlobalWindowAggregate): its elements are partial accumulators (key, state) that a
/// LocalWindowAggregate (local_window_aggregate_operator.hpp) built from the records of one
/// slice, and a window merges them with `Local::merge_states`. The window's state and its bytes
/// in the backend are `Local`'s own (a reduced value, an aggregate's accumulator), so a window
/// holds the same entry whether one phase or two built it, and the window function sees the
/// same result.
template <class K, class Local>
class global_window_contents {
public:
  using state_type = typename Local::state_type;
  using element_type = std::pair<K, state_type>;
  using result_type = typename Local::result_type;
  static constexpr bool keeps_elements = false;

  explicit global_window_contents(Local local) : local_(std::move(local)) {}

  void add(std::string& bytes, bool exists, const element_type& partial, const element_time&) {
    if (!exists) {
      bytes.clear();
      Local::encode(partial.second, bytes);
      return;
    }
    auto merged = local_.merge_states(local_.decode(bytes), partial.second);
    bytes.clear();
    Local::encode(merged, bytes);
  }
  void merge_into(std::string& target, bool exists, std::string_view source) {
    if (!exists) {
      target.assign(source);
      return;
    }
    auto merged = local_.merge_states(local_.decode(target), local_.decode(source));
    target.clear();
    Local::encode(merged, target);
  }
  result_type result(std::string_view bytes) { return local_.result_of(local_.decode(bytes)); }

  state_type create(const element_type& partial) const { return partial.second; }
  void add_to(state_type& state, const element_type& partial) {
    state = local_.merge_states(std::move(state), partial.second);
  }
  state_type decode(std::string_view bytes) const { return local_.decode(bytes); }
  static void encode(const state_type& state, std::string& bytes) { Local::encode(state, bytes); }
  result_type result_of(const state_type& state) { return local_.result_of(state); }

private:
  Local local_;
};

} // namespace flint::streaming
