#pragma once
/// Cap'n Proto encoding of the JobGraph and of TaskDeploymentDescriptors
/// (schemas/job_graph.capnp). A round trip gives back an equal value; bytes that do not decode,
/// or decode to a graph whose indices do not hold together, give `errc::malformed_message`.

#include "runtime/common/expected.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"

#include <span>
#include <vector>

namespace flint::graph {

/// A JobGraph as one unpacked Cap'n Proto message.
std::vector<char> encode_job_graph(const job_graph& graph);
/// The JobGraph in `bytes` (any alignment), validated.
expected<job_graph> decode_job_graph(std::span<const char> bytes);

/// A TaskDeploymentDescriptor as one unpacked Cap'n Proto message.
std::vector<char> encode_task_deployment_descriptor(const task_deployment_descriptor& tdd);
/// The TaskDeploymentDescriptor in `bytes` (any alignment).
expected<task_deployment_descriptor> decode_task_deployment_descriptor(std::span<const char> bytes);

} // namespace flint::graph
