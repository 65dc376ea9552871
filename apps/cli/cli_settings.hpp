#pragma once
/// What every `flint` command starts from: the configuration (a flink-conf.yaml and -D pairs),
/// the JobManager address and the command's timeout, resolved the way Flink's CLI does.

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"

namespace flint::cli {

/// The command line's shared options, as given (empty: not given).
struct common_options {
  std::string config_file; ///< --config
  std::string jobmanager; ///< -m host:port
  std::string timeout; ///< --timeout, Flink duration syntax ("30 s", "500 ms")
  std::vector<std::string> dynamic; ///< -D key=value
};

/// The resolved settings of one command.
struct cli_settings {
  config::configuration config;
  /// Where the configuration came from ("" when no file was found: built-in defaults).
  std::string config_source;
  /// The JobManager (or, for `trace`, the node) to talk to.
  config::host_port address;
  /// `-m` was given: with ZooKeeper HA, the Dispatcher is otherwise found through ZooKeeper.
  bool address_given = false;
  /// `-m` named the JobManager's REST endpoint (Flink's meaning), this one: `address` is the RPC
  /// address its `/jobmanager/config` gave.
  std::optional<config::host_port> rest_address;
  /// Bound on one ask (`--timeout`, else `rpc.ask.timeout`).
  std::chrono::nanoseconds ask_timeout = std::chrono::seconds(10);
  /// `--timeout` when given: also bounds commands that wait (a job's result, a trace tail).
  std::optional<std::chrono::nanoseconds> timeout;
};

/// The configuration file to read: `--config` if given, else `config.yaml` or `flink-conf.yaml`
/// (in that order) in `$FLINT_CONF_DIR` or `$FLINK_CONF_DIR` (`config::config_dir_from_env`), else
/// in `deploy/` of the repository the binary was built in (`<repo>/build*/bin/`), else none
/// (built-in defaults).
std::string find_config_file(const std::string& given, const std::string& exe_path);

/// Loads the configuration and resolves address and timeouts. `-m` is asked as a REST endpoint
/// first (rest_address.hpp), as Flink's `-m` names one; otherwise it is the RPC address. Errors
/// name the bad value.
expected<cli_settings> resolve(const common_options& opts, const std::string& exe_path);

/// The path of the running executable (/proc/self/exe), or `argv0` when that fails.
std::string executable_path(const char* argv0);

/// "10 s", "250 ms": for messages.
std::string describe(std::chrono::nanoseconds d);

} // namespace flint::cli
