#include "runtime/network/pipelined_subpartition_view.hpp"

#include <utility>

namespace flint::network {

pipelined_subpartition_view::pipelined_subpartition_view(
  std::shared_ptr<pipelined_subpartition> subpartition, availability_listener listener)
  : subpartition_(std::move(subpartition)) {
  subpartition_->set_listener(std::move(listener));
}

pipelined_subpartition_view::~pipelined_subpartition_view() {
  release_all_resources();
}

std::optional<buffer_and_backlog> pipelined_subpartition_view::get_next_buffer() {
  if (released_)
    return std::nullopt;
  return subpartition_->poll_buffer();
}

bool pipelined_subpartition_view::is_available(std::size_t credits) const {
  return !released_ && subpartition_->is_available(credits);
}

std::size_t pipelined_subpartition_view::backlog() const {
  return subpartition_->backlog();
}

void pipelined_subpartition_view::release_all_resources() {
  if (released_)
    return;
  released_ = true;
  subpartition_->clear_listener();
}

} // namespace flint::network
