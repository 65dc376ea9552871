#include "runtime/network/result_partition.hpp"

#include "runtime/network/pipelined_subpartition.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace flint::network {

namespace {

std::vector<std::shared_ptr<result_subpartition>> pipelined_subpartitions(std::size_t n) {
  std::vector<std::shared_ptr<result_subpartition>> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(std::make_shared<pipelined_subpartition>(i));
  return out;
}

} // namespace

result_partition::result_partition(result_partition_id id, std::size_t num_subpartitions,
                                   std::shared_ptr<local_buffer_pool> pool)
  : result_partition(id, pipelined_subpartitions(num_subpartitions), std::move(pool),
                     graph::result_partition_type::pipelined_bounded) {}

result_partition::result_partition(result_partition_id id,
                                   std::vector<std::shared_ptr<result_subpartition>> subpartitions,
                                   std::shared_ptr<local_buffer_pool> pool,
                                   graph::result_partition_type type)
  : id_(id),
    type_(type),
    pool_(std::move(pool)),
    subpartitions_(std::move(subpartitions)),
    builders_(subpartitions_.size()) {
  for (std::size_t i = 0; i < subpartitions_.size(); ++i)
    if (!subpartitions_[i] || subpartitions_[i]->index() != i)
      throw std::logic_error("result_partition: subpartition " + std::to_string(i)
                             + " missing or out of order");
  // A blocked writer may hold one partly filled buffer per subpartition.
  if (pool_)
    pool_->wake_for_half(subpartitions_.size());
}

result_partition::~result_partition() {
  release();
}

void result_partition::check_writable(const char* what) const {
  if (released_ || finished_)
    throw std::logic_error(std::string{"result_partition: "} + what + " after "
                           + (released_ ? "release" : "finish"));
}

emit_result result_partition::emit_record(std::span<const char> record, std::size_t target,
                                          bool timestamped) {
  check_writable("emit_record");
  if (pending_target_)
    throw std::logic_error(
      "result_partition: emit_record while a blocked record waits; call resume()");
  if (target >= subpartitions_.size())
    throw std::out_of_range("result_partition: no subpartition " + std::to_string(target));
  serializer_.set_record(record, timestamped);
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
      add(target, builder->finish());
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
  // Nobody reads a blocking partition before it is finished: small buffers would only cost.
  if (is_blocking())
    return;
  flush_builder(target);
}

void result_partition::flush_builder(std::size_t target) {
  auto& builder = builders_.at(target);
  if (builder && !builder->empty()) {
    add(target, builder->finish());
    builder.reset();
  }
}

void result_partition::flush_all() {
  for (std::size_t i = 0; i < builders_.size(); ++i)
    flush(i);
}

expected<unit> result_partition::broadcast_checkpoint_barrier(const checkpoint_barrier& barrier) {
  if (released_ || finished_)
    return make_error(errc::rejected,
                      "checkpoint barrier " + std::to_string(barrier.id)
                        + " after the partition was " + (released_ ? "released" : "finished"));
  if (is_blocking())
    return make_error(errc::rejected,
                      "checkpoint barrier " + std::to_string(barrier.id)
                        + ": a blocking partition takes no checkpoints");
  if (pending_target_)
    return make_error(
      errc::rejected,
      "checkpoint barrier " + std::to_string(barrier.id) + " while a record waits for a buffer");
  for (std::size_t i = 0; i < builders_.size(); ++i)
    flush_builder(i);
  for (auto& subpartition : subpartitions_)
    if (!subpartition->add(to_event(barrier)))
      return make_error(errc::rejected,
                        "checkpoint barrier " + std::to_string(barrier.id) + ": subpartition "
                          + std::to_string(subpartition->index()) + " takes no more buffers");
  return unit{};
}

void result_partition::broadcast_event(const buffer& event) {
  if (released_ || finished_ || is_blocking())
    return;
  if (pending_target_)
    throw std::logic_error("result_partition: an event while a record waits for a buffer");
  for (std::size_t i = 0; i < builders_.size(); ++i)
    flush_builder(i);
  for (auto& subpartition : subpartitions_)
    (void)subpartition->add(buffer::unpooled_copy(event.bytes(), event.kind()));
}

void result_partition::finish() {
  check_writable("finish");
  if (pending_target_)
    throw std::logic_error("result_partition: finish while a blocked record waits");
  for (std::size_t i = 0; i < builders_.size(); ++i)
    flush_builder(i);
  // An empty builder still holds a pool buffer; give it back before the pool is left idle.
  for (auto& builder : builders_)
    builder.reset();
  for (auto& subpartition : subpartitions_)
    subpartition->finish();
  finished_ = true;
  // Every buffer of a blocking partition was copied and recycled: the consumers' stage may have
  // the memory.
  if (is_blocking() && pool_)
    pool_->destroy();
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

std::optional<error> result_partition::first_failure() const {
  for (const auto& subpartition : subpartitions_)
    if (auto failed = subpartition->failure())
      return make_error(failed->code,
                        "result partition " + to_string(id_) + ": " + failed->message);
  return std::nullopt;
}

expected<std::unique_ptr<result_subpartition_view>> result_partition::create_subpartition_view(
  std::size_t index, availability_listener listener) {
  if (released_)
    return make_error(errc::illegal_state, "partition " + to_string(id_) + " is released");
  if (index >= subpartitions_.size())
    return make_error(errc::invalid_argument,
                      "partition " + to_string(id_) + " has "
                        + std::to_string(subpartitions_.size()) + " subpartitions, no index "
                        + std::to_string(index));
  return subpartitions_[index]->create_read_view(std::move(listener));
}

} // namespace flint::network
