#pragma once
/// The seed's Streaming WordCount (§1.2) as a reusable pipeline, so the program, its tests and
/// every process that rebuilds it (DESIGN.md "Job code") build exactly the same graph.

#include "api/api.hpp"

#include <optional>
#include <string>
#include <vector>

namespace flint::examples {

/// Where WordCount reads and writes.
struct wordcount_options {
  /// A text file; the built-in lines when unset.
  std::optional<std::string> input;
  /// A result path; standard output when unset.
  std::optional<std::string> output;
  /// Replace what exists at `output` (Flink's WriteMode.OVERWRITE); otherwise an existing path
  /// refuses the job, unless it checkpoints (its file sink adds part files to the directory).
  bool overwrite = false;
};

/// The job name the seed passes to `execute`.
inline constexpr const char* wordcount_job_name = "Streaming WordCount";

/// The built-in input (Flink's WordCountData.WORDS, from Hamlet).
const std::vector<std::string>& wordcount_default_lines();

/// Lower-cases `line` and splits it at runs of non-word characters (Java's `\W+`); may return
/// empty words, which the pipeline filters out.
std::vector<std::string> split_words(const std::string& line);

/// Adds source -> flatMap (uid flatMap-1) -> filter (filter-1) -> map (map-1) -> keyBy(0) ->
/// sum(1) -> print / writeAsText to `env`.
void build_wordcount(api::stream_execution_environment& env, const wordcount_options& options);

} // namespace flint::examples
