#pragma once
/// The typed operator factories and key selectors behind the DataStream API.
///
/// Each holds the user's ordinary C++ lambda type-erased in a `std::function`, typed by the record
/// types, so the data plane can instantiate the operator of a StreamNode from its factory.

#include "runtime/streaming/stream_operator_factory.hpp"
#include "runtime/streaming/file_sink.hpp"
#include "runtime/streaming/keyed_process_operator.hpp"
#include "runtime/streaming/operators.hpp"
#include "runtime/streaming/output_initialization.hpp"
#include "runtime/streaming/socket_source.hpp"
#include "runtime/streaming/write_mode.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace flint::api {

/// What `write_as_text` does with an existing path (Flink's FileSystem.WriteMode).
using write_mode = streaming::write_mode;

/// Where a flat map emits records (Flink's Collector): the runtime output itself, so a word
/// handed to `collect_ref` goes straight into the next operator of the chain. `collect` takes a
/// record to keep; `collect_ref` one the caller keeps and reuses (a word buffer, say), which
/// downstream operators only read, so nothing is copied on the way.
template <class T>
using collector = streaming::output<T>;

/// Base of the typed factories: names the operator kind.
class named_operator_factory : public streaming::stream_operator_factory {
public:
  explicit named_operator_factory(std::string kind) : kind_(std::move(kind)) {}
  std::string_view kind() const override { return kind_; }

private:
  std::string kind_;
};

/// `from_elements` / `from_collection`: emits the elements once, in order.
template <class Out>
class collection_source_factory : public named_operator_factory {
public:
  explicit collection_source_factory(std::vector<Out> elements)
    : named_operator_factory("source.collection"),
      elements(std::move(elements)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::collection_source<Out>>(elements, ctx,
                                                               streaming::make_output<Out>(ctx));
  }
  std::vector<Out> elements;
};

/// `read_text_file`: emits the file's lines.
class text_file_source_factory : public named_operator_factory {
public:
  explicit text_file_source_factory(std::string path)
    : named_operator_factory("source.text_file"),
      path(std::move(path)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::text_file_source>(path, ctx,
                                                         streaming::make_output<std::string>(ctx));
  }
  std::string path;
};

/// `socket_text_stream`: emits text read from a socket, split at `delimiter`.
class socket_source_factory : public named_operator_factory {
public:
  socket_source_factory(std::string host, int port, char delimiter)
    : named_operator_factory("source.socket"),
      host(std::move(host)),
      port(port),
      delimiter(delimiter) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::socket_source>(host, port, delimiter, ctx,
                                                      streaming::make_output<std::string>(ctx));
  }
  std::string host;
  int port;
  char delimiter;
};

/// `generate_sequence`: emits `from..to` inclusive, split among the subtasks.
class sequence_source_factory : public named_operator_factory {
public:
  sequence_source_factory(std::int64_t from, std::int64_t to)
    : named_operator_factory("source.sequence"),
      from(from),
      to(to) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::sequence_source>(from, to, ctx,
                                                        streaming::make_output<std::int64_t>(ctx));
  }
  std::int64_t from;
  std::int64_t to;
};

/// `map`. `fn` is the user's function as a std::function (what tests and tools inspect).
template <class In, class Out>
class map_factory : public named_operator_factory {
public:
  explicit map_factory(std::function<Out(const In&)> fn)
    : named_operator_factory("map"),
      fn(std::move(fn)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::map_operator<In, Out>>(fn, streaming::make_output<Out>(ctx));
  }
  std::function<Out(const In&)> fn;
};

/// A map_factory that also keeps the function's own type `F`: its operators call it directly
/// (inlinable) instead of through std::function, once per record. The `_of` factories below do
/// the same for flat_map and filter.
template <class In, class Out, class F>
class map_factory_of final : public map_factory<In, Out> {
public:
  explicit map_factory_of(F f) : map_factory<In, Out>(f), f_(std::move(f)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::map_operator<In, Out, F>>(f_,
                                                                 streaming::make_output<Out>(ctx));
  }

private:
  F f_;
};

/// `flat_map`: zero or more records per input.
template <class In, class Out>
class flat_map_factory : public named_operator_factory {
public:
  explicit flat_map_factory(std::function<void(const In&, collector<Out>&)> fn)
    : named_operator_factory("flat_map"),
      fn(std::move(fn)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return make_operator(fn, ctx);
  }
  std::function<void(const In&, collector<Out>&)> fn;

protected:
  template <class G>
  static std::unique_ptr<streaming::stream_operator> make_operator(
    const G& g, streaming::operator_context& ctx) {
    return std::make_unique<streaming::flat_map_operator<In, Out, G>>(
      g, streaming::make_output<Out>(ctx));
  }
};

template <class In, class Out, class F>
class flat_map_factory_of final : public flat_map_factory<In, Out> {
public:
  explicit flat_map_factory_of(F f) : flat_map_factory<In, Out>(f), f_(std::move(f)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return this->make_operator(f_, ctx);
  }

private:
  F f_;
};

/// `filter`: keeps the records the predicate accepts.
template <class T>
class filter_factory : public named_operator_factory {
public:
  explicit filter_factory(std::function<bool(const T&)> fn)
    : named_operator_factory("filter"),
      fn(std::move(fn)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::filter_operator<T>>(fn, streaming::make_output<T>(ctx));
  }
  std::function<bool(const T&)> fn;
};

template <class T, class F>
class filter_factory_of final : public filter_factory<T> {
public:
  explicit filter_factory_of(F f) : filter_factory<T>(f), f_(std::move(f)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::filter_operator<T, F>>(f_, streaming::make_output<T>(ctx));
  }

private:
  F f_;
};

/// `reduce` and `sum` on a keyed stream: folds each key's records, emitting every new value.
/// `fold`, when set, does what `fn` does in place (the operator then skips copying the record);
/// `key_field`, when set, reads the key in place instead of calling `key`, and tells that `fold`
/// never changes the key (the operator then stores values without a separate key).
template <class T, class K>
class keyed_reduce_factory : public named_operator_factory {
public:
  keyed_reduce_factory(std::string kind, std::function<T(const T&, const T&)> fn,
                       std::function<K(const T&)> key,
                       std::function<void(T&, const T&)> fold = nullptr,
                       const K& (*key_field)(const T&) = nullptr)
    : named_operator_factory(std::move(kind)),
      fn(std::move(fn)),
      key(std::move(key)),
      fold(std::move(fold)),
      key_field(key_field) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::keyed_reduce_operator<T, K>>(
      fn, fold, streaming::key_extractor<T, K>{key, key_field}, ctx,
      streaming::make_output<T>(ctx));
  }
  std::function<T(const T&, const T&)> fn;
  std::function<K(const T&)> key;
  std::function<void(T&, const T&)> fold;
  const K& (*key_field)(const T&);
};

/// A keyed_reduce_factory whose operators have the key's field `KeyField` (void: read through
/// `key_field` or `key`) and the fold `Fold` compiled in: no call through a pointer or a
/// std::function per record. `fn`, `key` and `fold` stay set (what tests and tools inspect).
template <class T, class K, class KeyField, class Fold>
class keyed_reduce_factory_of final : public keyed_reduce_factory<T, K> {
public:
  keyed_reduce_factory_of(std::string kind, std::function<T(const T&, const T&)> fn,
                          std::function<K(const T&)> key, std::function<void(T&, const T&)> fold,
                          const K& (*key_field)(const T&), Fold f)
    : keyed_reduce_factory<T, K>(std::move(kind), std::move(fn), std::move(key), std::move(fold),
                                 key_field),
      f_(std::move(f)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::keyed_reduce_operator<T, K, KeyField, Fold>>(
      nullptr, nullptr, streaming::key_extractor<T, K>{this->key, this->key_field}, ctx,
      streaming::make_output<T>(ctx), f_);
  }

private:
  Fold f_;
};

namespace detail {

template <class T>
struct is_tuple : std::false_type {};
template <class... Ts>
struct is_tuple<std::tuple<Ts...>> : std::true_type {};

/// The factory of `I`, the first index from `I` on that equals `key_index` and holds a K.
template <class T, class K, class Fold, std::size_t I>
std::shared_ptr<keyed_reduce_factory<T, K>> keyed_reduce_factory_at(
  int key_index, std::string& kind, std::function<T(const T&, const T&)>& fn,
  std::function<K(const T&)>& key, std::function<void(T&, const T&)>& fold,
  const K& (*key_field)(const T&), Fold& f) {
  if constexpr (I < std::tuple_size_v<T>) {
    if constexpr (std::is_same_v<std::decay_t<std::tuple_element_t<I, T>>, K>)
      if (key_index == static_cast<int>(I))
        return std::make_shared<
          keyed_reduce_factory_of<T, K, streaming::tuple_key_field<I>, Fold>>(
          std::move(kind), std::move(fn), std::move(key), std::move(fold), key_field,
          std::move(f));
    return keyed_reduce_factory_at<T, K, Fold, I + 1>(key_index, kind, fn, key, fold, key_field,
                                                      f);
  } else {
    return std::make_shared<keyed_reduce_factory_of<T, K, void, Fold>>(
      std::move(kind), std::move(fn), std::move(key), std::move(fold), key_field, std::move(f));
  }
}

} // namespace detail

/// The factory of a keyed fold `f` (what `fn`, or `fold` in place, compute) whose key is read by
/// `key`, or in place by `key_field` when set, and is tuple field `key_index` of T when that is
/// not -1: `f` and, for a tuple field, the key's read compiled into the operator.
template <class T, class K, class Fold>
std::shared_ptr<keyed_reduce_factory<T, K>> make_keyed_reduce_factory(
  std::string kind, std::function<T(const T&, const T&)> fn, std::function<K(const T&)> key,
  std::function<void(T&, const T&)> fold, const K& (*key_field)(const T&), int key_index, Fold f) {
  if constexpr (detail::is_tuple<T>::value)
    return detail::keyed_reduce_factory_at<T, K, Fold, 0>(key_index, kind, fn, key, fold,
                                                          key_field, f);
  else
    return std::make_shared<keyed_reduce_factory_of<T, K, void, Fold>>(
      std::move(kind), std::move(fn), std::move(key), std::move(fold), key_field, std::move(f));
}

/// Flink's KeyedProcessFunction, its context and its keyed states, for `process`.
template <class K, class In, class Out>
using keyed_process_function = streaming::keyed_process_function<K, In, Out>;
template <class K>
using keyed_context = streaming::keyed_context<K>;
template <class V>
using value_state = streaming::value_state<V>;
template <class V>
using list_state = streaming::list_state<V>;
template <class UK, class UV>
using map_state = streaming::map_state<UK, UV>;
/// Flink's OutputTag: `ctx.output(tag, value)` in a process function, `get_side_output(tag)`.
template <class T>
using output_tag = streaming::output_tag<T>;
/// Flink's TimerService and TimeDomain, reached through `keyed_context::timer_service()`.
using timer_service = streaming::timer_service;
using time_domain = streaming::time_domain;

/// `key_by(...).process(F)`: each subtask runs its own copy of the user's function `F`.
template <class T, class K, class Out, class F>
class keyed_process_factory : public named_operator_factory {
public:
  keyed_process_factory(F fn, std::function<K(const T&)> key)
    : named_operator_factory("keyed_process"),
      fn(std::move(fn)),
      key(std::move(key)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::keyed_process_operator<K, T, Out>>(
      std::make_unique<F>(fn), key, ctx, streaming::make_output<Out>(ctx));
  }
  F fn;
  std::function<K(const T&)> key;
};

/// `print`: writes each record to standard output.
template <class T>
class print_sink_factory : public named_operator_factory {
public:
  print_sink_factory() : named_operator_factory("sink.print") {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::print_sink<T>>(ctx);
  }
};

/// `write_as_text`: writes each record as a line to `path`. When the job checkpoints, `path` is
/// a directory of part files committed with the checkpoints (exactly once, Flink's FileSink):
/// the sink adds its files beside whatever the directory holds. Without checkpoints it is Flink's
/// writeAsText: an existing `path` refuses the job unless `mode` is `overwrite`.
template <class T>
class text_sink_factory : public named_operator_factory {
public:
  text_sink_factory(std::string path, streaming::write_mode mode)
    : named_operator_factory("sink.text_file"),
      path(std::move(path)),
      mode(mode) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    if (ctx.checkpointing != graph::checkpointing_mode::none)
      return std::make_unique<streaming::file_sink<T>>(path, ctx);
    return std::make_unique<streaming::text_sink<T>>(path, ctx);
  }
  expected<unit> initialize_global(
    const streaming::global_initialization_context& ctx) const override {
    return streaming::initialize_text_output(path, mode, ctx);
  }
  std::string path;
  streaming::write_mode mode;
};

/// A typed key selector for key-group partitioning. `field`, when set, reads the same key in
/// place (`key_by<N>`), which spares copying it for every record.
template <class T, class K>
class typed_key_selector : public graph::key_selector, public streaming::typed_key_hasher<T> {
public:
  typed_key_selector(std::function<K(const T&)> fn, std::string description,
                     const K& (*field)(const T&) = nullptr, int field_index = -1)
    : fn(std::move(fn)),
      field(field),
      field_index(field_index),
      description_(std::move(description)) {}
  std::string description() const override { return description_; }
  std::int32_t key_hash_of(const T& record) const override {
    return field ? streaming::key_hash(field(record)) : streaming::key_hash(fn(record));
  }
  std::function<K(const T&)> fn;
  const K& (*field)(const T&);
  /// Which tuple field `field` reads (-1: none).
  int field_index;

private:
  std::string description_;
};

/// `key_by<Field>`: the key is tuple field `Field`, hashed in place without a call through `field`.
template <class T, class K, std::size_t Field>
class field_key_selector final : public typed_key_selector<T, K> {
public:
  field_key_selector()
    : typed_key_selector<T, K>(
      [](const T& value) { return std::get<Field>(value); }, "field " + std::to_string(Field),
      [](const T& value) -> const K& { return std::get<Field>(value); }, static_cast<int>(Field)) {}
  std::int32_t key_hash_of(const T& record) const override {
    return streaming::key_hash(std::get<Field>(record));
  }
  std::unique_ptr<streaming::output<T>> make_writer_output(const streaming::network_output& target,
                                                           int subtask_index) const override {
    return std::make_unique<streaming::record_writer_output<T, field_hash>>(target, subtask_index);
  }

private:
  struct field_hash {
    std::int32_t operator()(const T& record) const {
      return streaming::key_hash(std::get<Field>(record));
    }
  };
};

} // namespace flint::api
