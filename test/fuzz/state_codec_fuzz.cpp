// libFuzzer target: the checkpoint state codecs (runtime/state/state_codec): `_metadata` files
// read back on recovery, and the snapshots and restores tasks and the JobMaster exchange; and
// a key group's bytes of a keyed state file (backend_entry_format) with each key and value read
// as a typed record, as a restore does. The first byte picks the decoder (0: checkpoint
// metadata, 1: task state snapshot, 2: task restore, 3: key group entries, modulo 4).

#include "runtime/state/backend_entry_format.hpp"
#include "runtime/state/state_codec.hpp"
#include "runtime/streaming/type_serializer.hpp"
#include "test/fuzz/fuzz_input.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace {

template <class T>
void read_as(std::string_view bytes) {
  flint::streaming::byte_reader in(std::span<const char>(bytes.data(), bytes.size()));
  try {
    (void)flint::streaming::type_serializer<T>::read(in);
  } catch (const std::runtime_error&) {
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  auto bytes = flint::fuzz::as_chars(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: (void)flint::state::decode_checkpoint_metadata(bytes, "fuzz/_metadata"); break;
    case 1: (void)flint::state::decode_task_state_snapshot(bytes); break;
    case 2: (void)flint::state::decode_task_restore(bytes); break;
    default:
      (void)flint::state::read_key_group_entries(
        bytes, [](std::string_view, std::string_view key, std::string_view value) {
          read_as<std::string>(key);
          read_as<std::vector<std::int64_t>>(value);
          read_as<std::vector<std::string>>(value);
        });
      break;
  }
  return 0;
}
