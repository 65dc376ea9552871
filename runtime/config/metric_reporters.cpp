#include "runtime/config/metric_reporters.hpp"

#include <algorithm>
#include <set>

namespace flint::config {

namespace {

constexpr std::string_view reporter_prefix = "metrics.reporter.";
constexpr std::string_view reporter_suffixes[] = {".factory.class", ".port",
                                                  ".filterLabelValueCharacters"};

/// The reporter name of `key` when it is `metrics.reporter.<name><suffix>`.
std::optional<std::string> reporter_name(std::string_view key, std::string_view suffix) {
  if (!key.starts_with(reporter_prefix) || !key.ends_with(suffix))
    return std::nullopt;
  auto name = key.substr(reporter_prefix.size(), key.size() - reporter_prefix.size() - suffix.size());
  if (name.empty() || name.find('.') != std::string_view::npos)
    return std::nullopt;
  return std::string(name);
}

std::vector<std::string> split_names(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(',', start);
    if (end == std::string_view::npos)
      end = text.size();
    auto name = trim(text.substr(start, end - start));
    if (!name.empty())
      out.emplace_back(name);
    start = end + 1;
  }
  return out;
}

} // namespace

bool is_metric_reporter_key(std::string_view key) {
  if (key == "metrics.reporters")
    return true;
  return std::any_of(std::begin(reporter_suffixes), std::end(reporter_suffixes),
                     [&](std::string_view suffix) { return reporter_name(key, suffix).has_value(); });
}

expected<metric_reporters> read_metric_reporters(const configuration& cfg) {
  metric_reporters out;
  std::optional<std::set<std::string>> enabled;
  if (auto list = cfg.get_raw("metrics.reporters")) {
    auto names = split_names(*list);
    enabled.emplace(names.begin(), names.end());
  }
  for (const auto& key : cfg.keys()) {
    auto name = reporter_name(key, ".factory.class");
    if (!name || (enabled && enabled->count(*name) == 0))
      continue;
    auto factory = std::string(trim(*cfg.get_raw(key)));
    auto prefix = std::string(reporter_prefix) + *name;
    if (factory != prometheus_reporter_factory) {
      out.warnings.push_back("Could not instantiate metrics reporter " + *name + ": " + key + " is '"
                             + factory + "'; Flint has only Flink's PrometheusReporter ("
                             + prometheus_reporter_factory + ")");
      continue;
    }
    if (out.prometheus) {
      out.warnings.push_back("Could not instantiate metrics reporter " + *name
                             + ": Flint runs one Prometheus reporter, and " + out.prometheus->name
                             + " is it");
      continue;
    }
    prometheus_reporter_settings settings;
    settings.name = *name;
    if (auto port = cfg.get_raw(prefix + ".port")) {
      if (trim(*port).empty())
        return make_error(errc::invalid_argument, prefix + ".port must not be empty");
      settings.port = std::string(trim(*port));
    }
    if (cfg.contains(prefix + ".filterLabelValueCharacters")) {
      auto filter = cfg.get_bool(prefix + ".filterLabelValueCharacters");
      if (!filter)
        return filter.error();
      settings.filter_label_values = *filter;
    }
    out.prometheus = std::move(settings);
  }
  return out;
}

} // namespace flint::config
