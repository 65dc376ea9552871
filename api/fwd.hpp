#pragma once
/// Forward declarations of the DataStream API types.

namespace flint::api {

class stream_execution_environment;
template <class T>
class data_stream;
template <class T, class K>
class keyed_stream;
template <class T>
class data_stream_sink;
template <class T>
class collector;

} // namespace flint::api
