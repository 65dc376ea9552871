#pragma once
/// The end of a stream (Flink's DataStreamSink).

#include "api/operator_handle.hpp"

namespace flint::api {

/// A sink operator; only its settings can be changed.
template <class T>
class data_stream_sink : public operator_handle<data_stream_sink<T>> {
public:
  explicit data_stream_sink(std::shared_ptr<graph::transformation> t)
    : operator_handle<data_stream_sink<T>>(std::move(t)) {}
};

} // namespace flint::api
