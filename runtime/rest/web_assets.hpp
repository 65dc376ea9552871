#pragma once
/// The dashboard's files (web/), compiled into the binary at build time (cmake/EmbedFiles.cmake).

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace flint::rest {

struct web_asset {
  /// "/index.html", "/app.js", ...
  std::string_view path;
  std::string_view content_type;
  const unsigned char* data;
  std::size_t size;
};

std::span<const web_asset> web_assets();

/// The asset at `path` ("/" is "/index.html"); nullopt when there is none.
inline std::optional<web_asset> find_web_asset(std::string_view path) {
  if (path == "/")
    path = "/index.html";
  for (const auto& a : web_assets())
    if (a.path == path)
      return a;
  return std::nullopt;
}

} // namespace flint::rest
