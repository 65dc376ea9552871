// libFuzzer target: the flink-conf.yaml parser (runtime/config/config_loader).

#include "runtime/config/config_loader.hpp"
#include "test/fuzz/fuzz_input.hpp"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto bytes = flint::fuzz::as_chars(data, size);
  (void)flint::config::parse_yaml(std::string_view(bytes.data(), bytes.size()), "fuzz.yaml");
  return 0;
}
