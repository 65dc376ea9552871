#include "apps/cli/command_line.hpp"

#include <algorithm>

namespace flint::cli {

split_command split_at_library(const std::vector<std::string>& args,
                               const std::vector<std::string>& value_options) {
  split_command out;
  std::size_t i = 0;
  auto takes_value = [&](const std::string& a) {
    return std::find(value_options.begin(), value_options.end(), a) != value_options.end();
  };
  for (; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--") {
      out.own.push_back(a);
      ++i;
      break;
    }
    if (a.size() > 1 && a[0] == '-') {
      out.own.push_back(a);
      if (takes_value(a) && i + 1 < args.size())
        out.own.push_back(args[++i]);
      continue;
    }
    break; // the library
  }
  if (i < args.size()) {
    out.own.push_back(args[i]);
    out.job_args.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  }
  return out;
}

} // namespace flint::cli
