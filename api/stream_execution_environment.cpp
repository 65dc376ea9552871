#include "api/stream_execution_environment.hpp"

#include "runtime/config/configuration.hpp"

#include <cctype>

#include "runtime/graph/job_graph_generator.hpp"
#include "runtime/graph/json_plan.hpp"
#include "runtime/graph/stream_graph_generator.hpp"

#include <random>
#include <stdexcept>

namespace flint::api {

namespace {

std::int64_t parse_integer(const configuration& config, std::string_view key,
                           std::int64_t fallback) {
  auto it = config.find(key);
  if (it == config.end())
    return fallback;
  try {
    std::size_t used = 0;
    long long value = std::stoll(it->second, &used);
    if (used != it->second.size())
      throw std::invalid_argument("trailing characters");
    return value;
  } catch (const std::exception&) {
    throw std::invalid_argument("Could not parse value '" + it->second + "' for key '"
                                + std::string(key) + "'.");
  }
}

graph::job_id random_job_id() {
  std::random_device device;
  std::mt19937_64 engine((std::uint64_t{device()} << 32) ^ device());
  return {engine(), engine()};
}

} // namespace

stream_execution_environment::stream_execution_environment() : job_id_(random_job_id()) {}

stream_execution_environment::stream_execution_environment(const configuration& config)
  : stream_execution_environment() {
  set_parallelism(static_cast<int>(parse_integer(config, "parallelism.default", 1)));
  if (config.count("pipeline.max-parallelism"))
    set_max_parallelism(static_cast<int>(parse_integer(config, "pipeline.max-parallelism", -1)));
  if (auto it = config.find("pipeline.operator-chaining"); it != config.end()) {
    if (it->second == "false")
      chaining_enabled_ = false;
    else if (it->second != "true")
      throw std::invalid_argument("Could not parse value '" + it->second
                                  + "' for key 'pipeline.operator-chaining'.");
  }
  set_buffer_timeout(parse_integer(config, "execution.buffer-timeout", 100));
  if (auto it = config.find("execution.global-data-exchange-mode"); it != config.end()) {
    auto mode = graph::parse_global_data_exchange_mode(it->second);
    if (!mode)
      throw std::invalid_argument("Could not parse value '" + it->second
                                  + "' for key 'execution.global-data-exchange-mode'.");
    exchange_mode_ = *mode;
  }
  if (auto it = config.find("pipeline.auto-watermark-interval"); it != config.end()) {
    auto interval = config::parse_duration(it->second);
    if (!interval || interval->count() < 0)
      throw std::invalid_argument("Could not parse value '" + it->second
                                  + "' for key 'pipeline.auto-watermark-interval'.");
    auto_watermark_interval_ =
      std::chrono::duration_cast<std::chrono::milliseconds>(*interval).count();
  }
  if (auto it = config.find("pipeline.window.agg-phase-strategy"); it != config.end()) {
    std::string strategy = it->second;
    for (auto& c : strategy)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (strategy == "AUTO")
      window_agg_phase_strategy_ = agg_phase_strategy::automatic;
    else if (strategy == "ONE_PHASE")
      window_agg_phase_strategy_ = agg_phase_strategy::one_phase;
    else if (strategy == "TWO_PHASE")
      window_agg_phase_strategy_ = agg_phase_strategy::two_phase;
    else
      throw std::invalid_argument(
        "Could not parse value '" + it->second
        + "' for key 'pipeline.window.agg-phase-strategy' (AUTO, ONE_PHASE or TWO_PHASE).");
  }
  if (auto it = config.find("execution.checkpointing.interval"); it != config.end()) {
    // A Duration, as Flink's key: "200 ms", "1 min", or plain milliseconds.
    auto interval = config::parse_duration(it->second);
    if (!interval)
      throw std::invalid_argument("Could not parse value '" + it->second
                                  + "' for key 'execution.checkpointing.interval'.");
    enable_checkpointing(std::chrono::duration_cast<std::chrono::milliseconds>(*interval).count());
  }
  // Flink's RuntimeExecutionMode: BATCH exchanges data through blocking partitions, stage by stage
  // (an explicit global data exchange mode still wins, as it is the lower-level setting).
  if (auto it = config.find("execution.runtime-mode"); it != config.end()) {
    std::string mode = it->second;
    for (auto& c : mode)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (mode == "BATCH") {
      if (!config.count("execution.global-data-exchange-mode"))
        exchange_mode_ = graph::global_data_exchange_mode::all_edges_blocking;
    } else if (mode != "STREAMING" && mode != "AUTOMATIC") {
      throw std::invalid_argument(
        "Could not parse value '" + it->second
        + "' for key 'execution.runtime-mode' (STREAMING, BATCH or AUTOMATIC).");
    }
  }
  // Checked by the Dispatcher at submission, which names a bad key there.
  for (const auto& [key, value] : config)
    // The job's own settings, over the cluster's at its JobMaster: restarts, failover, and
    // checkpointing (mode, time-out, storage, state backend) as Flink's per-job configuration.
    if (key.starts_with("restart-strategy") || key == "jobmanager.execution.failover-strategy"
        || key.starts_with("execution.checkpointing.") || key.starts_with("state."))
      job_configuration_[key] = value;
}

stream_execution_environment& stream_execution_environment::set_restart_strategy(
  const restart_strategy_configuration& strategy) {
  std::erase_if(job_configuration_,
                [](const auto& entry) { return entry.first.starts_with("restart-strategy"); });
  for (const auto& [key, value] : strategy.settings)
    job_configuration_[key] = value;
  return *this;
}

stream_execution_environment& stream_execution_environment::set_parallelism(int parallelism) {
  if (parallelism < 1)
    throw std::invalid_argument("parallelism must be at least one.");
  parallelism_ = parallelism;
  return *this;
}

stream_execution_environment& stream_execution_environment::set_max_parallelism(
  int max_parallelism) {
  if (max_parallelism < 1 || max_parallelism > 32768)
    throw std::invalid_argument(
      "maxParallelism is out of bounds 0 < maxParallelism <= 32768. Found: "
      + std::to_string(max_parallelism));
  max_parallelism_ = max_parallelism;
  return *this;
}

stream_execution_environment& stream_execution_environment::disable_operator_chaining() {
  chaining_enabled_ = false;
  return *this;
}

stream_execution_environment& stream_execution_environment::set_global_data_exchange_mode(
  graph::global_data_exchange_mode mode) {
  exchange_mode_ = mode;
  return *this;
}

stream_execution_environment& stream_execution_environment::set_buffer_timeout(
  std::int64_t millis) {
  if (millis < -1)
    throw std::invalid_argument("Timeout of buffer must be non-negative or -1");
  buffer_timeout_ = millis;
  return *this;
}

stream_execution_environment& stream_execution_environment::enable_checkpointing(
  std::int64_t interval_ms) {
  checkpoint_interval_ = interval_ms;
  return *this;
}

stream_execution_environment& stream_execution_environment::set_job_id(graph::job_id id) {
  job_id_ = id;
  return *this;
}

data_stream<std::string> stream_execution_environment::read_text_file(std::string path) {
  // Parallel: subtask i reads the lines that start in its 1/p of the file, and the reader chains
  // with what follows. Flink reaches the same with a monitoring source (p=1) that hands splits
  // to parallel readers; with one split per reader subtask, the monitoring task has no job.
  return add_source<std::string>("Custom File Source",
                                 std::make_shared<text_file_source_factory>(std::move(path)), true);
}

data_stream<std::string> stream_execution_environment::socket_text_stream(std::string host,
                                                                          int port,
                                                                          char delimiter) {
  if (port < 0 || port > 65535)
    throw std::invalid_argument("port is out of range: " + std::to_string(port));
  return add_source<std::string>(
    "Socket Stream", std::make_shared<socket_source_factory>(std::move(host), port, delimiter),
    false);
}

data_stream<std::int64_t> stream_execution_environment::generate_sequence(std::int64_t from,
                                                                          std::int64_t to) {
  if (from > to)
    throw std::invalid_argument("Start of sequence must not be greater than the end");
  return add_source<std::int64_t>("Sequence Source",
                                  std::make_shared<sequence_source_factory>(from, to), true);
}

std::shared_ptr<graph::transformation> stream_execution_environment::new_transformation(
  graph::transformation_kind kind, std::string name, int parallelism) {
  return std::make_shared<graph::transformation>(++next_id_, kind, std::move(name), parallelism);
}

expected<graph::stream_graph> stream_execution_environment::get_stream_graph(
  std::string job_name) const {
  if (transformations_.empty())
    return make_error(errc::invalid_argument,
                      "No operators defined in streaming topology. Cannot generate StreamGraph.");
  graph::stream_graph_config config;
  config.job_name = std::move(job_name);
  config.chaining_enabled = chaining_enabled_;
  config.exchange_mode = exchange_mode_;
  config.max_parallelism = max_parallelism_;
  config.buffer_timeout = buffer_timeout_;
  config.auto_watermark_interval = auto_watermark_interval_;
  config.checkpoint_interval = checkpoint_interval_;
  return graph::generate_stream_graph(transformations_, std::move(config));
}

expected<graph::job_graph> stream_execution_environment::get_job_graph(std::string job_name) const {
  auto stream = get_stream_graph(std::move(job_name));
  if (!stream)
    return stream.error();
  return job_graph_of(*stream);
}

expected<graph::job_graph> stream_execution_environment::job_graph_of(
  const graph::stream_graph& stream) const {
  auto job = graph::create_job_graph(stream, job_id_);
  if (job)
    job->execution_config.job_configuration = job_configuration_;
  return job;
}

expected<std::string> stream_execution_environment::get_execution_plan(std::string job_name) const {
  auto job = get_job_graph(std::move(job_name));
  if (!job)
    return job.error();
  return graph::json_execution_plan(*job);
}

} // namespace flint::api
