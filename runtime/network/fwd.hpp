#pragma once
/// Forward declarations of the network stack, for headers that only pass these types around.

#include <cstdint>

namespace flint::network {

class bounded_blocking_subpartition;
class bounded_blocking_subpartition_reader;
class buffer;
class buffer_builder;
class buffer_listener;
class buffer_manager;
class buffer_recycler;
class credit_based_view;
class file_channel_manager;
class input_channel;
class input_gate;
class local_buffer_pool;
class local_input_channel;
class memory_budget;
class memory_segment;
class network_buffer_pool;
class network_environment;
class pipelined_subpartition;
class pipelined_subpartition_view;
class record_deserializer;
class record_serializer;
class remote_input_channel;
class result_partition;
class result_partition_manager;
class result_subpartition;
class result_subpartition_view;

struct add_credit;
struct buffer_and_availability;
struct buffer_and_backlog;
struct buffer_or_event;
struct buffer_response;
struct channel_descriptor;
struct input_channel_id;
struct network_config;
struct partition_request;

enum class buffer_kind : std::uint8_t;
enum class emit_result;

} // namespace flint::network
