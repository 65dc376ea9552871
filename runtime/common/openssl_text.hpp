#pragma once
/// What RPC's TLS (runtime/actors/rpc/tls.cpp) and REST's (runtime/rest/rest_tls.cpp) both need
/// from OpenSSL when they read key files: the reason of a failure, and the key's passphrase.
/// Header-only: only those two files include it, and both link OpenSSL.

#include <algorithm>
#include <string>

#include <openssl/err.h>

namespace flint {

/// OpenSSL's reason for the last failure, taken off this thread's queue.
inline std::string openssl_reason() {
  auto code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return "unknown reason";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

/// A pem_password_cb handing over the std::string its userdata points to.
inline int openssl_password_cb(char* buf, int size, int, void* userdata) {
  const auto* password = static_cast<const std::string*>(userdata);
  auto n = std::min<std::size_t>(password->size(), static_cast<std::size_t>(size));
  std::copy_n(password->data(), n, buf);
  return static_cast<int>(n);
}

} // namespace flint
