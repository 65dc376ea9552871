#pragma once
/// cpp-httplib as Debian builds it (libcpp-httplib.so, DEPS-NOTES): the library was compiled with
/// OpenSSL, zlib and Brotli support, and its classes' layouts depend on those three defines. A
/// translation unit that saw other defines would disagree with the library about every object
/// it shares (an ODR violation no linker reports): every Flint file includes httplib through this
/// header, and the target's link to PkgConfig::HTTPLIB (through flint_http) supplies the defines.

#if !defined(CPPHTTPLIB_OPENSSL_SUPPORT) || !defined(CPPHTTPLIB_ZLIB_SUPPORT) \
  || !defined(CPPHTTPLIB_BROTLI_SUPPORT)
#error "httplib.h needs pkg-config's cpp-httplib defines: link flint_http or PkgConfig::HTTPLIB"
#endif

#include <httplib.h>
