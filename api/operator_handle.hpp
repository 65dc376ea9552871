#pragma once
/// The settings every operator handle shares (Flink's SingleOutputStreamOperator and
/// DataStreamSink setters), written once for streams and sinks.

#include "runtime/graph/transformation.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace flint::api {

/// CRTP base: each setter changes the operator's transformation and returns the handle.
template <class Derived>
class operator_handle {
public:
  /// The transformation the handle stands for.
  const std::shared_ptr<graph::transformation>& transformation() const { return transformation_; }
  /// The StreamNode id it will get.
  int id() const { return transformation_->id(); }

  /// The operator's name in plans and task names.
  Derived& name(std::string name) {
    transformation_->set_name(std::move(name));
    return self();
  }
  /// A stable id that drives the JobVertex id (it must be unique in the job).
  Derived& uid(std::string uid) {
    transformation_->set_uid(std::move(uid));
    return self();
  }
  /// Throws `std::invalid_argument` below 1, or above 1 for a non-parallel source.
  Derived& set_parallelism(int parallelism) {
    if (auto set = transformation_->set_parallelism(parallelism); !set)
      throw std::invalid_argument(set.error().message);
    return self();
  }
  Derived& set_max_parallelism(int max_parallelism) {
    if (auto set = transformation_->set_max_parallelism(max_parallelism); !set)
      throw std::invalid_argument(set.error().message);
    return self();
  }
  /// Operators in different groups never share a slot, nor chain.
  Derived& slot_sharing_group(std::string group) {
    transformation_->set_slot_sharing_group(std::move(group));
    return self();
  }
  /// Subtask i of every operator with this key runs in the same slot.
  Derived& co_location_group(std::string key) {
    transformation_->set_co_location_group(std::move(key));
    return self();
  }
  /// Neither chains to its predecessor nor to its successors.
  Derived& disable_chaining() {
    transformation_->set_chaining_strategy(graph::chaining_strategy::never);
    return self();
  }
  /// Begins a new chain here; successors may still chain to it.
  Derived& start_new_chain() {
    transformation_->set_chaining_strategy(graph::chaining_strategy::head);
    return self();
  }
  /// Milliseconds before a partly filled buffer is sent.
  Derived& set_buffer_timeout(std::int64_t millis) {
    transformation_->set_buffer_timeout(millis);
    return self();
  }

protected:
  explicit operator_handle(std::shared_ptr<graph::transformation> t)
    : transformation_(std::move(t)) {}

private:
  Derived& self() { return static_cast<Derived&>(*this); }

  std::shared_ptr<graph::transformation> transformation_;
};

} // namespace flint::api
