#include "runtime/common/elf_symbols.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

namespace {

std::string fixture_image() {
  std::ifstream in(ELF_SYMBOLS_FIXTURE, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_CASE("exported_functions lists a library's default-visibility functions with a prefix") {
  auto image = fixture_image();
  auto entries = flint::exported_functions(image, "flint_job_entry_");
  REQUIRE(entries);
  std::sort(entries->begin(), entries->end());
  CHECK(*entries == std::vector<std::string>{"flint_job_entry_alpha", "flint_job_entry_beta"});
  auto main = flint::exported_functions(image, "flint_job_main");
  REQUIRE(main);
  CHECK(*main == std::vector<std::string>{"flint_job_main"});
}

TEST_CASE("exported_functions refuses what is not an ELF library, and reads nothing outside it") {
  for (std::string bad : {std::string(), std::string("payload"), std::string(64, '\0'),
                          std::string("\x7f" "ELF\x01\x01", 6)}) {
    auto listed = flint::exported_functions(bad, "");
    REQUIRE_FALSE(listed);
    CHECK(listed.error().code == flint::errc::malformed_message);
  }
  auto image = fixture_image();
  // Every truncation and random damage: an answer or a clear error, never a read past the end
  // (the sanitizer build makes a stray read fail).
  for (std::size_t size = 0; size < image.size(); size += 97) {
    auto listed = flint::exported_functions(std::string_view(image).substr(0, size), "");
    if (!listed)
      CHECK(listed.error().message.find("ELF") != std::string::npos);
  }
  std::mt19937 random(7);
  for (int round = 0; round < 2000; ++round) {
    auto damaged = image;
    for (int k = 0; k < 8; ++k)
      damaged[random() % damaged.size()] = static_cast<char>(random());
    // A copy exactly as large as the image, so a stray read is a heap overflow.
    auto listed = flint::exported_functions(damaged, "flint_");
    (void)listed;
  }
  auto headers_past_end = image;
  headers_past_end[0x28] = '\xff'; // e_shoff's low byte: section headers past the end
  headers_past_end[0x2f] = '\x7f';
  auto listed = flint::exported_functions(headers_past_end, "");
  REQUIRE_FALSE(listed);
  CHECK(listed.error().message.find("outside the file") != std::string::npos);
}
