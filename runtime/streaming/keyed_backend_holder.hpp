#pragma once
/// An operator's keyed_state_backend, made on first use from its task's settings
/// (`operator_context::state_backend`): restore, open and process all reach it through here.

#include "runtime/state/keyed_state_backend.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>

namespace flint::streaming {

class keyed_backend_holder {
public:
  keyed_backend_holder(state::keyed_state_backend_options options, state::key_group_range range)
    : options_(std::move(options)),
      range_(range) {}

  /// The backend (made now if need be; an unknown type or a RocksDB that cannot open throws,
  /// which fails the task with the message).
  state::keyed_state_backend& get() {
    if (!backend_) {
      auto made = state::make_keyed_state_backend(options_, range_);
      if (!made)
        throw std::runtime_error(made.error().message);
      backend_ = std::move(*made);
    }
    return *backend_;
  }
  bool made() const noexcept { return backend_ != nullptr; }
  const state::keyed_state_backend_options& options() const noexcept { return options_; }

  void notify_checkpoint_complete(std::int64_t checkpoint_id) {
    if (backend_)
      backend_->notify_checkpoint_complete(checkpoint_id);
  }

private:
  state::keyed_state_backend_options options_;
  state::key_group_range range_;
  std::unique_ptr<state::keyed_state_backend> backend_;
};

} // namespace flint::streaming
