// libFuzzer target: the command line's -D pairs (runtime/config/config_loader). The input is the
// arguments, separated by NUL bytes.

#include "runtime/config/config_loader.hpp"
#include "test/fuzz/fuzz_input.hpp"

#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args(1);
  for (auto c : flint::fuzz::as_chars(data, size)) {
    if (c == '\0')
      args.emplace_back();
    else
      args.back() += c;
  }
  (void)flint::config::extract_dynamic_properties(args);
  return 0;
}
