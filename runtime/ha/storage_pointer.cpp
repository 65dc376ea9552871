#include "runtime/ha/storage_pointer.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "runtime/config/file_path.hpp"

namespace flint::ha {

std::string printable_pointer(std::string_view pointer) {
  constexpr std::size_t limit = 200;
  std::string out;
  for (char c : pointer.substr(0, limit)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  if (pointer.size() > limit)
    out += "...";
  return out;
}

expected<std::filesystem::path> resolve_storage_pointer(std::string_view pointer,
                                                        const std::filesystem::path& root,
                                                        std::string_view what) {
  auto refuse = [&](const std::string& why) {
    return make_error(errc::rejected, std::string(what) + ": ZooKeeper points to '"
                                        + printable_pointer(pointer) + "', " + why
                                        + "; refused (neither read nor deleted)");
  };
  if (pointer.empty())
    return refuse("an empty path");
  // A NUL would end the path early at open(); any control character is no path of ours.
  if (std::any_of(pointer.begin(), pointer.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      }))
    return refuse("not a path (control characters)");
  auto path = config::parse_path(pointer, config::path_scope::shared);
  if (!path)
    return refuse("not a path of this machine: " + path.error().message);
  auto normal_root = root.lexically_normal();
  auto outside = "outside the store's directory " + normal_root.string()
    + " in high-availability.storageDir";
  // Element by element: a textual prefix would take "/ha-other" for a child of "/ha".
  auto [r, p] = std::mismatch(normal_root.begin(), normal_root.end(), path->begin(), path->end());
  bool root_consumed = r == normal_root.end()
    // lexically_normal keeps a trailing '/' as an empty last element.
    || (std::next(r) == normal_root.end() && r->empty());
  if (!root_consumed || p == path->end())
    return refuse(outside);
  return std::move(*path);
}

} // namespace flint::ha
