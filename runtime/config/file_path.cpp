#include "runtime/config/file_path.hpp"

#include "runtime/config/configuration.hpp"

#include <cctype>
#include <string>

namespace flint::config {

namespace {

error bad(std::string message) {
  return make_error(errc::invalid_argument, std::move(message));
}

/// RFC 3986's scheme: a letter, then letters, digits, '+', '-' or '.'.
bool is_scheme(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s.front())))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.')
      return false;
  return true;
}

} // namespace

expected<std::filesystem::path> parse_path(std::string_view text, path_scope scope) {
  auto s = trim(text);
  if (s.empty())
    return bad("the path is empty");
  std::string_view path = s;
  // As Flink's Path: a scheme is what comes before the first ':' when no '/' comes earlier.
  if (auto colon = s.find(':'); colon != std::string_view::npos
      && s.substr(0, colon).find('/') == std::string_view::npos && is_scheme(s.substr(0, colon))) {
    auto scheme = lower(s.substr(0, colon));
    if (scheme != "file")
      return bad("the scheme '" + scheme
                 + ":' is not supported: Flint reads and writes only the local file system (a "
                   "plain path or file:///path; mount shared storage and give its path)");
    path = s.substr(colon + 1);
    if (path.starts_with("//")) {
      auto rest = path.substr(2);
      auto slash = rest.find('/');
      auto host = rest.substr(0, slash);
      if (!host.empty() && lower(host) != "localhost")
        return bad("the file URI names the host '" + std::string(host)
                   + "', not a path on this machine (an absolute path is file:///path, with "
                     "three slashes)");
      path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    }
    if (path.empty())
      return bad("the file URI holds no path");
  }
  auto normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/')
    normal.pop_back();
  std::filesystem::path out(normal);
  if (scope == path_scope::shared && !out.is_absolute())
    return bad(relative_shared_path_problem);
  return out;
}

expected<std::vector<std::filesystem::path>> parse_path_list(std::string_view text) {
  // The entries between separators; a scheme and the "//..." or "/..." after its ':' are one.
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',' && text[i] != ':')
      continue;
    auto piece = text.substr(start, i - start);
    bool scheme_colon = i < text.size() && text[i] == ':' && i + 1 < text.size()
      && text[i + 1] == '/' && is_scheme(trim(piece));
    if (!scheme_colon) {
      pieces.push_back(piece);
      start = i + 1;
    }
  }
  std::vector<std::filesystem::path> out;
  for (auto piece : pieces) {
    if (trim(piece).empty())
      continue;
    auto path = parse_path(piece);
    if (!path)
      return bad("'" + std::string(trim(piece)) + "': " + path.error().message);
    out.push_back(std::move(*path));
  }
  return out;
}

} // namespace flint::config
