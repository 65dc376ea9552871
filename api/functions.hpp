#pragma once
/// The typed operator factories and key selectors behind the DataStream API.
///
/// Each holds the user's ordinary C++ lambda type-erased in a `std::function`, typed by the record
/// types, so the data plane can instantiate the operator of a StreamNode from its factory.

#include "runtime/graph/user_function.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flint::api {

/// Where a flat map or a source emits records (Flink's Collector).
template <class T>
class collector {
public:
  virtual ~collector() = default;
  /// Emits one record downstream.
  virtual void collect(T value) = 0;
};

/// Base of the typed factories: names the operator kind.
class named_operator_factory : public graph::operator_factory {
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
      : named_operator_factory("source.collection"), elements(std::move(elements)) {}
  std::vector<Out> elements;
};

/// `read_text_file`: emits the file's lines.
class text_file_source_factory : public named_operator_factory {
public:
  explicit text_file_source_factory(std::string path) : named_operator_factory("source.text_file"), path(std::move(path)) {}
  std::string path;
};

/// `socket_text_stream`: emits text read from a socket, split at `delimiter`.
class socket_source_factory : public named_operator_factory {
public:
  socket_source_factory(std::string host, int port, char delimiter)
      : named_operator_factory("source.socket"), host(std::move(host)), port(port), delimiter(delimiter) {}
  std::string host;
  int port;
  char delimiter;
};

/// `generate_sequence`: emits `from..to` inclusive, split among the subtasks.
class sequence_source_factory : public named_operator_factory {
public:
  sequence_source_factory(std::int64_t from, std::int64_t to)
      : named_operator_factory("source.sequence"), from(from), to(to) {}
  std::int64_t from;
  std::int64_t to;
};

/// `map`.
template <class In, class Out>
class map_factory : public named_operator_factory {
public:
  explicit map_factory(std::function<Out(const In&)> fn) : named_operator_factory("map"), fn(std::move(fn)) {}
  std::function<Out(const In&)> fn;
};

/// `flat_map`: zero or more records per input.
template <class In, class Out>
class flat_map_factory : public named_operator_factory {
public:
  explicit flat_map_factory(std::function<void(const In&, collector<Out>&)> fn)
      : named_operator_factory("flat_map"), fn(std::move(fn)) {}
  std::function<void(const In&, collector<Out>&)> fn;
};

/// `filter`: keeps the records the predicate accepts.
template <class T>
class filter_factory : public named_operator_factory {
public:
  explicit filter_factory(std::function<bool(const T&)> fn) : named_operator_factory("filter"), fn(std::move(fn)) {}
  std::function<bool(const T&)> fn;
};

/// `reduce` and `sum` on a keyed stream: folds each key's records, emitting every new value.
template <class T, class K>
class keyed_reduce_factory : public named_operator_factory {
public:
  keyed_reduce_factory(std::string kind, std::function<T(const T&, const T&)> fn, std::function<K(const T&)> key)
      : named_operator_factory(std::move(kind)), fn(std::move(fn)), key(std::move(key)) {}
  std::function<T(const T&, const T&)> fn;
  std::function<K(const T&)> key;
};

/// `print`: writes each record to standard output.
template <class T>
class print_sink_factory : public named_operator_factory {
public:
  print_sink_factory() : named_operator_factory("sink.print") {}
};

/// `write_as_text`: writes each record as a line to `path`.
template <class T>
class text_sink_factory : public named_operator_factory {
public:
  explicit text_sink_factory(std::string path) : named_operator_factory("sink.text_file"), path(std::move(path)) {}
  std::string path;
};

/// A typed key selector for key-group partitioning.
template <class T, class K>
class typed_key_selector : public graph::key_selector {
public:
  typed_key_selector(std::function<K(const T&)> fn, std::string description)
      : fn(std::move(fn)), description_(std::move(description)) {}
  std::string description() const override { return description_; }
  std::function<K(const T&)> fn;

private:
  std::string description_;
};

} // namespace flint::api
