#include "schemas/codec_support.hpp"

#include <algorithm>

namespace flint::wire {

void append_bytes(std::vector<char>& out, capnp::MessageBuilder& message, std::size_t extra) {
  // Cap'n Proto's flat format written straight into the vector: messageToFlatArray would build a
  // kj::Array first and cost a second copy on every RPC.
  auto segments = message.getSegmentsForOutput();
  auto count = segments.size();
  auto table_words = count / 2 + 1;
  size_t total_words = table_words;
  for (auto& seg : segments)
    total_words += seg.size();
  auto start = out.size();
  out.reserve(start + total_words * sizeof(capnp::word) + extra);
  out.resize(start + total_words * sizeof(capnp::word));
  auto* table = reinterpret_cast<std::uint32_t*>(out.data() + start);
  std::memset(table, 0, table_words * sizeof(capnp::word));
  table[0] = static_cast<std::uint32_t>(count - 1);
  for (size_t i = 0; i < count; ++i)
    table[i + 1] = static_cast<std::uint32_t>(segments[i].size());
  auto* pos = out.data() + start + table_words * sizeof(capnp::word);
  for (auto& seg : segments) {
    std::memcpy(pos, seg.begin(), seg.size() * sizeof(capnp::word));
    pos += seg.size() * sizeof(capnp::word);
  }
}

std::vector<char> to_bytes(capnp::MessageBuilder& message) {
  std::vector<char> out;
  append_bytes(out, message);
  return out;
}

std::uint64_t traversal_limit_words(std::size_t message_words) {
  // An honest decoder reads each word about once; 8x leaves room for re-reads, and the floor
  // for small messages costs at most a few MiB of decoded values.
  constexpr std::uint64_t amplification = 8;
  constexpr std::uint64_t floor_words = 8 * 1024;
  constexpr std::uint64_t max_words = 64 * 1024 * 1024; // 512 MiB of reads at most
  return std::min(max_words, std::max(floor_words, amplification * message_words));
}

capnp::ReaderOptions reader_options(std::size_t message_words) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = traversal_limit_words(message_words);
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
