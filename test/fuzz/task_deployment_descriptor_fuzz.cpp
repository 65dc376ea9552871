// libFuzzer target: the TaskDeploymentDescriptor codec (runtime/graph/codec), what a TaskExecutor
// decodes from submit_task.

#include "runtime/graph/codec/job_graph_codec.hpp"
#include "test/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)flint::graph::decode_task_deployment_descriptor(flint::fuzz::as_chars(data, size));
  return 0;
}
