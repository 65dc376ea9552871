#pragma once
/// Where configurations come from: a `flink-conf.yaml` file and `-Dkey=value` command-line pairs.
/// Errors are values; no exception from the YAML parser escapes.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/expected.hpp"
#include "runtime/config/config_options.hpp"
#include "runtime/config/configuration.hpp"

namespace flint::config {

/// Parses YAML as Flink writes `flink-conf.yaml`: flat `key: value` lines, and nested maps whose
/// keys are joined with dots (`heartbeat: {interval: 5 s}` is `heartbeat.interval`). Lists become
/// Flink's `a;b;c`. Keys with an empty value are left unset, as Flink does. `origin` names the
/// source in errors and in each entry's origin ("<origin>:<line>"). A syntax error, a top level
/// that is not a map, or a key given twice is an `invalid_argument` error with the line.
expected<configuration> parse_yaml(std::string_view text, std::string_view origin = "<yaml>");

/// Reads and parses a file; a file that cannot be read is `not_found` with the reason.
expected<configuration> load_yaml_file(const std::string& path);

/// The configuration directory the environment names, as Flink's `FLINK_CONF_DIR`:
/// `FLINT_CONF_DIR` if set and not empty, else `FLINK_CONF_DIR`, else empty.
std::string config_dir_from_env();

/// The configuration file in `dir`, as Flink 1.19+ looks it up: `config.yaml` (Flink 2's name)
/// before `flink-conf.yaml`; empty when `dir` is empty or holds neither.
std::string config_file_in(const std::string& dir);

/// What is left of a command line once its `-D` pairs are taken out.
struct dynamic_properties {
  configuration overrides;
  /// The other arguments, in order.
  std::vector<std::string> rest;
};

/// Takes `-Dkey=value` and `-D key=value` out of `args` (the value may contain '='). After "--"
/// nothing more is taken (the "--" itself is dropped). A `-D` without `key=value`, or with an empty
/// key, is an `invalid_argument` error.
expected<dynamic_properties> extract_dynamic_properties(std::span<const std::string> args);

/// A process's configuration and the arguments left for it.
struct loaded_configuration {
  configuration config;
  std::vector<std::string> rest;
  /// Lines to log as warnings: deprecated keys, named with their new ones (`resolve_aliases`).
  std::vector<std::string> warnings;
};

/// What a process starts from: `file` (when not empty) with the command line's `-D` pairs over
/// it, its aliases resolved (`resolve_aliases`) and checked with `validate`; the arguments that
/// were not `-D` pairs are returned in `rest`.
expected<loaded_configuration> load_configuration(const std::string& file,
                                                  std::span<const std::string> args);

} // namespace flint::config
