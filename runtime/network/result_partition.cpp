#include "runtime/network/result_partition.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace flint::network {

result_partition::result_partition(result_partition_id id, std::size_t num_subpartitions,
                                   std::shared_ptr<local_buffer_pool> pool)
  : id_(id), pool_(std::move(pool)), builders_(num_subpartitions) {
  // A blocked writer may hold one partly filled buffer per subpartition.
  if (pool_)
    pool_->wake_for_half(num_subpartitions);
  subpartitions_.reserve(num_subpartitions);
  for (std::size_t i = 0; i < num_subpartitions; ++i)
    subpartitions_.push_back(std::make_shared<pipelined_subpartition>(i));
}

result_partition::~result_partition() {
  release();
}

void result_partition::check_writable(const char* what) const {
  if (released_ || finished_)
    throw std::logic_error(std::string{"result_partition: "} + what + " after " +
                           (released_ ? "release" : "finish"));
}

emit_result result_partition::emit_record(std::span<const char> record, std::size_t target) {
  check_writable("emit_record");
  if (pending_target_)
    throw std::logic_error("result_partition: emit_record while a blocked record waits; call resume()");
  if (target >= subpartitions_.size())
    throw std::out_of_range("result_partition: no subpartition " + std::to_string(target));
  serializer_.set_record(record);
  pending_target_ = target;
  ++records_out_;
  return write_pending();
}

emit_result result_partition::resume() {
  check_writable("resume");
  if (!pending_target_)
    return emit_result::written;
  return write_pending();
}

emit_result result_partition::write_pending() {
  auto target = *pending_target_;
  auto& builder = builders_[target];
  for (;;) {
    if (!builder) {
      auto next = pool_->request_buffer();
      if (!next) {
        serializer_.keep_remaining();
        return emit_result::blocked;
      }
      builder.emplace(std::move(*next));
    }
    auto result = serializer_.copy_to(*builder);
    if (builder->is_full()) {
      subpartitions_[target]->add(builder->finish());
      builder.reset();
    }
    if (result != serialization_result::partial_record_buffer_full) {
      pending_target_.reset();
      return emit_result::written;
    }
  }
}

bool result_partition::is_available() const {
  return !released_ && pool_->is_available();
}

bool result_partition::notify_when_available(availability_listener listener) {
  return pool_->notify_when_available(std::move(listener));
}

void result_partition::flush(std::size_t target) {
  auto& builder = builders_.at(target);
  if (builder && !builder->empty()) {
    subpartitions_[target]->add(builder->finish());
    builder.reset();
  }
}

void result_partition::flush_all() {
  for (std::size_t i = 0; i < builders_.size(); ++i)
    flush(i);
}

void result_partition::finish() {
  check_writable("finish");
  if (pending_target_)
    throw std::logic_error("result_partition: finish while a blocked record waits");
  flush_all();
  // An empty builder still holds a pool buffer; give it back before the pool is left idle.
  for (auto& builder : builders_)
    builder.reset();
  for (auto& subpartition : subpartitions_)
    subpartition->finish();
  finished_ = true;
}

void result_partition::release() {
  if (released_)
    return;
  released_ = true;
  pending_target_.reset();
  for (auto& builder : builders_)
    builder.reset();
  for (auto& subpartition : subpartitions_)
    subpartition->release();
  if (pool_)
    pool_->destroy();
}

expected<std::unique_ptr<pipelined_subpartition_view>> result_partition::create_subpartition_view(
  std::size_t index, availability_listener listener) {
  if (released_)
    return make_error(errc::illegal_state, "partition " + to_string(id_) + " is released");
  if (index >= subpartitions_.size())
    return make_error(errc::invalid_argument, "partition " + to_string(id_) + " has " +
                                                std::to_string(subpartitions_.size()) + " subpartitions, no index " +
                                                std::to_string(index));
  return std::make_unique<pipelined_subpartition_view>(subpartitions_[index], std::move(listener));
}

} // namespace flint::network
