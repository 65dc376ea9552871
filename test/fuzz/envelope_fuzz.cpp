// libFuzzer target: the RPC envelope decoder (runtime/actors/envelope), what every endpoint runs
// on each call that arrives from another process.

#include "runtime/actors/envelope/envelope.hpp"
#include "test/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto bytes = flint::fuzz::as_chars(data, size);
  if (auto received = flint::rpc::read_envelope(bytes)) {
    // The payload view must lie inside the input.
    if (!received->payload.empty()
        && (received->payload.data() < bytes.data()
            || received->payload.data() + received->payload.size() > bytes.data() + bytes.size()))
      __builtin_trap();
  }
  (void)flint::rpc::decode_envelope(bytes);
  return 0;
}
