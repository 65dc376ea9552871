#include "runtime/streaming/output_initialization.hpp"

#include "runtime/graph/stream_graph.hpp"
#include "runtime/streaming/stream_operator_factory.hpp"

namespace flint::streaming {

expected<unit> initialize_outputs(const graph::stream_graph& stream) {
  global_initialization_context context;
  context.checkpointing = stream.config().checkpoint_interval > 0;
  for (const auto& [id, node] : stream.nodes()) {
    auto factory = std::dynamic_pointer_cast<const stream_operator_factory>(node.factory);
    if (!factory)
      continue;
    context.parallelism = node.parallelism;
    if (auto done = factory->initialize_global(context); !done)
      return make_error(done.error().code,
                        "Cannot initialize " + node.operator_name + ": " + done.error().message);
  }
  return unit{};
}

} // namespace flint::streaming
