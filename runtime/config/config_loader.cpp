#include "runtime/config/config_loader.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace flint::config {

namespace {

error bad(std::string message) {
  return make_error(errc::invalid_argument, std::move(message));
}

/// Flattens one map into dotted keys; remembers each key's line to report duplicates.
class flattener {
public:
  flattener(std::string_view origin, configuration& out) : origin_(origin), out_(out) {}

  std::optional<error> map(const YAML::Node& node, const std::string& prefix) {
    for (const auto& pair : node) {
      const auto& key_node = pair.first;
      const auto& value = pair.second;
      auto line = key_node.Mark().line + 1;
      if (!key_node.IsScalar())
        return bad(where(line) + ": keys must be plain text");
      auto key = key_node.Scalar();
      if (key.empty())
        return bad(where(line) + ": empty key");
      auto full = prefix.empty() ? key : prefix + "." + key;
      if (value.IsMap()) {
        if (auto err = map(value, full))
          return err;
        continue;
      }
      std::string text;
      if (value.IsSequence()) {
        for (const auto& item : value) {
          if (!item.IsScalar())
            return bad(where(line) + ": the list under '" + full + "' must hold plain values");
          text += (text.empty() ? "" : ";") + item.Scalar();
        }
      } else if (value.IsScalar()) {
        text = value.Scalar();
      }
      if (auto [it, fresh] = lines_.emplace(full, line); !fresh)
        return bad(where(line) + ": key '" + full + "' is already set on line "
                   + std::to_string(it->second));
      // Flink's loader skips keys without a value; so does this one, rather than store "".
      if (text.empty())
        continue;
      out_.set(full, std::move(text), where(line));
    }
    return std::nullopt;
  }

  std::string where(int line) const { return std::string(origin_) + ":" + std::to_string(line); }

private:
  std::string_view origin_;
  configuration& out_;
  std::map<std::string, int> lines_;
};

} // namespace

expected<configuration> parse_yaml(std::string_view text, std::string_view origin) {
  configuration cfg;
  try {
    auto root = YAML::Load(std::string(text));
    if (!root || root.IsNull())
      return cfg;
    if (!root.IsMap())
      return bad(std::string(origin) + ":" + std::to_string(root.Mark().line + 1)
                 + ": expected 'key: value' lines, not a single value or a list");
    flattener f(origin, cfg);
    if (auto err = f.map(root, ""))
      return *err;
  } catch (const YAML::ParserException& e) {
    return bad(std::string(origin) + ":" + std::to_string(e.mark.line + 1) + ":"
               + std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    return bad(std::string(origin) + ": cannot read YAML: " + e.what());
  }
  return cfg;
}

expected<configuration> load_yaml_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(errc::not_found,
                      "cannot read configuration file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return make_error(errc::not_found,
                      "cannot read configuration file '" + path + "': " + std::strerror(errno));
  return parse_yaml(text.str(), path);
}

std::string config_dir_from_env() {
  for (const char* name : {"FLINT_CONF_DIR", "FLINK_CONF_DIR"})
    if (const char* dir = std::getenv(name); dir != nullptr && *dir != '\0')
      return dir;
  return {};
}

std::string config_file_in(const std::string& dir) {
  if (dir.empty())
    return {};
  std::error_code ec;
  for (const char* name : {"config.yaml", "flink-conf.yaml"})
    if (auto p = std::filesystem::path(dir) / name; std::filesystem::is_regular_file(p, ec))
      return p.string();
  return {};
}

expected<dynamic_properties> extract_dynamic_properties(std::span<const std::string> args) {
  dynamic_properties out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    if (arg == "--") {
      out.rest.insert(out.rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                      args.end());
      break;
    }
    if (!arg.starts_with("-D")) {
      out.rest.push_back(arg);
      continue;
    }
    std::string pair = arg.substr(2);
    if (pair.empty()) {
      if (i + 1 == args.size())
        return bad("-D at the end of the command line needs key=value");
      pair = args[++i];
    }
    auto eq = pair.find('=');
    if (eq == std::string::npos)
      return bad("'-D" + pair + "' is not -Dkey=value");
    auto key = pair.substr(0, eq);
    if (key.empty())
      return bad("'-D" + pair + "' has an empty key");
    out.overrides.set(key, pair.substr(eq + 1), "-D" + key);
  }
  return out;
}

expected<loaded_configuration> load_configuration(const std::string& file,
                                                  std::span<const std::string> args) {
  auto cli = extract_dynamic_properties(args);
  if (!cli)
    return cli.error();
  configuration cfg;
  if (!file.empty()) {
    auto loaded = load_yaml_file(file);
    if (!loaded)
      return loaded.error();
    cfg = std::move(*loaded);
  }
  cfg.merge(cli->overrides);
  auto warnings = resolve_aliases(cfg);
  if (auto ok = validate(cfg); !ok)
    return ok.error();
  return loaded_configuration{std::move(cfg), std::move(cli->rest), std::move(warnings)};
}

} // namespace flint::config
