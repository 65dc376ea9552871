#pragma once
/// One API call of a program (Flink's Transformation and its subclasses in one type).
///
/// The environment gives every transformation an id from its own counter, so building the same
/// program twice gives the same ids (DESIGN.md "Job code"); the StreamGraph reuses them as
/// StreamNode ids.

#include "runtime/common/expected.hpp"
#include "runtime/graph/stream_partitioner.hpp"
#include "runtime/graph/types.hpp"
#include "runtime/graph/user_function.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flint::graph {

/// Which Flink transformation class this is.
enum class transformation_kind : std::uint8_t {
  /// LegacySourceTransformation: no input, becomes a source StreamNode.
  source,
  /// OneInputTransformation: one operator on one input.
  one_input,
  /// PartitionTransformation: no operator, becomes a virtual partition node.
  partition,
  /// UnionTransformation: no operator, forwards all its inputs.
  union_of,
  /// SinkTransformation.
  sink,
  /// SideOutputTransformation: no operator, the records its input emits to an output tag.
  side_output,
  /// TwoInputTransformation: one operator on two inputs (inputs()[0] is input 1, [1] input 2).
  two_input,
};

/// A node of the program's DAG as the API builds it.
class transformation {
public:
  transformation(int id, transformation_kind kind, std::string name, int parallelism);

  /// Unique within one environment; doubles as the StreamNode id.
  int id() const { return id_; }
  transformation_kind kind() const { return kind_; }

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  /// The user's stable id; drives the JobVertex hash when set.
  const std::optional<std::string>& uid() const { return uid_; }
  void set_uid(std::string uid) { uid_ = std::move(uid); }

  int parallelism() const { return parallelism_; }
  /// Refuses p < 1, and p != 1 for a non-parallel operator with Flink's message
  /// "The parallelism of non parallel operator must be 1.".
  expected<unit> set_parallelism(int parallelism);

  /// -1 when unset: the job's max parallelism or a default applies.
  int max_parallelism() const { return max_parallelism_; }
  expected<unit> set_max_parallelism(int max_parallelism);

  /// False for non-parallel sources (`from_elements`, `socket_text_stream`).
  bool is_parallel() const { return parallel_; }
  void set_parallel(bool parallel) { parallel_ = parallel; }

  /// Unset: inherit from the inputs, else "default" (Flink's determineSlotSharingGroup).
  const std::optional<std::string>& slot_sharing_group() const { return slot_sharing_group_; }
  void set_slot_sharing_group(std::string group) { slot_sharing_group_ = std::move(group); }

  const std::optional<std::string>& co_location_group() const { return co_location_group_; }
  void set_co_location_group(std::string key) { co_location_group_ = std::move(key); }

  graph::chaining_strategy chaining_strategy() const { return chaining_strategy_; }
  void set_chaining_strategy(graph::chaining_strategy strategy) { chaining_strategy_ = strategy; }

  /// An operator the runtime adds in front of the user's (LocalWindowAggregate): ids are
  /// hashed as if it were not there, and its own derives from its one consumer's, so adding or
  /// dropping it keeps every operator's id (savepoints restore either way).
  bool id_follows_consumer() const { return id_follows_consumer_; }
  void set_id_follows_consumer(bool follows) { id_follows_consumer_ = follows; }

  /// Milliseconds; -1 means the environment's default.
  std::int64_t buffer_timeout() const { return buffer_timeout_; }
  void set_buffer_timeout(std::int64_t millis) { buffer_timeout_ = millis; }

  const std::vector<std::shared_ptr<transformation>>& inputs() const { return inputs_; }
  void add_input(std::shared_ptr<transformation> input) { inputs_.push_back(std::move(input)); }

  /// The operator; null for partition and union transformations.
  const std::shared_ptr<const operator_factory>& factory() const { return factory_; }
  void set_factory(std::shared_ptr<const operator_factory> factory) {
    factory_ = std::move(factory);
  }

  /// For partition transformations.
  const stream_partitioner& partitioner() const { return partitioner_; }
  void set_partitioner(stream_partitioner partitioner) { partitioner_ = std::move(partitioner); }
  graph::shuffle_mode shuffle_mode() const { return shuffle_mode_; }
  void set_shuffle_mode(graph::shuffle_mode mode) { shuffle_mode_ = mode; }

  /// For side output transformations: the OutputTag's id.
  const std::string& output_tag() const { return output_tag_; }
  void set_output_tag(std::string tag) { output_tag_ = std::move(tag); }

private:
  int id_;
  transformation_kind kind_;
  std::string name_;
  std::optional<std::string> uid_;
  int parallelism_;
  int max_parallelism_ = -1;
  bool parallel_ = true;
  std::optional<std::string> slot_sharing_group_;
  std::optional<std::string> co_location_group_;
  graph::chaining_strategy chaining_strategy_ = graph::chaining_strategy::always;
  bool id_follows_consumer_ = false;
  std::int64_t buffer_timeout_ = -1;
  std::vector<std::shared_ptr<transformation>> inputs_;
  std::shared_ptr<const operator_factory> factory_;
  stream_partitioner partitioner_;
  graph::shuffle_mode shuffle_mode_ = graph::shuffle_mode::undefined;
  std::string output_tag_;
};

} // namespace flint::graph
