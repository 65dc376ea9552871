#include "runtime/metrics/prometheus_text.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace flint::metrics {

namespace {

std::string sanitized(const std::string& s) {
  std::string out = s;
  for (auto& c : out)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
          || c == ':'))
      c = '_';
  return out;
}

std::string label_value(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof(buf), "%.1f", v);
  else
    std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

} // namespace

std::string prometheus_name(const std::string& scope, const std::string& name) {
  auto full = "flink_" + (scope.empty() ? std::string{} : scope + "_") + name;
  auto s = sanitized(full);
  if (!s.empty() && s[0] >= '0' && s[0] <= '9')
    s.insert(s.begin(), '_');
  return s;
}

std::string to_prometheus_text(const std::vector<sample>& samples, const text_options& options) {
  // One family per name, its lines together (the format wants each family once).
  std::map<std::string, std::vector<const sample*>> families;
  for (const auto& s : samples)
    families[prometheus_name(s.scope, s.name)].push_back(&s);
  std::string out;
  for (const auto& [name, members] : families) {
    out += "# HELP " + name + " " + members.front()->name + " (scope: " + members.front()->scope
      + ")\n";
    out += "# TYPE " + name + " gauge\n";
    for (const auto* s : members) {
      out += name;
      if (!s->vars.empty()) {
        out += '{';
        for (std::size_t i = 0; i < s->vars.size(); ++i) {
          if (i != 0)
            out += ',';
          const auto& value = s->vars[i].second;
          out += sanitized(s->vars[i].first) + "=\""
            + (options.filter_label_values ? sanitized(value) : label_value(value)) + "\"";
        }
        out += '}';
      }
      out += ' ' + number(s->value) + '\n';
    }
  }
  return out;
}

} // namespace flint::metrics
