#include "runtime/network/buffer_builder.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace flint::network {

buffer_builder::buffer_builder(buffer target) : target_(std::move(target)) {}

void buffer_builder::spill() noexcept {
  if (staged_ > 0)
    std::memcpy(target_.data() + position_ - staged_, staging_.data(), staged_);
  staged_ = 0;
}

std::size_t buffer_builder::append(std::span<const char> bytes) {
  spill();
  auto n = std::min(bytes.size(), writable());
  if (n > 0)
    std::memcpy(target_.data() + position_, bytes.data(), n);
  position_ += n;
  return n;
}

buffer buffer_builder::finish() {
  spill();
  target_.set_size(position_);
  position_ = 0;
  return std::move(target_);
}

} // namespace flint::network
