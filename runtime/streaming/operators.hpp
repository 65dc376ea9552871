#pragma once
/// The runtime operators behind the DataStream API (Flink's StreamMap, StreamFlatMap,
/// StreamFilter, StreamGroupedReduce, the sources and sinks), one header per kind under
/// operators/. Header-only templates; the API's factories instantiate them with the user's
/// functions.

#include "runtime/streaming/operators/keyed_reduce.hpp"
#include "runtime/streaming/operators/sinks.hpp"
#include "runtime/streaming/operators/sources.hpp"
#include "runtime/streaming/operators/transforms.hpp"
