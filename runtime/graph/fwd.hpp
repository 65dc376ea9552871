#pragma once
/// Forward declarations of the graph types, for headers that only pass them around.

namespace flint::graph {

class transformation;
class operator_factory;
class key_selector;
struct stream_partitioner;
struct stream_node;
struct stream_edge;
class stream_graph;
struct chained_operator;
struct job_vertex;
struct intermediate_data_set;
struct job_edge;
struct slot_sharing_group;
struct co_location_group;
struct job_graph;
class execution;
struct execution_job_vertex;
struct execution_vertex;
struct intermediate_result;
struct intermediate_result_partition;
struct consumed_partition_group;
struct consumer_vertex_group;
struct pipelined_region;
class execution_graph;
struct task_deployment_descriptor;

} // namespace flint::graph
