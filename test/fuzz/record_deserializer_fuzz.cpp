// libFuzzer target: the record deserializer (runtime/network), which reassembles length-prefixed
// records from the buffers a remote producer sent. The input is a sequence of buffers, each a
// 1-byte length and its bytes (fuzz_input.hpp).

#include "runtime/network/record_deserializer.hpp"
#include "test/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using flint::network::deserialization_result;
  flint::network::record_deserializer deserializer;
  std::size_t seen = 0;
  for (auto piece : flint::fuzz::split_pieces(flint::fuzz::as_chars(data, size))) {
    deserializer.set_next_buffer(flint::network::buffer::unpooled_copy(piece));
    std::span<const char> record;
    while (deserializer.next_record(record) == deserialization_result::record) {
      // Touch every byte, so a view past the buffer shows.
      for (char c : record)
        seen += static_cast<unsigned char>(c);
    }
  }
  (void)deserializer.has_unfinished_data();
  deserializer.clear();
  return seen == 1 ? 1 : 0;
}
