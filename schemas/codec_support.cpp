#include "schemas/codec_support.hpp"

namespace flint::wire {

std::vector<char> to_bytes(capnp::MessageBuilder& message) {
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asChars();
  return {bytes.begin(), bytes.end()};
}

capnp::ReaderOptions reader_options() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 64 * 1024 * 1024; // 512 MiB of reads at most
  options.nestingLimit = 32;
  return options;
}

aligned_words::aligned_words(std::span<const char> bytes) {
  auto count = bytes.size() / sizeof(capnp::word);
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(capnp::word) == 0) {
    view_ = {reinterpret_cast<const capnp::word*>(bytes.data()), count};
    return;
  }
  copy_ = kj::heapArray<capnp::word>(count);
  std::memcpy(copy_.begin(), bytes.data(), count * sizeof(capnp::word));
  view_ = copy_.asPtr();
}

} // namespace flint::wire
