// flint-node: one process of a standalone Flint cluster (Flink's jobmanager.sh / taskmanager.sh
// entry points).
//
//   flint-node jobmanager  [--config FILE] [-D key=value]... [--host H] [--rpc-port N]
//   flint-node taskmanager [--config FILE] [-D key=value]... [--host H] [--rpc-port N]
//                          [--data-port N] [--slots N] [--jobmanager HOST:PORT]
//   common: [--bind-host H] [--log-file F] [--log-level L] [--trace-file F]
//
// The configuration is Flink's config.yaml or flink-conf.yaml (runtime/config): --config, else
// the one in $FLINT_CONF_DIR or $FLINK_CONF_DIR; `-D` pairs override the file and the flags
// override both. Logs go to stderr (or --log-file); once the node is up, exactly
// one line goes to stdout for scripts and tests to wait on:
//
//   flint-node ready role=jobmanager host=H rpc_port=N metrics_port=M rest_port=R endpoints=a,b,... pid=P
//   flint-node ready role=taskmanager host=H rpc_port=N data_port=N metrics_port=M resource_id=R slots=S
//                    jobmanager=H:N pid=P                                   (one line)
//
// SIGTERM or SIGINT shuts the node down cleanly (exit 0). A bad configuration or flag: a clear
// message on stderr, exit 1.

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/config/config_loader.hpp"
#include "runtime/config/config_options.hpp"
#include "runtime/node/job_manager_node.hpp"
#include "runtime/node/task_manager_node.hpp"
#if defined(FLINT_NODE_HAS_JOB_LIBRARY)
#include "api/job_library.hpp"
#include "api/rest_job_programs.hpp"
#endif

using namespace flint;

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "flint-node: error: %s\n", message.c_str());
  return 1;
}

struct flags {
  std::string role;
  std::string config_file;
  std::optional<std::string> host;
  std::optional<std::string> bind_host;
  std::optional<int> rpc_port;
  std::optional<int> data_port;
  std::optional<int> slots;
  std::optional<std::string> jobmanager;
  std::string log_file;
  std::string log_level;
  std::string trace_file;
};

/// Flags are the most explicit source: they go over the file and the -D pairs.
expected<unit> apply_flags(const flags& f, config::configuration& cfg) {
  namespace opt = config::options;
  bool jm = f.role == "jobmanager";
  if (f.host)
    cfg.set(jm ? opt::jobmanager_rpc_address.key : opt::taskmanager_host.key, *f.host, "--host");
  if (f.bind_host)
    cfg.set(jm ? opt::jobmanager_bind_host.key : opt::taskmanager_bind_host.key, *f.bind_host,
            "--bind-host");
  if (f.rpc_port)
    cfg.set(jm ? opt::jobmanager_rpc_port.key : opt::taskmanager_rpc_port.key,
            std::to_string(*f.rpc_port), "--rpc-port");
  if (f.data_port)
    cfg.set(opt::taskmanager_data_port.key, std::to_string(*f.data_port), "--data-port");
  if (f.slots)
    cfg.set(opt::taskmanager_number_of_task_slots.key, std::to_string(*f.slots), "--slots");
  if (f.jobmanager) {
    auto hp = config::parse_host_port(*f.jobmanager);
    if (!hp)
      return make_error(errc::invalid_argument,
                        "--jobmanager '" + *f.jobmanager + "': " + hp.error().message);
    cfg.set(opt::jobmanager_rpc_address.key, hp->host, "--jobmanager");
    cfg.set(opt::jobmanager_rpc_port.key, std::to_string(hp->port), "--jobmanager");
  }
  return unit{};
}

/// A log file written through at once: `tail -f` and tests should see each line when it happens,
/// whichever logger wrote it.
class flushing_file_sink final : public spdlog::sinks::base_sink<std::mutex> {
public:
  explicit flushing_file_sink(const std::string& path) { file_.open(path, false); }

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    file_.write(line);
    file_.flush();
  }
  void flush_() override { file_.flush(); }

private:
  spdlog::details::file_helper file_;
};

/// `%*` in the pattern: the level as log4j writes it ("INFO ", "WARN ", "ERROR").
class log4j_level final : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    static constexpr const char* names[] = {"TRACE", "DEBUG", "INFO ", "WARN ",
                                            "ERROR", "FATAL", "OFF  "};
    std::string_view name = names[static_cast<int>(msg.level)];
    dest.append(name.data(), name.data() + name.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<log4j_level>();
  }
};

expected<unit> setup_logging(const flags& f) {
  std::string level = f.log_level;
  if (level.empty()) {
    const char* env = std::getenv("FLINT_LOG_LEVEL");
    level = env != nullptr ? env : "info";
  }
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    return make_error(
      errc::invalid_argument,
      "--log-level '" + level + "': use trace, debug, info, warn, error, critical or off");
  spdlog::sink_ptr sink;
  try {
    if (f.log_file.empty())
      sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    else
      sink = std::make_shared<flushing_file_sink>(f.log_file);
  } catch (const std::exception& e) {
    return make_error(errc::invalid_argument,
                      "cannot open log file '" + f.log_file + "': " + e.what());
  }
  // Flink's log4j layout: "2026-11-29 12:00:00,123 INFO  org.apache.flink... - message".
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<log4j_level>('*').set_pattern("%Y-%m-%d %H:%M:%S,%e %* %n - %v");
  sink->set_formatter(std::move(formatter));
  configure_logging({sink}, lvl);
  return unit{};
}

/// The file this node logs to: --log-file (flint-daemon.sh gives one in $FLINT_LOG_DIR); empty
/// otherwise. REST serves it as /jobmanager/log (a TaskManager's as /taskmanagers/:id/log) and
/// lists the files of its directory (Flink's log directory), so it is never guessed: wherever a
/// user's shell sends standard error (a home directory, the current one) is not served.
std::filesystem::path log_file_of(const flags& f) {
  if (!f.log_file.empty())
    return std::filesystem::absolute(f.log_file);
  return {};
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts)
    out += (out.empty() ? "" : ",") + p;
  return out;
}

void print_ready(const std::string& line) {
  std::printf("%s pid=%d\n", line.c_str(), static_cast<int>(getpid()));
  std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
  // Signals are taken by sigwait below; blocked before any thread starts, so every thread of
  // the actor system inherits the mask and none of them is interrupted.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::vector<std::string> args(argv + 1, argv + argc);
  auto dynamic = config::extract_dynamic_properties(args);
  if (!dynamic)
    return fail(dynamic.error().message);

  flags f;
  CLI::App app{
    "flint-node: a JobManager or TaskManager process of a standalone Flint cluster.\n"
    "-D key=value (repeatable) sets a configuration key over the file."};
  app.name("flint-node");
  app.add_option("role", f.role, "jobmanager or taskmanager")
    ->required()
    ->check(CLI::IsMember({"jobmanager", "taskmanager"}));
  app.add_option("-c,--config", f.config_file,
                 "configuration file to read (default: config.yaml, else flink-conf.yaml, in "
                 "$FLINT_CONF_DIR or $FLINK_CONF_DIR)")->check(CLI::ExistingFile);
  app.add_option(
    "--host", f.host,
    "jobmanager: jobmanager.rpc.address; taskmanager: taskmanager.host (the address it publishes)");
  app.add_option("--bind-host", f.bind_host, "jobmanager.bind-host / taskmanager.bind-host");
  app.add_option("-p,--rpc-port", f.rpc_port, "jobmanager.rpc.port / taskmanager.rpc.port")
    ->check(CLI::Range(0, 65535));
  app.add_option("--data-port", f.data_port, "taskmanager.data.port")->check(CLI::Range(0, 65535));
  app.add_option("-s,--slots", f.slots, "taskmanager.numberOfTaskSlots")
    ->check(CLI::Range(1, 100000));
  app.add_option("-m,--jobmanager", f.jobmanager, "HOST:PORT of the JobManager (taskmanager)");
  // A path or a file:// URI, as every path key (config/file_path.hpp).
  auto local_path = [](std::string& text) -> std::string {
    auto path = config::parse_path(text);
    if (!path)
      return "'" + text + "': " + path.error().message;
    text = path->string();
    return {};
  };
  app.add_option("--log-file", f.log_file, "write the log here instead of stderr")
    ->transform(CLI::Validator(local_path, "FILE"));
  app
    .add_option("--trace-file", f.trace_file,
                "also append this node's message trace to a JSON-lines file")
    ->transform(CLI::Validator(local_path, "FILE"));
  app.add_option("--log-level", f.log_level,
                 "trace, debug, info (default; or FLINT_LOG_LEVEL), warn, error");
  // CLI11 wants argv[0] first; the -D pairs are already out.
  std::vector<std::string> rest;
  rest.reserve(dynamic->rest.size());
  for (auto i = dynamic->rest.rbegin(); i != dynamic->rest.rend(); ++i)
    rest.push_back(*i);
  try {
    app.parse(rest);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "flint-node: error: %s\nRun 'flint-node --help' for usage.\n", e.what());
    return 1;
  }

  // As Flink's entry points: --config wins, else the directory the environment names.
  if (f.config_file.empty())
    f.config_file = config::config_file_in(config::config_dir_from_env());
  config::configuration cfg;
  if (!f.config_file.empty()) {
    auto file = config::load_yaml_file(f.config_file);
    if (!file)
      return fail(file.error().message);
    cfg = std::move(*file);
  }
  cfg.merge(dynamic->overrides);
  if (auto ok = apply_flags(f, cfg); !ok)
    return fail(ok.error().message);
  auto deprecated = config::resolve_aliases(cfg);
  if (auto ok = config::validate(cfg); !ok)
    return fail(ok.error().message);
  if (auto ok = setup_logging(f); !ok)
    return fail(ok.error().message);
  // The node's own lines, under its role's name (Flink's entry points log as their class).
  auto log = make_endpoint_logger(f.role);
  if (!f.config_file.empty())
    log->info("Loading configuration from {}.", f.config_file);
  // Secrets are hidden, as Flink's GlobalConfiguration logs them: REST serves this log.
  for (const auto& key : cfg.keys())
    log->info("Loading configuration property: {}, {}", key,
              config::is_sensitive_key(key) ? std::string(config::hidden_value) : *cfg.get_raw(key));
  for (const auto& line : deprecated)
    log->warn("{}", line);
  for (const auto& key : config::unknown_keys(cfg))
    log->warn("Configuration key '{}' is not used by Flint.", key);

  std::optional<node::job_manager_node> jm;
  std::optional<node::task_manager_node> tm;
  if (f.role == "jobmanager") {
    auto settings = node::read_job_manager_settings(cfg);
    if (!settings)
      return fail(settings.error().message);
    settings->rest.log_file = log_file_of(f);
    node::job_manager_node_services services;
#if defined(FLINT_NODE_HAS_JOB_LIBRARY)
    // REST's /jars/:jarid/run builds uploaded libraries' jobs here, as `flint run` does.
    services.job_programs = api::make_rest_job_program_builder();
#endif
    jm.emplace(std::move(*settings), rpc::node_options{}, std::move(services));
    if (!f.trace_file.empty() && !jm->recorder().enable_file(f.trace_file))
      return fail("cannot write the trace file '" + f.trace_file + "'");
    if (auto ok = jm->start(); !ok)
      return fail("could not start the JobManager: " + ok.error().message);
    print_ready("flint-node ready role=jobmanager host=" + jm->settings().rpc_address
                + " rpc_port=" + std::to_string(jm->rpc_port())
                + " metrics_port=" + std::to_string(jm->metrics_port()) + " rest_port="
                + std::to_string(jm->rest_port()) + " endpoints=" + join(jm->endpoints()));
  } else {
    auto settings = node::read_task_manager_settings(cfg);
    if (!settings)
      return fail(settings.error().message);
    settings->log_file = log_file_of(f);
    node::task_manager_node_services services;
#if defined(FLINT_NODE_HAS_JOB_LIBRARY)
    // Tasks come from the job libraries `flint run` uploads to the JobManager's blob server.
    services.make_invokables =
      [s = *settings](caf::actor_system& sys, streaming::streaming_environment& env,
                      const std::string& resource_id, node::job_manager_locator job_manager) {
        // Without blob.storage.directory the cache is a private temporary directory of its own.
        return api::make_library_task_factory(sys, env, std::move(job_manager),
                                              s.blob_storage_directory.empty()
                                                ? std::filesystem::path{}
                                                : s.blob_storage_directory / resource_id);
      };
#endif
    tm.emplace(std::move(*settings), std::move(services));
    if (!f.trace_file.empty() && !tm->recorder().enable_file(f.trace_file))
      return fail("cannot write the trace file '" + f.trace_file + "'");
    if (auto ok = tm->start(); !ok)
      return fail("could not start the TaskManager: " + ok.error().message);
    const auto& s = tm->settings();
    print_ready("flint-node ready role=taskmanager host=" + tm->host() + " rpc_port="
                + std::to_string(tm->rpc_port()) + " data_port=" + std::to_string(tm->data_port())
                + " metrics_port=" + std::to_string(tm->metrics_port()) + " resource_id="
                + tm->resource_id() + " slots=" + std::to_string(s.number_of_slots)
                + " jobmanager=" + s.jobmanager_address + ":" + std::to_string(s.jobmanager_port));
  }

  int sig = 0;
  sigwait(&stop_signals, &sig);
  log->info("RECEIVED SIGNAL {}: {}. Shutting down as requested.", sig,
            sig == SIGTERM ? "SIGTERM" : "SIGINT");
  if (jm)
    jm->shutdown();
  if (tm)
    tm->shutdown();
  log->info("flint-node {} stopped.", f.role);
  return 0;
}
