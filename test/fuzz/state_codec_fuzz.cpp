// libFuzzer target: the checkpoint state codecs (runtime/state/state_codec): `_metadata` files
// read back on recovery, and the snapshots and restores tasks and the JobMaster exchange. The
// first byte picks the decoder (0: checkpoint metadata, 1: task state snapshot, 2: task
// restore, modulo 3).

#include "runtime/state/state_codec.hpp"
#include "test/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  auto bytes = flint::fuzz::as_chars(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: (void)flint::state::decode_checkpoint_metadata(bytes, "fuzz/_metadata"); break;
    case 1: (void)flint::state::decode_task_state_snapshot(bytes); break;
    default: (void)flint::state::decode_task_restore(bytes); break;
  }
  return 0;
}
