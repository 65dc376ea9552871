#pragma once
/// Splitting a `flint run`/`flint info` command line the way Flink's CLI does: flint's own
/// options come before the job library; everything after the library belongs to the job
/// (`flint run -p 2 wordcount.so --input in.txt --output out`).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace flint::cli {

struct split_command {
  /// The action's own arguments, up to and including the library path.
  std::vector<std::string> own;
  /// The job's arguments (after the library path).
  std::vector<std::string> job_args;
};

/// `args` are the action's arguments (after the action word). Options in `value_options` take
/// the next argument as their value unless written `--opt=value` (or `-Dk=v`); "--" ends
/// flint's options, so the library may start with '-'. No library: everything is `own`.
split_command split_at_library(const std::vector<std::string>& args,
                               const std::vector<std::string>& value_options);

} // namespace flint::cli
