// libFuzzer target: the JobGraph codec (runtime/graph/codec), what the Dispatcher decodes from a
// submitted job and the HA job graph store from its files.

#include "runtime/graph/codec/job_graph_codec.hpp"
#include "test/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)flint::graph::decode_job_graph(flint::fuzz::as_chars(data, size));
  return 0;
}
