#pragma once
/// The DataStream API in one include.

#include "api/data_stream.hpp"
#include "api/data_stream_sink.hpp"
#include "api/functions.hpp"
#include "api/keyed_stream.hpp"
#include "api/stream_execution_environment.hpp"
#include "runtime/streaming/record_type.hpp"
