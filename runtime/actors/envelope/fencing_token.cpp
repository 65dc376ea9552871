#include "runtime/actors/envelope/fencing_token.hpp"

#include <cstdio>

namespace flint::rpc {

fencing_token fencing_token::generate(std::mt19937_64& rng) {
  fencing_token t{rng(), rng()};
  t.hi = (t.hi & ~0xF000ull) | 0x4000ull; // version 4
  t.lo = (t.lo & ~(0xC000ull << 48)) | (0x8000ull << 48); // RFC 4122 variant
  return t;
}

std::string fencing_token::to_string() const {
  if (is_nil())
    return "<none>";
  char buf[37];
  std::snprintf(
    buf, sizeof(buf), "%08llx-%04llx-%04llx-%04llx-%012llx",
    static_cast<unsigned long long>(hi >> 32), static_cast<unsigned long long>((hi >> 16) & 0xFFFF),
    static_cast<unsigned long long>(hi & 0xFFFF), static_cast<unsigned long long>(lo >> 48),
    static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFull));
  return buf;
}

} // namespace flint::rpc
