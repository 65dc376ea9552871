// Flink-style configuration: value syntax, typed options, flink-conf.yaml and -D overrides.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "runtime/config/config_loader.hpp"
#include "runtime/config/config_options.hpp"
#include "runtime/config/configuration.hpp"
#include "runtime/config/metric_reporters.hpp"

using namespace flint;
using namespace flint::config;
using namespace std::chrono_literals;

namespace {

bool mentions(const error& e, const std::string& text) {
  return e.message.find(text) != std::string::npos;
}

/// A temporary file that removes itself.
class temp_file {
public:
  explicit temp_file(const std::string& content) {
    char name[] = "/tmp/flint-conf-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << content;
  }
  ~temp_file() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

} // namespace

// -- value syntax -------------------------------------------------------------------------------

TEST_CASE("durations read as Flink reads them: a bare number is milliseconds") {
  CHECK(parse_duration("10 s").value() == 10s);
  CHECK(parse_duration("100 ms").value() == 100ms);
  CHECK(parse_duration("10000").value() == 10s);
  CHECK(parse_duration("  5min ").value() == 5min);
  CHECK(parse_duration("5 m").value() == 5min);
  CHECK(parse_duration("2 h").value() == 2h);
  CHECK(parse_duration("1 d").value() == 24h);
  CHECK(parse_duration("3 Seconds").value() == 3s);
  CHECK(parse_duration("250 us").value() == 250us);
  CHECK(parse_duration("7ns").value() == 7ns);
  CHECK(parse_duration("0").value() == 0ns);
  for (const char* bad_text : {"", "  ", "s", "ten seconds", "-5 s", "1.5 s", "10 fortnights",
                               "99999999999999999999", "9999999999 d"}) {
    CAPTURE(bad_text);
    auto d = parse_duration(bad_text);
    REQUIRE_FALSE(d);
    CHECK(d.error().code == errc::invalid_argument);
  }
  CHECK(mentions(parse_duration("10 fortnights").error(), "unknown time unit 'fortnights'"));
  CHECK(format_duration(10s) == "10 s");
  CHECK(format_duration(5min) == "5 min");
  CHECK(format_duration(100ms) == "100 ms");
  CHECK(format_duration(1500ms) == "1500 ms");
  CHECK(format_duration(0ms) == "0 ms");
}

TEST_CASE("memory sizes read Flink's units, powers of 1024") {
  CHECK(parse_memory_size("32kb").value().bytes == 32 * 1024);
  CHECK(parse_memory_size("64 mb").value().bytes == 64ull << 20);
  CHECK(parse_memory_size("1g").value().bytes == 1ull << 30);
  CHECK(parse_memory_size("2 TB").value().bytes == 2ull << 40);
  CHECK(parse_memory_size("4096").value().bytes == 4096);
  CHECK(parse_memory_size("10 bytes").value().bytes == 10);
  CHECK_FALSE(parse_memory_size("lots"));
  CHECK_FALSE(parse_memory_size("12 parsecs"));
  CHECK_FALSE(parse_memory_size("99999999999 tb"));
  CHECK(format_memory_size({32 * 1024}) == "32 kb");
  CHECK(format_memory_size({64ull << 20}) == "64 mb");
  CHECK(format_memory_size({1000}) == "1000 b");
}

TEST_CASE("integers, booleans and host:port addresses") {
  CHECK(parse_int(" 42 ").value() == 42);
  CHECK(parse_int("-1").value() == -1);
  CHECK(parse_int("+7").value() == 7);
  CHECK_FALSE(parse_int("4 slots"));
  CHECK_FALSE(parse_int(""));
  CHECK_FALSE(parse_int("99999999999999999999"));
  CHECK(parse_bool("TRUE").value());
  CHECK_FALSE(parse_bool("false").value());
  CHECK_FALSE(parse_bool("yes"));
  auto hp = parse_host_port("jm.lan:6123");
  REQUIRE(hp);
  CHECK(hp->host == "jm.lan");
  CHECK(hp->port == 6123);
  auto v6 = parse_host_port("[fd00::1]:8081");
  REQUIRE(v6);
  CHECK(v6->host == "fd00::1");
  CHECK(v6->to_string() == "[fd00::1]:8081");
  for (const char* bad_text :
       {"jm.lan", ":6123", "jm.lan:", "jm.lan:70000", "jm.lan:x", "fd00::1:80", "[fd00::1]"}) {
    CAPTURE(bad_text);
    CHECK_FALSE(parse_host_port(bad_text));
  }
}

// -- configuration and options ------------------------------------------------------------------

TEST_CASE("options give Flink's defaults when unset") {
  configuration cfg;
  CHECK(cfg.get(options::jobmanager_rpc_address).value() == "localhost");
  CHECK(cfg.get(options::jobmanager_rpc_port).value() == 6123);
  CHECK(cfg.get(options::taskmanager_number_of_task_slots).value() == 1);
  CHECK(cfg.get(options::parallelism_default).value() == 1);
  CHECK(cfg.get(options::heartbeat_interval).value() == 10s);
  CHECK(cfg.get(options::heartbeat_timeout).value() == 50s);
  CHECK(cfg.get(options::heartbeat_rpc_failure_threshold).value() == 2);
  CHECK(cfg.get(options::rpc_ask_timeout).value() == 10s);
  CHECK(cfg.get(options::slot_request_timeout).value() == 5min);
  CHECK(cfg.get(options::slot_idle_timeout).value() == 50s);
  CHECK(cfg.get(options::resourcemanager_taskmanager_timeout).value() == 30s);
  CHECK(cfg.get(options::taskmanager_slot_timeout).value() == 10s);
  CHECK(cfg.get(options::local_number_taskmanager).value() == 1);
  CHECK(cfg.get(options::execution_buffer_timeout).value() == 100ms);
  CHECK(cfg.get(options::taskmanager_memory_segment_size).value().bytes == 32 * 1024);
  CHECK(cfg.get(options::cluster_registration_initial_timeout).value() == 100ms);
  CHECK(cfg.get(options::cluster_registration_max_timeout).value() == 30s);
  CHECK(cfg.get(options::cluster_registration_error_delay).value() == 10s);
  CHECK(cfg.get(options::cluster_registration_refused_registration_delay).value() == 30s);
  // No default: unset is "nothing", and get() says which key is missing.
  CHECK_FALSE(cfg.find(options::taskmanager_host).value().has_value());
  auto host = cfg.get(options::taskmanager_host);
  REQUIRE_FALSE(host);
  CHECK(host.error().code == errc::not_found);
  CHECK(mentions(host.error(), "taskmanager.host"));
  // The checkpoint keys (execution.checkpointing.*, state.*) are known: no "not used" warning.
  CHECK(unknown_keys([] {
          configuration c;
          c.set("execution.checkpointing.interval", "200 ms");
          c.set("state.checkpoints.dir", "/tmp/x");
          return c;
        }())
          .empty());
  CHECK(options::all().size() == 106);
  CHECK(validate(cfg));
}

TEST_CASE("typed getters parse set values and name key, value and origin when they cannot") {
  configuration cfg;
  cfg.set("heartbeat.interval", "5 s");
  cfg.set("taskmanager.numberOfTaskSlots", "4");
  cfg.set("heartbeat.timeout", "soon", "conf.yaml:7");
  cfg.set(options::parallelism_default, 3);
  CHECK(cfg.get(options::heartbeat_interval).value() == 5s);
  CHECK(cfg.get_duration("heartbeat.interval").value() == 5s);
  CHECK(cfg.get(options::taskmanager_number_of_task_slots).value() == 4);
  CHECK(cfg.get_raw("parallelism.default") == "3");
  auto timeout = cfg.get(options::heartbeat_timeout);
  REQUIRE_FALSE(timeout);
  CHECK(timeout.error().code == errc::invalid_argument);
  CHECK(mentions(timeout.error(), "'soon'"));
  CHECK(mentions(timeout.error(), "'heartbeat.timeout'"));
  CHECK(mentions(timeout.error(), "conf.yaml:7"));
  auto invalid = validate(cfg);
  REQUIRE_FALSE(invalid);
  CHECK(mentions(invalid.error(), "heartbeat.timeout"));

  cfg.set("taskmanager.numberOfTaskSlots", "0");
  auto slots = cfg.get(options::taskmanager_number_of_task_slots);
  REQUIRE_FALSE(slots);
  CHECK(mentions(slots.error(), "'0'"));
  CHECK(mentions(slots.error(), "at least 1"));
  cfg.set("taskmanager.memory.segment-size", "48 kb");
  CHECK(mentions(cfg.get(options::taskmanager_memory_segment_size).error(), "power of two"));
  cfg.set("jobmanager.rpc.port", "99999");
  CHECK(mentions(cfg.get(options::jobmanager_rpc_port).error(), "port"));
  CHECK(cfg.get_int("no.such.key").error().code == errc::not_found);
  cfg.set("jobmanager.address", "jm:6123");
  CHECK(cfg.get_host_port("jobmanager.address").value().port == 6123);
  cfg.set("flag", "True");
  CHECK(cfg.get_bool("flag").value());
}

TEST_CASE("validate wants the heartbeat timeout no shorter than the interval") {
  configuration cfg;
  cfg.set("heartbeat.interval", "10 s");
  cfg.set("heartbeat.timeout", "5 s");
  auto v = validate(cfg);
  REQUIRE_FALSE(v);
  CHECK(mentions(v.error(), "heartbeat.timeout (5 s)"));
}

// -- YAML -----------------------------------------------------------------------------------------

TEST_CASE("flink-conf.yaml: flat lines and nested maps flattened with dots") {
  auto cfg = parse_yaml(R"(
# a comment
jobmanager.rpc.address: jm.lan
jobmanager.rpc.port: 6124
heartbeat:
  interval: 2 s
  timeout: "20 s"
taskmanager:
  numberOfTaskSlots: 4
  memory:
    segment-size: 64kb
env.java.opts: -Xmx1g   # unknown to Flint, kept
taskmanager.host:
classloader.parent-first-patterns.additional: [org.a, org.b]
)",
                        "conf.yaml");
  REQUIRE_MESSAGE(cfg, (cfg ? "" : cfg.error().to_string()));
  CHECK(cfg->get(options::jobmanager_rpc_address).value() == "jm.lan");
  CHECK(cfg->get(options::jobmanager_rpc_port).value() == 6124);
  CHECK(cfg->get(options::heartbeat_interval).value() == 2s);
  CHECK(cfg->get(options::heartbeat_timeout).value() == 20s);
  CHECK(cfg->get(options::taskmanager_number_of_task_slots).value() == 4);
  CHECK(cfg->get(options::taskmanager_memory_segment_size).value().bytes == 64 * 1024);
  CHECK(cfg->get_raw("env.java.opts") == "-Xmx1g");
  CHECK_FALSE(cfg->contains("taskmanager.host")); // empty values are unset, as in Flink
  CHECK(cfg->get_raw("classloader.parent-first-patterns.additional") == "org.a;org.b");
  CHECK(cfg->origin("heartbeat.interval") == "conf.yaml:6");
  CHECK(
    unknown_keys(*cfg)
    == std::vector<std::string>{"classloader.parent-first-patterns.additional", "env.java.opts"});
  CHECK(validate(*cfg));
  CHECK(parse_yaml("").value().empty());
  CHECK(parse_yaml("# only comments\n").value().empty());
}

TEST_CASE("YAML errors carry the line: syntax, a bare value, a key given twice") {
  auto syntax = parse_yaml("a: 1\nb: [unclosed\nc: 3\n", "conf.yaml");
  REQUIRE_FALSE(syntax);
  CHECK(syntax.error().code == errc::invalid_argument);
  CHECK(mentions(syntax.error(), "conf.yaml:"));
  CHECK(mentions(syntax.error(), "YAML syntax error"));

  auto indent = parse_yaml("a: 1\n  b: 2\nc: 3\n", "conf.yaml");
  REQUIRE_FALSE(indent);
  CHECK(mentions(indent.error(), "conf.yaml:2:"));

  auto scalar = parse_yaml("just text\n", "conf.yaml");
  REQUIRE_FALSE(scalar);
  CHECK(mentions(scalar.error(), "key: value"));

  auto twice = parse_yaml("heartbeat.interval: 1 s\nheartbeat:\n  interval: 2 s\n", "conf.yaml");
  REQUIRE_FALSE(twice);
  CHECK(mentions(twice.error(), "conf.yaml:3"));
  CHECK(mentions(twice.error(), "'heartbeat.interval' is already set on line 1"));
}

TEST_CASE("files: a good one loads, a missing one is a clear not_found") {
  temp_file file("parallelism.default: 8\nrpc.ask.timeout: 30000\n");
  auto cfg = load_yaml_file(file.path());
  REQUIRE(cfg);
  CHECK(cfg->get(options::parallelism_default).value() == 8);
  CHECK(cfg->get(options::rpc_ask_timeout).value() == 30s);
  CHECK(cfg->origin("rpc.ask.timeout") == file.path() + ":2");

  auto missing = load_yaml_file("/nonexistent/flink-conf.yaml");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::not_found);
  CHECK(mentions(missing.error(), "/nonexistent/flink-conf.yaml"));
  CHECK(mentions(missing.error(), "No such file"));

  temp_file broken("a: [1, 2\n");
  auto bad_file = load_yaml_file(broken.path());
  REQUIRE_FALSE(bad_file);
  CHECK(mentions(bad_file.error(), broken.path() + ":"));
}

// -- command line ---------------------------------------------------------------------------------

TEST_CASE("-D pairs override the file, the other arguments are kept in order") {
  auto file = parse_yaml("heartbeat.interval: 10 s\nparallelism.default: 2\n", "conf.yaml");
  REQUIRE(file);
  std::vector<std::string> args = {"run",
                                   "-Dparallelism.default=4",
                                   "job.so",
                                   "-D",
                                   "heartbeat.interval=1 s",
                                   "-Denv.opts=a=b",
                                   "--",
                                   "-Dnot.mine=1",
                                   "--input"};
  auto cli = extract_dynamic_properties(args);
  REQUIRE_MESSAGE(cli, (cli ? "" : cli.error().to_string()));
  CHECK(cli->rest == std::vector<std::string>{"run", "job.so", "-Dnot.mine=1", "--input"});
  CHECK(cli->overrides.size() == 3);
  CHECK(cli->overrides.get_raw("env.opts") == "a=b");
  auto cfg = *file;
  cfg.merge(cli->overrides);
  CHECK(cfg.get(options::parallelism_default).value() == 4);
  CHECK(cfg.get(options::heartbeat_interval).value() == 1s);
  CHECK(cfg.origin("parallelism.default") == "-Dparallelism.default");

  cfg.merge(
    extract_dynamic_properties(std::vector<std::string>{"-Drpc.ask.timeout=never"})->overrides);
  auto bad_value = cfg.get(options::rpc_ask_timeout);
  REQUIRE_FALSE(bad_value);
  CHECK(mentions(bad_value.error(), "'never' for configuration key 'rpc.ask.timeout' (set in -D"));

  for (const auto& bad_args :
       std::vector<std::vector<std::string>>{{"-D"}, {"-Dnovalue"}, {"-D", "novalue"}, {"-D=1"}}) {
    auto r = extract_dynamic_properties(bad_args);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_argument);
  }
}

TEST_CASE("load_configuration: file, then -D over it, then validation") {
  temp_file file("taskmanager.numberOfTaskSlots: 2\nheartbeat.timeout: 50 s\n");
  std::vector<std::string> args = {"-Dtaskmanager.numberOfTaskSlots=4", "--role", "taskmanager"};
  auto loaded = load_configuration(file.path(), args);
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().to_string()));
  CHECK(loaded->config.get(options::taskmanager_number_of_task_slots).value() == 4);
  CHECK(loaded->rest == std::vector<std::string>{"--role", "taskmanager"});
  CHECK(load_configuration("", {}).has_value()); // no file: defaults

  std::vector<std::string> bad_args = {"-Dheartbeat.interval=60 s"};
  auto invalid = load_configuration(file.path(), bad_args);
  REQUIRE_FALSE(invalid);
  CHECK(mentions(invalid.error(), "heartbeat.interval"));
  auto missing = load_configuration("/nonexistent.yaml", {});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::not_found);
}

TEST_CASE("the shipped deploy/flink-conf.yaml lists every option with its default") {
  auto cfg = load_yaml_file(FLINT_CONF_TEMPLATE);
  REQUIRE_MESSAGE(cfg, (cfg ? "" : cfg.error().to_string()));
  CHECK(validate(*cfg));
  CHECK(unknown_keys(*cfg).empty());
  for (const auto& option : options::all()) {
    CAPTURE(option.key);
    // An option with a current Flink name over its key is listed under that name: the template
    // must not draw its own deprecation warning.
    auto key = option.key;
    for (const auto& alias : key_aliases())
      if (alias.read_as == option.key && alias.name_is_current)
        key = alias.name;
    if (option.default_text.empty()) {
      CHECK_FALSE(cfg->contains(key)); // shown commented out
      continue;
    }
    CHECK_FALSE(cfg->contains(key == option.key ? "" : option.key));
    REQUIRE(cfg->contains(key));
    // Spelled as the option formats its default, so the template reads like `flint` prints.
    CHECK(cfg->get_raw(key) == option.default_text);
  }
  CHECK(resolve_aliases(*cfg).empty());
}

TEST_CASE(
  "the node keys: TaskManager ports default to any free port, bind hosts and ids are unset") {
  configuration cfg;
  CHECK(cfg.get(options::taskmanager_rpc_port).value() == 0);
  CHECK(cfg.get(options::taskmanager_data_port).value() == 0);
  CHECK_FALSE(cfg.find(options::jobmanager_bind_host).value().has_value());
  CHECK_FALSE(cfg.find(options::taskmanager_bind_host).value().has_value());
  CHECK_FALSE(cfg.find(options::taskmanager_resource_id).value().has_value());
  CHECK_FALSE(cfg.find(options::blob_storage_directory).value().has_value());
  cfg.set("taskmanager.data.port", "70000", "-D");
  auto bad = validate(cfg);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("taskmanager.data.port") != std::string::npos);
  cfg.set("taskmanager.data.port", "6124", "-D");
  cfg.set("jobmanager.bind-host", "", "-D");
  CHECK_FALSE(validate(cfg));
}

// -- where the file is found, and Flink's other names for keys ---------------------------------

TEST_CASE("the configuration directory: FLINT_CONF_DIR over FLINK_CONF_DIR, config.yaml first") {
  auto root = std::filesystem::temp_directory_path() / ("flint_conf_dir_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "flint");
  std::filesystem::create_directories(root / "flink");
  std::ofstream(root / "flink" / "flink-conf.yaml") << "jobmanager.rpc.port: 7001\n";

  unsetenv("FLINT_CONF_DIR");
  unsetenv("FLINK_CONF_DIR");
  CHECK(config_dir_from_env().empty());
  CHECK(config_file_in("").empty());
  setenv("FLINK_CONF_DIR", (root / "flink").c_str(), 1);
  CHECK(config_dir_from_env() == (root / "flink").string());
  CHECK(config_file_in(config_dir_from_env()) == (root / "flink" / "flink-conf.yaml").string());
  setenv("FLINT_CONF_DIR", (root / "flint").c_str(), 1);
  CHECK(config_dir_from_env() == (root / "flint").string()); // Flint's own name wins
  CHECK(config_file_in(config_dir_from_env()).empty());       // a directory with neither file

  // Flink 2's config.yaml, standard nested YAML, is read before flink-conf.yaml.
  std::ofstream(root / "flink" / "config.yaml") << "jobmanager:\n  rpc:\n    port: 7002\n";
  unsetenv("FLINT_CONF_DIR");
  auto file = config_file_in(config_dir_from_env());
  CHECK(file == (root / "flink" / "config.yaml").string());
  auto loaded = load_configuration(file, {});
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().to_string()));
  CHECK(loaded->config.get(options::jobmanager_rpc_port).value() == 7002);
  unsetenv("FLINK_CONF_DIR");
  std::filesystem::remove_all(root);
}

TEST_CASE("pekko.ask.timeout and pekko.framesize are read as rpc.*, which win when both are set") {
  temp_file file("pekko:\n  ask.timeout: 3 s\n  framesize: 10485760b\n");
  auto loaded = load_configuration(file.path(), {});
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().to_string()));
  CHECK(loaded->config.get(options::rpc_ask_timeout).value() == 3s);
  CHECK(loaded->config.get(options::rpc_max_frame_size).value().bytes == 10u << 20);
  CHECK(loaded->warnings.empty());
  CHECK(unknown_keys(loaded->config).empty());

  std::vector<std::string> args = {"-Drpc.ask.timeout=7 s"};
  loaded = load_configuration(file.path(), args);
  REQUIRE(loaded);
  CHECK(loaded->config.get(options::rpc_ask_timeout).value() == 7s);

  std::vector<std::string> bad = {"-Dpekko.ask.timeout=0 s"};
  auto invalid = load_configuration("", bad);
  REQUIRE_FALSE(invalid);
  CHECK(mentions(invalid.error(), "rpc.ask.timeout"));
}

TEST_CASE("Flink 2's execution.checkpointing.* keys win over the deprecated state.* ones, "
          "which are warned about") {
  temp_file file(R"(
execution:
  checkpointing:
    dir: /tmp/new-chk
    savepoint-dir: /tmp/new-sp
    num-retained: 3
    incremental: true
state.checkpoints.dir: /tmp/old-chk
)");
  auto loaded = load_configuration(file.path(), {});
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().to_string()));
  const auto& cfg = loaded->config;
  CHECK(cfg.get(options::state_checkpoints_dir).value() == "/tmp/new-chk");
  CHECK(cfg.get(options::state_savepoints_dir).value() == "/tmp/new-sp");
  CHECK(cfg.get_int(options::state_checkpoints_num_retained.key).value() == 3);
  CHECK(cfg.get_bool(options::state_backend_incremental.key).value());
  CHECK(cfg.origin(options::state_checkpoints_dir.key) == file.path() + ":4");
  CHECK(loaded->warnings
        == std::vector<std::string>{"Config uses deprecated configuration key "
                                    "'state.checkpoints.dir' instead of proper key "
                                    "'execution.checkpointing.dir'"});
  CHECK(unknown_keys(cfg).empty());

  // Only the old name: still read, and warned about.
  std::vector<std::string> args = {"-Dstate.savepoints.dir=/tmp/old-sp"};
  loaded = load_configuration("", args);
  REQUIRE(loaded);
  CHECK(loaded->config.get(options::state_savepoints_dir).value() == "/tmp/old-sp");
  REQUIRE(loaded->warnings.size() == 1);
  CHECK(loaded->warnings[0].find("'execution.checkpointing.savepoint-dir'") != std::string::npos);

  // The new name's value is checked as the old one's: a relative directory is refused.
  std::vector<std::string> relative = {"-Dexecution.checkpointing.dir=chk"};
  CHECK_FALSE(load_configuration("", relative));
}

TEST_CASE("Flink 1.19's execution.buffer-timeout.interval wins over execution.buffer-timeout, "
          "which is warned about") {
  temp_file file("execution:\n  buffer-timeout:\n    interval: 5 ms\n");
  auto loaded = load_configuration(file.path(), {});
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().to_string()));
  CHECK(loaded->config.get(options::execution_buffer_timeout).value() == 5ms);
  CHECK(loaded->warnings.empty());
  CHECK(unknown_keys(loaded->config).empty());

  std::vector<std::string> both = {"-Dexecution.buffer-timeout=50 ms"};
  loaded = load_configuration(file.path(), both);
  REQUIRE(loaded);
  CHECK(loaded->config.get(options::execution_buffer_timeout).value() == 5ms);
  CHECK(loaded->warnings
        == std::vector<std::string>{"Config uses deprecated configuration key "
                                    "'execution.buffer-timeout' instead of proper key "
                                    "'execution.buffer-timeout.interval'"});
  std::vector<std::string> bad = {"-Dexecution.buffer-timeout.interval=soon"};
  auto invalid = load_configuration("", bad);
  REQUIRE_FALSE(invalid);
  CHECK(mentions(invalid.error(), "execution.buffer-timeout"));
}

TEST_CASE("taskmanager.memory.network.* are known keys: max sizes the pool, min must not exceed "
          "it and the fraction must lie between 0 and 1") {
  temp_file file("taskmanager:\n  memory:\n    network:\n      fraction: 0.2\n      min: 32 mb\n"
                 "      max: 128 mb\n");
  auto loaded = load_configuration(file.path(), {});
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().to_string()));
  CHECK(unknown_keys(loaded->config).empty());
  CHECK(loaded->config.get(options::taskmanager_memory_network_max).value().bytes == 128u << 20);
  CHECK(loaded->config.get(options::taskmanager_memory_network_fraction).value() == "0.2");

  std::vector<std::string> min_over_max = {"-Dtaskmanager.memory.network.min=256 mb"};
  auto refused = load_configuration(file.path(), min_over_max);
  REQUIRE_FALSE(refused);
  CHECK(mentions(refused.error(), "taskmanager.memory.network.min (256 mb)"));
  for (const char* bad_fraction : {"1", "1.5", "-0.1", "lots"}) {
    CAPTURE(bad_fraction);
    std::vector<std::string> args = {std::string("-Dtaskmanager.memory.network.fraction=")
                                     + bad_fraction};
    auto invalid = load_configuration("", args);
    REQUIRE_FALSE(invalid);
    CHECK(mentions(invalid.error(), "taskmanager.memory.network.fraction"));
  }
  std::vector<std::string> tiny = {"-Dtaskmanager.memory.network.max=1 kb"};
  CHECK_FALSE(load_configuration("", tiny));
  // Flink's default min (64 mb) does not hold back a smaller pool nobody set a min for.
  std::vector<std::string> small = {"-Dtaskmanager.memory.network.max=8 mb"};
  CHECK(load_configuration("", small));
}

TEST_CASE("metric reporters under any name: the Prometheus factory starts one, another factory is "
          "a warning, and their keys are known") {
  configuration cfg;
  cfg.set("metrics.reporter.promgateway.factory.class", prometheus_reporter_factory);
  cfg.set("metrics.reporter.promgateway.port", "9250-9260");
  cfg.set("metrics.reporter.promgateway.filterLabelValueCharacters", "false");
  cfg.set("metrics.reporter.jmx.factory.class", "org.apache.flink.metrics.jmx.JMXReporterFactory");
  auto reporters = read_metric_reporters(cfg);
  REQUIRE(reporters);
  REQUIRE(reporters->prometheus);
  CHECK(reporters->prometheus->name == "promgateway");
  CHECK(reporters->prometheus->port == "9250-9260");
  CHECK_FALSE(reporters->prometheus->filter_label_values);
  REQUIRE(reporters->warnings.size() == 1);
  CHECK(reporters->warnings[0].find("Could not instantiate metrics reporter jmx") == 0);
  CHECK(reporters->warnings[0].find("JMXReporterFactory") != std::string::npos);
  CHECK(unknown_keys(cfg).empty());

  // metrics.reporters names the ones to start.
  cfg.set("metrics.reporters", "jmx");
  reporters = read_metric_reporters(cfg);
  REQUIRE(reporters);
  CHECK_FALSE(reporters->prometheus);
  CHECK(reporters->warnings.size() == 1);

  // Flink's default filter, and a bad value named.
  configuration plain;
  plain.set("metrics.reporter.prom.factory.class", prometheus_reporter_factory);
  reporters = read_metric_reporters(plain);
  REQUIRE(reporters);
  REQUIRE(reporters->prometheus);
  CHECK(reporters->prometheus->port == "9249");
  CHECK(reporters->prometheus->filter_label_values);
  plain.set("metrics.reporter.prom.filterLabelValueCharacters", "sometimes");
  auto bad = read_metric_reporters(plain);
  REQUIRE_FALSE(bad);
  CHECK(mentions(bad.error(), "metrics.reporter.prom.filterLabelValueCharacters"));

  configuration typo;
  typo.set("metrics.reporter.prom.prot", "1");
  CHECK(unknown_keys(typo) == std::vector<std::string>{"metrics.reporter.prom.prot"});
}

TEST_CASE("secrets are recognised as Flink's GlobalConfiguration.isSensitive recognises them") {
  for (const char* key : {"security.ssl.internal.key-password", "security.ssl.rest.key-password",
                          "s3.secret-key", "fs.azure.account.key.acct.blob.core.windows.net",
                          "metrics.reporter.dghttp.apikey", "some.Token", "x.basic-auth"})
    CHECK_MESSAGE(config::is_sensitive_key(key), key);
  for (const char* key : {"jobmanager.rpc.address", "security.ssl.internal.keystore",
                          "state.checkpoints.dir"})
    CHECK_FALSE_MESSAGE(config::is_sensitive_key(key), key);
}
