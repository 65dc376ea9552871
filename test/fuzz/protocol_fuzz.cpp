// libFuzzer target: every protocol codec generated from schemas/*.capnp (flint-capnpc). The first
// byte picks the message type (its index in protocol_codecs.hpp, modulo their number); the rest
// is the message.

#include "protocol_codecs.hpp"
#include "test/fuzz/fuzz_input.hpp"

namespace {

using decode_fn = void (*)(std::span<const char>);

template <class T>
void decode_one(std::span<const char> bytes) {
  (void)flint::rpc::codec<T>::decode(bytes);
}

#define FLINT_FUZZ_DECODER(T) &decode_one<T>,
constexpr decode_fn decoders[] = {FLINT_FUZZ_PROTOCOL_CODECS(FLINT_FUZZ_DECODER)};
#undef FLINT_FUZZ_DECODER

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  constexpr auto count = sizeof(decoders) / sizeof(decoders[0]);
  decoders[data[0] % count](flint::fuzz::as_chars(data + 1, size - 1));
  return 0;
}
