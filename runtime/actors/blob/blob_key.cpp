#include "runtime/actors/blob/blob_key.hpp"

#include <stdexcept>

#include <openssl/evp.h>

namespace flint::blob {

namespace {

bool is_lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

} // namespace

std::array<std::uint8_t, 32> sha256(std::string_view bytes) {
  std::array<std::uint8_t, 32> out{};
  unsigned int size = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate its context: a bug or an exhausted
  // process, not a business error.
  if (::EVP_Digest(bytes.data(), bytes.size(), out.data(), &size, ::EVP_sha256(), nullptr) != 1
      || size != out.size())
    throw std::runtime_error("OpenSSL's SHA-256 failed");
  return out;
}

std::string content_key(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  auto digest = sha256(bytes);
  std::string out;
  out.reserve(64);
  for (auto b : digest) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 0xf]);
  }
  return out;
}

std::string job_package_key(std::string_view job_id_hex) {
  return "job-" + std::string(job_id_hex);
}

bool is_content_key(std::string_view key) {
  return key.size() == 64 && is_lower_hex(key);
}

bool is_valid_key(std::string_view key) {
  if (is_content_key(key))
    return true;
  return key.size() == 4 + 32 && key.substr(0, 4) == "job-" && is_lower_hex(key.substr(4));
}

} // namespace flint::blob
