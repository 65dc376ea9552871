#pragma once
/// Where a program starts: settings, sources, and the graphs of what was built (Flink's
/// StreamExecutionEnvironment).
///
/// Mistakes in the program itself (a parallelism of 0, a non-parallel source at parallelism 2,
/// a malformed setting) throw `std::invalid_argument` with Flink's message, as Flink's API throws
/// IllegalArgumentException; turning the program into graphs returns `expected`.

#include "api/restart_strategies.hpp"
#include "api/functions.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"
#include "runtime/graph/transformation.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace flint::api {

template <class T>
class data_stream;
template <class T>
class watermark_strategy;

/// Key-value settings, Flink's names: `parallelism.default`, `pipeline.max-parallelism`,
/// `pipeline.operator-chaining`, `execution.buffer-timeout` (ms),
/// `execution.global-data-exchange-mode` (e.g. ALL_EDGES_BLOCKING), `execution.runtime-mode`
/// (STREAMING, BATCH: every exchange blocking, AUTOMATIC),
/// `execution.checkpointing.interval` (ms), `pipeline.auto-watermark-interval`,
/// `pipeline.window.agg-phase-strategy` (AUTO, ONE_PHASE, TWO_PHASE); `restart-strategy.*` and
/// `jobmanager.execution.failover-strategy` become the job's own settings (read by its JobMaster).
using configuration = std::map<std::string, std::string, std::less<>>;

/// How keyed and all-windows aggregate (`pipeline.window.agg-phase-strategy`, Flink SQL's
/// `table.optimizer.agg-phase-strategy` for the DataStream API): `automatic` (AUTO, the default)
/// and `two_phase` (TWO_PHASE) pre-aggregate each slice of event time in a LocalWindowAggregate
/// chained in front of the exchange wherever that applies (api/windowed_stream.hpp); `one_phase`
/// (ONE_PHASE) sends every record to the window operator.
enum class agg_phase_strategy : std::uint8_t { automatic, one_phase, two_phase };

/// The job name Flink uses when none is given.
inline constexpr const char* default_job_name = "Flink Streaming Job";

/// Collects a program's transformations. Streams point back to it, so it neither moves nor copies.
class stream_execution_environment {
public:
  /// Flink's defaults: parallelism 1, chaining on, all edges pipelined, 100 ms buffer timeout.
  stream_execution_environment();
  /// Reads the settings listed at `configuration`; throws `std::invalid_argument` on a bad value.
  explicit stream_execution_environment(const configuration& config);
  stream_execution_environment(const stream_execution_environment&) = delete;
  stream_execution_environment& operator=(const stream_execution_environment&) = delete;

  /// The parallelism of operators that do not set their own.
  int parallelism() const { return parallelism_; }
  stream_execution_environment& set_parallelism(int parallelism);
  /// -1 when unset.
  int max_parallelism() const { return max_parallelism_; }
  stream_execution_environment& set_max_parallelism(int max_parallelism);
  bool is_chaining_enabled() const { return chaining_enabled_; }
  /// Turns operator chaining off for the whole job (`pipeline.operator-chaining: false`).
  stream_execution_environment& disable_operator_chaining();
  graph::global_data_exchange_mode global_data_exchange_mode() const { return exchange_mode_; }
  stream_execution_environment& set_global_data_exchange_mode(
    graph::global_data_exchange_mode mode);
  /// Milliseconds.
  std::int64_t buffer_timeout() const { return buffer_timeout_; }
  stream_execution_environment& set_buffer_timeout(std::int64_t millis);
  /// Flink's ExecutionConfig#setAutoWatermarkInterval: how often periodic watermark generators
  /// emit (ms; 0 turns periodic watermarks off). `pipeline.auto-watermark-interval`.
  stream_execution_environment& set_auto_watermark_interval(std::int64_t millis) {
    auto_watermark_interval_ = millis < 0 ? 0 : millis;
    return *this;
  }
  std::int64_t auto_watermark_interval() const { return auto_watermark_interval_; }
  /// Whether window aggregates pre-aggregate before the exchange
  /// (`pipeline.window.agg-phase-strategy`; see agg_phase_strategy).
  stream_execution_environment& set_window_agg_phase_strategy(agg_phase_strategy strategy) {
    window_agg_phase_strategy_ = strategy;
    return *this;
  }
  agg_phase_strategy window_agg_phase_strategy() const { return window_agg_phase_strategy_; }
  /// Checkpoints every `interval_ms`.
  stream_execution_environment& enable_checkpointing(std::int64_t interval_ms);
  /// The job's restart strategy (Flink's setRestartStrategy), over the cluster's.
  stream_execution_environment& set_restart_strategy(
    const restart_strategy_configuration& strategy);
  /// The job's own settings the JobGraph carries (restart and failover strategy keys).
  const std::map<std::string, std::string>& job_configuration() const { return job_configuration_; }
  /// The id the JobGraph gets; random unless set.
  const graph::job_id& job_id() const { return job_id_; }
  stream_execution_environment& set_job_id(graph::job_id id);

  /// A non-parallel source emitting `elements` in order.
  template <class T>
  data_stream<T> from_collection(std::vector<T> elements);
  /// A non-parallel source emitting its arguments in order; string literals become
  /// `std::string`s.
  template <class T, class... Ts>
  auto from_elements(T first, Ts... rest) {
    using element = std::conditional_t<std::is_convertible_v<T, const char*>, std::string, T>;
    std::vector<element> elements;
    elements.reserve(1 + sizeof...(rest));
    elements.push_back(element(std::move(first)));
    (elements.push_back(element(std::move(rest))), ...);
    return from_collection(std::move(elements));
  }
  /// A parallel source of the lines of `path`: subtask i of p reads the lines that start in
  /// bytes [i*size/p, (i+1)*size/p). (Flink's monitoring function and parallel split readers
  /// collapse into the readers, one split each.)
  data_stream<std::string> read_text_file(std::string path);
  /// A non-parallel source of the text read from `host:port`, split at `delimiter`.
  data_stream<std::string> socket_text_stream(std::string host, int port, char delimiter = '\n');
  /// A parallel source of `from..to` inclusive.
  data_stream<std::int64_t> generate_sequence(std::int64_t from, std::int64_t to);
  /// A parallel source of Flink's Source API (e.g. api::data_generator_source) whose splits run
  /// `strategy` each, the subtask's watermark their minimum (Flink's fromSource).
  template <class Source, class T = typename Source::output_type>
  data_stream<T> from_source(const Source& source, const watermark_strategy<T>& strategy,
                             std::string source_name) {
    return add_source<T>(std::move(source_name), source.create_factory(strategy), true);
  }

  /// The StreamGraph of everything added so far.
  expected<graph::stream_graph> get_stream_graph(std::string job_name = default_job_name) const;
  /// The JobGraph of everything added so far.
  expected<graph::job_graph> get_job_graph(std::string job_name = default_job_name) const;
  /// The JobGraph of a StreamGraph this environment made, with the job's own settings.
  expected<graph::job_graph> job_graph_of(const graph::stream_graph& stream) const;
  /// The JSON execution plan of the JobGraph (§5.1.1 step 3).
  expected<std::string> get_execution_plan(std::string job_name = default_job_name) const;

  /// A new transformation with the next id; used by the streams.
  std::shared_ptr<graph::transformation> new_transformation(graph::transformation_kind kind,
                                                            std::string name, int parallelism);
  /// Remembers an operator or sink for graph generation (Flink's addOperator).
  void add_operator(std::shared_ptr<graph::transformation> t) {
    transformations_.push_back(std::move(t));
  }
  const std::vector<std::shared_ptr<graph::transformation>>& transformations() const {
    return transformations_;
  }

private:
  template <class T>
  data_stream<T> add_source(std::string name,
                            std::shared_ptr<const graph::operator_factory> factory, bool parallel);

  int parallelism_ = 1;
  int max_parallelism_ = -1;
  bool chaining_enabled_ = true;
  graph::global_data_exchange_mode exchange_mode_ =
    graph::global_data_exchange_mode::all_edges_pipelined;
  std::int64_t buffer_timeout_ = 100;
  std::int64_t auto_watermark_interval_ = 200;
  agg_phase_strategy window_agg_phase_strategy_ = agg_phase_strategy::automatic;
  std::int64_t checkpoint_interval_ = -1;
  std::map<std::string, std::string> job_configuration_;
  graph::job_id job_id_;
  int next_id_ = 0;
  std::vector<std::shared_ptr<graph::transformation>> transformations_;
};

} // namespace flint::api

#include "api/data_stream.hpp"

namespace flint::api {

template <class T>
data_stream<T> stream_execution_environment::add_source(
  std::string name, std::shared_ptr<const graph::operator_factory> factory, bool parallel) {
  auto t = new_transformation(graph::transformation_kind::source, std::move(name),
                              parallel ? parallelism_ : 1);
  t->set_parallel(parallel);
  t->set_chaining_strategy(graph::chaining_strategy::head);
  t->set_factory(std::move(factory));
  add_operator(t);
  return data_stream<T>(this, std::move(t));
}

template <class T>
data_stream<T> stream_execution_environment::from_collection(std::vector<T> elements) {
  return add_source<T>("Collection Source",
                       std::make_shared<collection_source_factory<T>>(std::move(elements)), false);
}

} // namespace flint::api
