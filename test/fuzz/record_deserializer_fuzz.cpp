// libFuzzer target: the record deserializer (runtime/network), which reassembles length-prefixed
// records from the buffers a remote producer sent, and the typed read of each record
// (runtime/streaming/type_serializer) whose lengths and counts must never size more than the
// record holds, as four container types and as a user record with a field of every supported kind
// (fuzz_records.hpp). The input is a sequence of buffers, each a 1-byte length and its bytes
// (fuzz_input.hpp).

#include "runtime/network/record_deserializer.hpp"
#include "runtime/streaming/type_serializer.hpp"
#include "test/fuzz/fuzz_input.hpp"
#include "test/fuzz/fuzz_records.hpp"

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

/// Reads `record` as a T, as an operator's input or a restored state value does; a corrupt
/// record is a runtime_error.
template <class T>
std::size_t read_as(std::span<const char> record) {
  flint::streaming::byte_reader in(record);
  try {
    auto value = flint::streaming::type_serializer<T>::read(in);
    return flint::streaming::type_serializer<T>::size(value);
  } catch (const std::runtime_error&) {
    return 0;
  }
}

/// Reads `record` as a T into `reused` (read_into, as a restored state value is read over the
/// last one: kept storage, an optional to empty, a map with other keys). What was read must write
/// back in as many bytes as it took; anything else is a finding.
template <class T>
std::size_t read_into_as(std::span<const char> record, T& reused) {
  flint::streaming::byte_reader in(record);
  try {
    flint::streaming::type_serializer<T>::read_into(in, reused);
  } catch (const std::runtime_error&) {
    return 0;
  }
  auto size = flint::streaming::type_serializer<T>::size(reused);
  if (size != record.size() - in.remaining())
    std::abort();
  return size;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using flint::network::deserialization_result;
  flint::network::record_deserializer deserializer;
  std::size_t seen = 0;
  auto reused = flint::fuzz::sample_every_kind();
  for (auto piece : flint::fuzz::split_pieces(flint::fuzz::as_chars(data, size))) {
    deserializer.set_next_buffer(flint::network::buffer::unpooled_copy(piece));
    std::span<const char> record;
    while (deserializer.next_record(record) == deserialization_result::record) {
      // Touch every byte, so a view past the buffer shows.
      for (char c : record)
        seen += static_cast<unsigned char>(c);
      seen += read_as<std::tuple<std::string, std::int64_t>>(record);
      seen += read_as<std::vector<std::string>>(record);
      seen += read_as<std::vector<std::vector<std::int32_t>>>(record);
      seen += read_as<std::vector<std::pair<std::int64_t, double>>>(record);
      seen += read_as<flint::fuzz::every_kind>(record);
      seen += read_as<std::vector<flint::fuzz::account>>(record);
      seen += read_into_as(record, reused);
    }
  }
  (void)deserializer.has_unfinished_data();
  deserializer.clear();
  return seen == 1 ? 1 : 0;
}
