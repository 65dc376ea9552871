// Every REST path Flink's clients call (its dashboard, RestClusterClient, the Kubernetes
// operator), table by table, against a real cluster in one process: under /v1 and the root, on
// a running and a finished job, each answer's status code and every field Flink's REST spec
// (docs/static/generated/rest_v1_dispatcher.yml, Flink 1.19) names for it, by type. The field
// lists below are written from that spec, not from Flint's answers. Where Flink's own serializer
// writes other names than the spec's generated schema (JobResult, JobConfigInfo), the names are
// the serializer's, which its clients read.

#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "api/api.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/http/httplib.hpp"
#include "runtime/node/job_manager_node.hpp"
#include "runtime/node/node_settings.hpp"
#include "runtime/node/task_manager_node.hpp"
#include "runtime/streaming/streaming_environment.hpp"
#include "test/runtime/node/node_test_util.hpp"
#include "test/support/word_counts.hpp"

using namespace flint;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

using test::eventually;
using test::graphs_of;
using test::program;

// -- Flink's schemas, as field lists -------------------------------------------------------------

enum class kind { string, integer, number, boolean, object, array, string_or_null, object_or_null };

/// A field of an answer: a JSON pointer, where a `*` step stands for every element of an array
/// or every value of an object (Flink's additionalProperties).
struct field {
  std::string pointer;
  kind type;
};
using spec = std::vector<field>;

spec operator+(spec a, const spec& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// `s` under `prefix` ("/vertices/*/metrics").
spec under(const std::string& prefix, const spec& s) {
  spec out;
  for (const auto& f : s)
    out.push_back({prefix + f.pointer, f.type});
  return out;
}

/// The same `type` for each of `names` under `prefix`.
spec all_of(const std::string& prefix, std::initializer_list<const char*> names, kind type) {
  spec out;
  for (const char* n : names)
    out.push_back({prefix + "/" + n, type});
  return out;
}

const spec io_metrics_info = {{"/read-bytes", kind::integer},
                              {"/read-bytes-complete", kind::boolean},
                              {"/write-bytes", kind::integer},
                              {"/write-bytes-complete", kind::boolean},
                              {"/read-records", kind::integer},
                              {"/read-records-complete", kind::boolean},
                              {"/write-records", kind::integer},
                              {"/write-records-complete", kind::boolean},
                              {"/accumulated-backpressured-time", kind::integer},
                              {"/accumulated-idle-time", kind::integer},
                              {"/accumulated-busy-time", kind::number}};

const spec job_details_info = spec{{"/jid", kind::string},
                                   {"/name", kind::string},
                                   {"/isStoppable", kind::boolean},
                                   {"/state", kind::string},
                                   {"/job-type", kind::string},
                                   {"/start-time", kind::integer},
                                   {"/end-time", kind::integer},
                                   {"/duration", kind::integer},
                                   {"/maxParallelism", kind::integer},
                                   {"/now", kind::integer},
                                   {"/timestamps", kind::object},
                                   {"/timestamps/*", kind::integer},
                                   {"/vertices", kind::array},
                                   {"/status-counts", kind::object},
                                   {"/status-counts/*", kind::integer},
                                   {"/plan", kind::object}}
  + under("/vertices/*",
          spec{{"/id", kind::string},
               {"/name", kind::string},
               {"/maxParallelism", kind::integer},
               {"/parallelism", kind::integer},
               {"/status", kind::string},
               {"/start-time", kind::integer},
               {"/end-time", kind::integer},
               {"/duration", kind::integer},
               {"/tasks", kind::object},
               {"/tasks/*", kind::integer},
               {"/metrics", kind::object}})
  + under("/vertices/*/metrics", io_metrics_info);

const spec stats_summary_dto = all_of("", {"min", "max", "avg"}, kind::integer)
  + all_of("", {"p50", "p90", "p95", "p99", "p999"}, kind::number);

const spec task_checkpoint_statistics = spec{{"/id", kind::integer}, {"/status", kind::string}}
  + all_of("",
           {"latest_ack_timestamp", "checkpointed_size", "state_size", "end_to_end_duration",
            "alignment_buffered", "processed_data", "persisted_data", "num_subtasks",
            "num_acknowledged_subtasks"},
           kind::integer);

const spec checkpoint_statistics = spec{{"/className", kind::string},
                                        {"/id", kind::integer},
                                        {"/status", kind::string},
                                        {"/is_savepoint", kind::boolean},
                                        {"/savepointFormat", kind::string_or_null},
                                        {"/checkpoint_type", kind::string},
                                        {"/tasks", kind::object}}
  + all_of("",
           {"trigger_timestamp", "latest_ack_timestamp", "state_size", "checkpointed_size",
            "end_to_end_duration", "alignment_buffered", "processed_data", "persisted_data",
            "num_subtasks", "num_acknowledged_subtasks"},
           kind::integer)
  + under("/tasks/*", task_checkpoint_statistics);

const spec completed_checkpoint_statistics =
  checkpoint_statistics + spec{{"/external_path", kind::string}, {"/discarded", kind::boolean}};

const spec checkpointing_statistics =
  all_of("/counts", {"restored", "total", "in_progress", "completed", "failed"}, kind::integer)
  + spec{{"/summary", kind::object}} + under("/summary/checkpointed_size", stats_summary_dto)
  + under("/summary/state_size", stats_summary_dto)
  + under("/summary/end_to_end_duration", stats_summary_dto)
  + under("/summary/alignment_buffered", stats_summary_dto)
  + under("/summary/processed_data", stats_summary_dto)
  + under("/summary/persisted_data", stats_summary_dto)
  + spec{{"/latest", kind::object},
         {"/latest/completed", kind::object_or_null},
         {"/latest/savepoint", kind::object_or_null},
         {"/latest/failed", kind::object_or_null},
         {"/latest/restored", kind::object_or_null},
         {"/history", kind::array}}
  + under("/history/*", checkpoint_statistics);

const spec checkpoint_config_info = spec{{"/mode", kind::string},
                                         {"/externalization", kind::object},
                                         {"/externalization/enabled", kind::boolean},
                                         {"/externalization/delete_on_cancellation", kind::boolean},
                                         {"/state_backend", kind::string},
                                         {"/checkpoint_storage", kind::string},
                                         {"/unaligned_checkpoints", kind::boolean},
                                         {"/checkpoints_after_tasks_finish", kind::boolean},
                                         {"/state_changelog_enabled", kind::boolean},
                                         {"/changelog_storage", kind::string}}
  + all_of("",
           {"interval", "timeout", "min_pause", "max_concurrent", "tolerable_failed_checkpoints",
            "aligned_checkpoint_timeout", "changelog_periodic_materialization_interval"},
           kind::integer);

const spec checkpoint_subtask_details =
  task_checkpoint_statistics + under("/summary/checkpointed_size", stats_summary_dto)
  + under("/summary/state_size", stats_summary_dto)
  + under("/summary/end_to_end_duration", stats_summary_dto)
  + under("/summary/start_delay", stats_summary_dto)
  + under("/summary/checkpoint_duration/sync", stats_summary_dto)
  + under("/summary/checkpoint_duration/async", stats_summary_dto)
  + under("/summary/alignment/buffered", stats_summary_dto)
  + under("/summary/alignment/processed", stats_summary_dto)
  + under("/summary/alignment/persisted", stats_summary_dto)
  + under("/summary/alignment/duration", stats_summary_dto)
  + spec{{"/subtasks", kind::array}}
  // Every subtask of a completed checkpoint: CompletedSubtaskCheckpointStatistics.
  + under(
    "/subtasks/*",
    spec{{"/index", kind::integer},
         {"/status", kind::string},
         {"/className", kind::string},
         {"/checkpoint/sync", kind::integer},
         {"/checkpoint/async", kind::integer},
         {"/unaligned_checkpoint", kind::boolean},
         {"/aborted", kind::boolean}}
      + all_of(
        "",
        {"ack_timestamp", "end_to_end_duration", "checkpointed_size", "state_size", "start_delay"},
        kind::integer)
      + all_of("/alignment", {"buffered", "processed", "persisted", "duration"}, kind::integer));

const spec subtask_execution_attempt_details =
  spec{{"/subtask", kind::integer},          {"/status", kind::string},
       {"/attempt", kind::integer},          {"/host", kind::string},
       {"/start-time", kind::integer},       {"/end-time", kind::integer},
       {"/duration", kind::integer},         {"/metrics", kind::object},
       {"/taskmanager-id", kind::string},    {"/status-duration", kind::object},
       {"/status-duration/*", kind::integer}}
  + under("/metrics", io_metrics_info);

const spec aggregated_task_details = {
  {"/metrics", kind::object},           {"/metrics/*", kind::object},
  {"/metrics/*/*", kind::integer},      {"/status-duration", kind::object},
  {"/status-duration/*", kind::object}, {"/status-duration/*/*", kind::integer}};

const spec job_vertex_details_info =
  spec{{"/id", kind::string},           {"/name", kind::string},
       {"/parallelism", kind::integer}, {"/maxParallelism", kind::integer},
       {"/now", kind::integer},         {"/subtasks", kind::array},
       {"/aggregated", kind::object}}
  + under("/subtasks/*", subtask_execution_attempt_details)
  + under("/aggregated", aggregated_task_details);

const spec subtasks_times_info = {{"/id", kind::string},
                                  {"/name", kind::string},
                                  {"/now", kind::integer},
                                  {"/subtasks", kind::array},
                                  {"/subtasks/*/subtask", kind::integer},
                                  {"/subtasks/*/host", kind::string},
                                  {"/subtasks/*/duration", kind::integer},
                                  {"/subtasks/*/timestamps", kind::object},
                                  {"/subtasks/*/timestamps/*", kind::integer}};

const spec job_vertex_task_managers_info = spec{{"/id", kind::string},
                                                {"/name", kind::string},
                                                {"/now", kind::integer},
                                                {"/taskmanagers", kind::array}}
  + under("/taskmanagers/*",
          spec{{"/host", kind::string},
               {"/status", kind::string},
               {"/start-time", kind::integer},
               {"/end-time", kind::integer},
               {"/duration", kind::integer},
               {"/metrics", kind::object},
               {"/status-counts", kind::object},
               {"/status-counts/*", kind::integer},
               {"/taskmanager-id", kind::string},
               {"/aggregated", kind::object}}
            + under("/metrics", io_metrics_info) + under("/aggregated", aggregated_task_details));

const spec job_vertex_accumulators_info = {{"/id", kind::string},
                                           {"/user-accumulators", kind::array}};

const spec subtasks_all_accumulators_info = {{"/id", kind::string},
                                             {"/parallelism", kind::integer},
                                             {"/subtasks", kind::array},
                                             {"/subtasks/*/subtask", kind::integer},
                                             {"/subtasks/*/attempt", kind::integer},
                                             {"/subtasks/*/host", kind::string},
                                             {"/subtasks/*/user-accumulators", kind::array}};

/// MetricCollectionResponseBody as Flink's serializer writes it: a bare array of Metric.
const spec metric_ids = {{"", kind::array}, {"/*/id", kind::string}};
const spec metric_values = metric_ids + spec{{"/*/value", kind::string}};
/// The aggregated metrics of subtasks (AggregatedMetric).
const spec aggregated_metrics = {{"", kind::array},        {"/*/id", kind::string},
                                 {"/*/min", kind::number}, {"/*/max", kind::number},
                                 {"/*/avg", kind::number}, {"/*/sum", kind::number}};

/// JobExecutionResultResponseBody with JobResultSerializer's names.
const spec execution_result_in_progress = {{"/status/id", kind::string}};
const spec execution_result_completed = execution_result_in_progress
  + spec{{"/job-execution-result", kind::object},
         {"/job-execution-result/id", kind::string},
         {"/job-execution-result/application-status", kind::string},
         {"/job-execution-result/accumulator-results", kind::object},
         {"/job-execution-result/net-runtime", kind::integer}};

/// JobConfigInfo with its serializer's names.
const spec job_config_info = {{"/jid", kind::string},
                              {"/name", kind::string},
                              {"/execution-config", kind::object},
                              {"/execution-config/execution-mode", kind::string},
                              {"/execution-config/restart-strategy", kind::string},
                              {"/execution-config/job-parallelism", kind::integer},
                              {"/execution-config/object-reuse-mode", kind::boolean},
                              {"/execution-config/user-config", kind::object}};

const spec job_accumulators_info = {{"/job-accumulators", kind::array},
                                    {"/user-task-accumulators", kind::array},
                                    {"/serialized-user-task-accumulators", kind::object}};

const spec job_resource_requirements = {{"", kind::object},
                                        {"/*/parallelism/lowerBound", kind::integer},
                                        {"/*/parallelism/upperBound", kind::integer}};

const spec cluster_overview_with_version =
  all_of("",
         {"taskmanagers", "slots-total", "slots-available", "jobs-running", "jobs-finished",
          "jobs-cancelled", "jobs-failed", "slots-free-and-blocked", "taskmanagers-blocked"},
         kind::integer)
  + all_of("", {"flink-version", "flink-commit"}, kind::string);

const spec resource_profile_info =
  spec{{"/cpuCores", kind::number}, {"/extendedResources", kind::object}}
  + all_of("", {"taskHeapMemory", "taskOffHeapMemory", "managedMemory", "networkMemory"},
           kind::integer);

const spec task_manager_details_info = spec{{"/id", kind::string},
                                            {"/path", kind::string},
                                            {"/dataPort", kind::integer},
                                            {"/jmxPort", kind::integer},
                                            {"/timeSinceLastHeartbeat", kind::integer},
                                            {"/slotsNumber", kind::integer},
                                            {"/freeSlots", kind::integer},
                                            {"/blocked", kind::boolean},
                                            {"/allocatedSlots", kind::array},
                                            {"/allocatedSlots/*/jobId", kind::string},
                                            {"/metrics/garbageCollectors", kind::array}}
  + under("/totalResource", resource_profile_info) + under("/freeResource", resource_profile_info)
  + under("/allocatedSlots/*/resource", resource_profile_info)
  + all_of("/hardware", {"cpuCores", "physicalMemory", "freeMemory", "managedMemory"},
           kind::integer)
  + all_of("/memoryConfiguration",
           {"frameworkHeap", "taskHeap", "frameworkOffHeap", "taskOffHeap", "networkMemory",
            "managedMemory", "jvmMetaspace", "jvmOverhead", "totalFlinkMemory",
            "totalProcessMemory"},
           kind::integer)
  + all_of("/metrics",
           {"heapUsed",
            "heapCommitted",
            "heapMax",
            "nonHeapUsed",
            "nonHeapCommitted",
            "nonHeapMax",
            "directCount",
            "directUsed",
            "directMax",
            "mappedCount",
            "mappedUsed",
            "mappedMax",
            "memorySegmentsAvailable",
            "memorySegmentsTotal",
            "nettyShuffleMemorySegmentsAvailable",
            "nettyShuffleMemorySegmentsUsed",
            "nettyShuffleMemorySegmentsTotal",
            "nettyShuffleMemoryAvailable",
            "nettyShuffleMemoryUsed",
            "nettyShuffleMemoryTotal"},
           kind::integer);

const spec log_list_info = {{"/logs", kind::array},
                            {"/logs/*/name", kind::string},
                            {"/logs/*/size", kind::integer},
                            {"/logs/*/mtime", kind::integer}};

const spec environment_info = {{"/jvm", kind::object},
                               {"/jvm/version", kind::string},
                               {"/jvm/arch", kind::string},
                               {"/jvm/options", kind::array},
                               {"/classpath", kind::array}};

const spec thread_dump_info = {{"/threadInfos", kind::array},
                               {"/threadInfos/*/threadName", kind::string},
                               {"/threadInfos/*/stringifiedThreadInfo", kind::string}};

const spec errors_body = {{"/errors", kind::array}, {"/errors/*", kind::string}};
const spec trigger_response = {{"/request-id", kind::string}};
const spec watermarks = {{"", kind::array}};

// -- checking -----------------------------------------------------------------------------------

bool has_type(const json& v, kind type) {
  switch (type) {
    case kind::string: return v.is_string();
    case kind::integer: return v.is_number_integer();
    case kind::number: return v.is_number();
    case kind::boolean: return v.is_boolean();
    case kind::object: return v.is_object();
    case kind::array: return v.is_array();
    case kind::string_or_null: return v.is_string() || v.is_null();
    case kind::object_or_null: return v.is_object() || v.is_null();
  }
  return false;
}

/// The values `steps[i..]` names from `at`; a missing step is reported in `missing`.
void collect(const json& at, const std::vector<std::string>& steps, std::size_t i,
             std::vector<const json*>& out, std::vector<std::string>& missing,
             const std::string& where) {
  if (i == steps.size()) {
    out.push_back(&at);
    return;
  }
  const auto& step = steps[i];
  if (step == "*") {
    if (at.is_array()) {
      for (std::size_t k = 0; k < at.size(); ++k)
        collect(at[k], steps, i + 1, out, missing, where + "/" + std::to_string(k));
    } else if (at.is_object()) {
      for (const auto& [k, v] : at.items())
        collect(v, steps, i + 1, out, missing, where + "/" + k);
    } else if (!at.is_null()) {
      missing.push_back(where + " (not an array or object)");
    }
    return;
  }
  if (at.is_null())
    return; // a nullable object's fields are checked only when it is there
  if (!at.is_object() || !at.contains(step)) {
    missing.push_back(where + "/" + step);
    return;
  }
  collect(at[step], steps, i + 1, out, missing, where + "/" + step);
}

std::vector<std::string> steps_of(const std::string& pointer) {
  std::vector<std::string> steps;
  std::size_t from = 1;
  while (from <= pointer.size() && !pointer.empty()) {
    auto slash = pointer.find('/', from);
    steps.push_back(pointer.substr(from, slash - from));
    if (slash == std::string::npos)
      break;
    from = slash + 1;
  }
  return steps;
}

/// Every field of `s` is in `body`, of its type.
void check_fields(const json& body, const spec& s, const std::string& what) {
  for (const auto& f : s) {
    std::vector<const json*> values;
    std::vector<std::string> missing;
    collect(body, steps_of(f.pointer), 0, values, missing, "");
    for (const auto& m : missing)
      CHECK_MESSAGE(false, what << ": no field " << m);
    for (const auto* v : values)
      CHECK_MESSAGE(
        has_type(*v, f.type),
        what << ": " << f.pointer << " has the wrong type: " << v->dump().substr(0, 200));
  }
}

// -- the cluster ---------------------------------------------------------------------------------

std::filesystem::path scratch(const std::string& name) {
  auto p = std::filesystem::temp_directory_path()
    / ("flint_rest_paths_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

struct answer {
  int status = 0;
  json body;
  std::string text;
};

answer read(const httplib::Result& r) {
  answer a;
  if (!r)
    return a;
  a.status = r->status;
  a.text = r->body;
  a.body = json::parse(r->body, nullptr, false);
  return a;
}

/// A JobManager node with REST and its log file, and two TaskManagers of two slots each.
struct test_cluster {
  std::filesystem::path dir;
  std::unique_ptr<node::job_manager_node> jm;
  std::vector<std::unique_ptr<node::task_manager_node>> tms;

  test_cluster() : dir(scratch("cluster")) {
    std::filesystem::create_directories(dir / "log");
    write_text(dir / "log" / "jobmanager.log", "the JobManager's log\n");
    write_text(dir / "log" / "jobmanager.out", "the JobManager's stdout\n");
    write_text(dir / "secret.txt", "outside the log directory\n");
    std::filesystem::create_symlink(dir / "secret.txt", dir / "log" / "link.log");
    node::job_manager_settings js;
    js.rpc_address = "127.0.0.1";
    js.bind_host = "127.0.0.1";
    js.rpc_port = 0;
    js.blob_storage_directory = dir / "blobs";
    js.heartbeat.interval = 500ms;
    js.heartbeat.timeout = 10s;
    js.rest.enabled = true;
    js.rest.bind_address = "127.0.0.1";
    js.rest.bind_port = "0";
    js.rest.upload_dir = dir / "uploads";
    js.rest.log_file = dir / "log" / "jobmanager.log";
    js.configuration.set("parallelism.default", "2", "test");
    jm = std::make_unique<node::job_manager_node>(js);
    auto started = jm->start();
    REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
    for (const char* id : {"tm-a", "tm-b"}) {
      // Each TaskManager's log directory: its log, its stdout, and a link out of it.
      auto tm_log = dir / (std::string(id) + "-log");
      std::filesystem::create_directories(tm_log);
      write_text(tm_log / "taskmanager.log", std::string("the log of ") + id + "\n");
      write_text(tm_log / "taskmanager.out", std::string("the stdout of ") + id + "\n");
      std::filesystem::create_symlink(dir / "secret.txt", tm_log / "link.log");
      node::task_manager_settings ts;
      ts.log_file = tm_log / "taskmanager.log";
      ts.jobmanager_address = "127.0.0.1";
      ts.jobmanager_port = jm->rpc_port();
      ts.host = "127.0.0.1";
      ts.bind_host = "127.0.0.1";
      ts.resource_id = id;
      ts.number_of_slots = 2;
      ts.heartbeat.interval = 500ms;
      ts.heartbeat.timeout = 10s;
      node::task_manager_node_services services;
      services.make_invokables = [](caf::actor_system&, streaming::streaming_environment& env,
                                    const std::string&, node::job_manager_locator) {
        return streaming::make_stream_task_factory(env);
      };
      services.write_stdout = [](std::string_view) {};
      tms.push_back(std::make_unique<node::task_manager_node>(ts, services));
      auto up = tms.back()->start();
      REQUIRE_MESSAGE(up.has_value(), up.error().to_string());
    }
    REQUIRE(eventually(
      [&] {
        auto o = get("/overview");
        return o.status == 200 && o.body["slots-total"] == 4;
      },
      20s));
  }

  ~test_cluster() {
    tms.clear();
    jm.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", jm->rest_port());
    c.set_read_timeout(10, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }
  answer get(const std::string& path) const {
    auto c = client();
    return read(c.Get(path.c_str()));
  }
  answer post(const std::string& path, const std::string& body) const {
    auto c = client();
    return read(c.Post(path.c_str(), body, "application/json"));
  }

  void run(const program& p) {
    for (auto& tm : tms)
      tm->streaming().add_program(p.stream, p.job);
    caf::scoped_actor self{jm->system(), true};
    auto r = jm->dispatcher_gateway().ask_blocking<dispatcher::submit_job>(
      *self, rpc::client_identity{"rest_paths_test", nullptr, 10s},
      dispatcher::submit_job_request{*p.job});
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  }
};

/// WordCount; `mode`: its execution.runtime-mode.
program wordcount(const std::filesystem::path& input, const std::filesystem::path& output,
                  const std::string& mode = "STREAMING") {
  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", "2"}, {"execution.runtime-mode", mode}});
  examples::build_wordcount(env, {input.string(), output.string()});
  return graphs_of(env);
}

/// Runs until stopped, checkpointing every second (the history's ten cover the test's reads);
/// its own restart strategy.
program endless() {
  api::stream_execution_environment env(api::configuration{
    {"parallelism.default", "2"}, {"restart-strategy.type", "fixed-delay"}});
  env.enable_checkpointing(1000);
  env.generate_sequence(0, std::numeric_limits<std::int64_t>::max())
    .map([](std::int64_t x) {
      std::this_thread::sleep_for(1ms);
      return std::tuple<std::int64_t, std::int64_t>{x % 16, 1};
    })
    .key_by<0>()
    .sum<1>()
    .filter([](const std::tuple<std::int64_t, std::int64_t>&) { return false; })
    .print();
  return graphs_of(env);
}

/// A path's expected answer: its status and, for a success, the fields of Flink's schema.
struct expect {
  int status = 200;
  spec fields;
};

/// One path of a job, for the running and the finished job. `{jid}`, `{vid}`, `{cid}` and
/// `{tm}` are replaced by the job's.
struct job_row {
  std::string path;
  expect running;
  expect finished;
};

std::string fill(std::string path, const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [k, v] : vars)
    for (auto at = path.find(k); at != std::string::npos; at = path.find(k))
      path.replace(at, k.size(), v);
  return path;
}

void check_answer(const answer& a, const expect& e, const std::string& what) {
  CHECK_MESSAGE(a.status == e.status,
                what << " answered " << a.status << ": " << a.text.substr(0, 300));
  CHECK_MESSAGE(!a.body.is_discarded(), what << " is not JSON: " << a.text.substr(0, 200));
  check_fields(a.body, a.status < 300 ? e.fields : errors_body, what);
}

} // namespace

TEST_CASE(
  "REST: every path Flink's clients call answers under /v1 and the root, on a running "
  "and a finished job, with the status and fields of Flink's spec") {
  test_cluster c;
  write_text(c.dir / "input.txt", test::sample_text(16 * 1024));
  auto done = wordcount(c.dir / "input.txt", c.dir / "output");
  c.run(done);
  const auto finished = done.job->job_id.to_string();
  REQUIRE(eventually([&] { return c.get("/jobs/" + finished).body["state"] == "FINISHED"; }, 60s));
  auto live = endless();
  c.run(live);
  const auto running = live.job->job_id.to_string();
  // Running, and at least one checkpoint complete.
  REQUIRE(eventually(
    [&] {
      auto a = c.get("/jobs/" + running + "/checkpoints");
      return a.status == 200 && a.body["counts"]["completed"].get<std::int64_t>() >= 1
        && a.body["latest"]["completed"].is_object();
    },
    60s));
  auto checkpoints = c.get("/jobs/" + running + "/checkpoints").body;
  const auto cid = std::to_string(checkpoints["latest"]["completed"]["id"].get<std::int64_t>());
  const auto running_vid = c.get("/jobs/" + running).body["vertices"][0]["id"].get<std::string>();
  const auto finished_vid = c.get("/jobs/" + finished).body["vertices"][0]["id"].get<std::string>();
  const auto tm = c.get("/jobs/" + running + "/vertices/" + running_vid)
                    .body["subtasks"][0]["taskmanager-id"]
                    .get<std::string>();
  // Every subtask of the completed checkpoint sent what it measured: no -1 (absent) figure; the
  // source aligns nothing, the keyed sum aligns its two channels.
  const auto running_vertices = c.get("/jobs/" + running).body["vertices"];
  REQUIRE(running_vertices.size() == 2);
  for (const auto& v : running_vertices) {
    auto vid = v["id"].get<std::string>();
    auto details = c.get("/jobs/" + running + "/checkpoints/details/" + cid + "/subtasks/" + vid);
    REQUIRE(details.status == 200);
    CAPTURE(details.text);
    for (const auto& st : details.body["subtasks"]) {
      REQUIRE(st["status"] == "completed");
      CHECK(st["checkpoint"]["sync"].get<std::int64_t>() >= 0);
      CHECK(st["checkpoint"]["async"].get<std::int64_t>() >= 0);
      CHECK(st["alignment"]["duration"].get<std::int64_t>() >= 0);
      CHECK(st["alignment"]["processed"].get<std::int64_t>() >= 0);
      CHECK(st["alignment"]["persisted"] == 0);
      CHECK(st["start_delay"].get<std::int64_t>() >= 0);
      if (vid == running_vid)
        CHECK(st["alignment"]["duration"] == 0);
    }
  }

  const std::vector<job_row> job_rows = {
    {"/jobs/{jid}", {200, job_details_info}, {200, job_details_info}},
    {"/jobs/{jid}/execution-result",
     {200, execution_result_in_progress},
     {200, execution_result_completed}},
    {"/jobs/{jid}/config", {200, job_config_info}, {200, job_config_info}},
    {"/jobs/{jid}/metrics", {200, metric_ids}, {200, metric_ids}},
    {"/jobs/{jid}/metrics?get=numRestarts,numberOfCompletedCheckpoints",
     {200, metric_values},
     {200, metric_values}},
    {"/jobs/{jid}/accumulators", {200, job_accumulators_info}, {200, job_accumulators_info}},
    {"/jobs/{jid}/resource-requirements",
     {200, job_resource_requirements},
     {200, job_resource_requirements}},
    {"/jobs/{jid}/checkpoints", {200, checkpointing_statistics}, {200, checkpointing_statistics}},
    {"/jobs/{jid}/checkpoints/config",
     {200, checkpoint_config_info},
     {200, checkpoint_config_info}},
    // The finished WordCount took no checkpoint.
    {"/jobs/{jid}/checkpoints/details/{cid}", {200, completed_checkpoint_statistics}, {404, {}}},
    {"/jobs/{jid}/checkpoints/details/{cid}/subtasks/{vid}",
     {200, checkpoint_subtask_details},
     {404, {}}},
    {"/jobs/{jid}/checkpoints/details/x", {400, {}}, {400, {}}},
    {"/jobs/{jid}/vertices/{vid}", {200, job_vertex_details_info}, {200, job_vertex_details_info}},
    {"/jobs/{jid}/vertices/{vid}/metrics", {200, metric_ids}, {200, metric_ids}},
    {"/jobs/{jid}/vertices/{vid}/metrics?get=0.numRecordsOut,1.numRecordsOut",
     {200, metric_values},
     {200, metric_values}},
    {"/jobs/{jid}/vertices/{vid}/subtasks/metrics", {200, metric_ids}, {200, metric_ids}},
    {"/jobs/{jid}/vertices/{vid}/subtasks/metrics?get=numRecordsOut",
     {200, aggregated_metrics},
     {200, aggregated_metrics}},
    {"/jobs/{jid}/vertices/{vid}/subtasks/0",
     {200, subtask_execution_attempt_details},
     {200, subtask_execution_attempt_details}},
    {"/jobs/{jid}/vertices/{vid}/subtasks/99", {404, {}}, {404, {}}},
    {"/jobs/{jid}/vertices/{vid}/subtasks/x", {400, {}}, {400, {}}},
    {"/jobs/{jid}/vertices/{vid}/subtasktimes",
     {200, subtasks_times_info},
     {200, subtasks_times_info}},
    {"/jobs/{jid}/vertices/{vid}/taskmanagers",
     {200, job_vertex_task_managers_info},
     {200, job_vertex_task_managers_info}},
    {"/jobs/{jid}/vertices/{vid}/accumulators",
     {200, job_vertex_accumulators_info},
     {200, job_vertex_accumulators_info}},
    {"/jobs/{jid}/vertices/{vid}/subtasks/accumulators",
     {200, subtasks_all_accumulators_info},
     {200, subtasks_all_accumulators_info}},
    {"/jobs/{jid}/vertices/{vid}/watermarks", {200, watermarks}, {200, watermarks}},
    {"/jobs/{jid}/vertices/00000000000000000000000000000000/metrics", {404, {}}, {404, {}}},
  };

  const std::vector<std::pair<std::string, expect>> node_rows = {
    {"/overview", {200, cluster_overview_with_version}},
    {"/taskmanagers/{tm}", {200, task_manager_details_info}},
    {"/taskmanagers/{tm}/metrics", {200, metric_ids}},
    {"/taskmanagers/no-such-tm/metrics", {404, {}}},
    {"/taskmanagers/{tm}/logs", {200, log_list_info}},
    {"/taskmanagers/{tm}/thread-dump", {200, thread_dump_info}},
    {"/taskmanagers/no-such-tm/logs", {404, {}}},
    {"/taskmanagers/no-such-tm/thread-dump", {404, {}}},
    // As the JobManager's: a name is a file's own, directly in the TaskManager's log directory.
    {"/taskmanagers/{tm}/logs/..%2Fsecret.txt", {400, {}}},
    {"/taskmanagers/{tm}/logs/..", {400, {}}},
    {"/taskmanagers/{tm}/logs/sub%2Ftaskmanager.log", {400, {}}},
    {"/taskmanagers/{tm}/logs/link.log", {404, {}}},
    {"/taskmanagers/{tm}/logs/no-such.log", {404, {}}},
    {"/jobmanager/metrics", {200, metric_ids}},
    {"/jobmanager/metrics?get=numRegisteredTaskManagers,taskSlotsTotal", {200, metric_values}},
    {"/jobmanager/logs", {200, log_list_info}},
    {"/jobmanager/environment", {200, environment_info}},
    {"/jobmanager/thread-dump", {200, thread_dump_info}},
    // A name is a file's own: a path, "..", or a link out of the log directory is not served.
    {"/jobmanager/logs/..%2Fsecret.txt", {400, {}}},
    {"/jobmanager/logs/..", {400, {}}},
    {"/jobmanager/logs/sub%2Fjobmanager.log", {400, {}}},
    {"/jobmanager/logs/link.log", {404, {}}},
    {"/jobmanager/logs/no-such.log", {404, {}}},
  };

  for (const std::string prefix : {"", "/v1"}) {
    for (const auto& row : job_rows) {
      for (bool is_running : {true, false}) {
        const auto& jid = is_running ? running : finished;
        auto path =
          prefix
          + fill(
            row.path,
            {{"{jid}", jid}, {"{vid}", is_running ? running_vid : finished_vid}, {"{cid}", cid}});
        check_answer(c.get(path), is_running ? row.running : row.finished,
                     std::string(is_running ? "running: " : "finished: ") + path);
      }
    }
    for (const auto& [path, e] : node_rows) {
      auto p = prefix + fill(path, {{"{tm}", tm}});
      check_answer(c.get(p), e, p);
    }
    // Files are served as they are, not as JSON.
    auto log = c.get(prefix + "/jobmanager/log");
    CHECK(log.status == 200);
    CHECK(log.text == "the JobManager's log\n");
    CHECK(c.get(prefix + "/jobmanager/stdout").text == "the JobManager's stdout\n");
    CHECK(c.get(prefix + "/jobmanager/logs/jobmanager.log").text == "the JobManager's log\n");
    // The TaskManager's, sent by its TaskExecutor.
    const auto tm_log = "the log of " + tm + "\n";
    auto tm_answer = c.get(prefix + "/taskmanagers/" + tm + "/log");
    CHECK(tm_answer.status == 200);
    CHECK(tm_answer.text == tm_log);
    CHECK(c.get(prefix + "/taskmanagers/" + tm + "/stdout").text == "the stdout of " + tm + "\n");
    CHECK(c.get(prefix + "/taskmanagers/" + tm + "/logs/taskmanager.log").text == tm_log);
  }

  // Values where the test knows them.
  auto details = c.get("/jobs/" + running).body;
  CHECK(details["job-type"] == "STREAMING");
  CHECK(c.get("/jobs/" + finished).body["job-type"] == "STREAMING");
  {
    auto batch = wordcount(c.dir / "input.txt", c.dir / "batch-output", "BATCH");
    c.run(batch);
    const auto bid = batch.job->job_id.to_string();
    REQUIRE(eventually([&] { return c.get("/jobs/" + bid).body["state"] == "FINISHED"; }, 60s));
    CHECK(c.get("/jobs/" + bid).body["job-type"] == "BATCH");
    CHECK(c.get("/v1/jobs/" + bid + "/config").body["execution-config"]["execution-mode"]
          == "BATCH");
  }
  CHECK(details["isStoppable"] == false);
  auto job_config = c.get("/jobs/" + running + "/config").body;
  CHECK(job_config["execution-config"]["restart-strategy"] == "fixed-delay");
  CHECK(job_config["execution-config"]["user-config"]["restart-strategy.type"] == "fixed-delay");
  auto result = c.get("/jobs/" + finished + "/execution-result").body;
  CHECK(result["status"]["id"] == "COMPLETED");
  CHECK(result["job-execution-result"]["id"] == finished);
  CHECK(result["job-execution-result"]["application-status"] == "SUCCEEDED");
  CHECK(c.get("/jobs/" + running + "/execution-result").body["status"]["id"] == "IN_PROGRESS");
  auto stats = c.get("/jobs/" + running + "/checkpoints").body;
  CHECK(stats["history"].size() >= 1);
  CHECK(stats["history"].size() <= 10);
  CHECK(stats["history"][0]["id"].get<std::int64_t>()
        >= stats["history"][stats["history"].size() - 1]["id"].get<std::int64_t>());
  auto config = c.get("/jobs/" + running + "/checkpoints/config").body;
  CHECK(config["interval"] == 1000);
  CHECK(config["mode"] == "exactly_once");
  auto finished_config = c.get("/jobs/" + finished + "/checkpoints/config").body;
  CHECK(finished_config["interval"] == std::numeric_limits<std::int64_t>::max());
  auto vertex_metrics =
    c.get("/jobs/" + finished + "/vertices/" + finished_vid + "/metrics?get=0.numRecordsOut").body;
  REQUIRE(vertex_metrics.size() == 1);
  CHECK(vertex_metrics[0]["id"] == "0.numRecordsOut");
  auto requirements = c.get("/jobs/" + running + "/resource-requirements").body;
  CHECK(requirements[running_vid]["parallelism"]["upperBound"] == 2);
  auto tm_details = c.get("/taskmanagers/" + tm).body;
  CHECK(tm_details["allocatedSlots"].size() >= 1);
  CHECK(tm_details["allocatedSlots"][0]["jobId"] == running);
  auto logs = c.get("/jobmanager/logs").body["logs"];
  std::vector<std::string> names;
  for (const auto& l : logs)
    names.push_back(l["name"]);
  // The link out of the directory is not a log file of it.
  CHECK(names == std::vector<std::string>{"jobmanager.log", "jobmanager.out"});
  auto tm_logs = c.get("/taskmanagers/" + tm + "/logs").body["logs"];
  std::vector<std::string> tm_names;
  for (const auto& l : tm_logs)
    tm_names.push_back(l["name"]);
  CHECK(tm_names == std::vector<std::string>{"taskmanager.log", "taskmanager.out"});
  CHECK(tm_logs[0]["size"] == ("the log of " + tm + "\n").size());
  // A log larger than one piece the TaskExecutor sends arrives whole.
  {
    std::string big;
    for (int i = 0; big.size() < 9u << 20; ++i)
      big += "line " + std::to_string(i) + " of a long TaskManager log\n";
    write_text(c.dir / (tm + "-log") / "big.log", big);
    auto a = c.get("/taskmanagers/" + tm + "/logs/big.log");
    CHECK(a.status == 200);
    CHECK(a.text.size() == big.size());
    CHECK(a.text == big);
  }
  auto job_metrics = c.get("/jobs/" + running + "/metrics?get=numRestarts,noSuchMetric").body;
  REQUIRE(job_metrics.size() == 1);
  CHECK(job_metrics[0]["value"] == "0");
  auto aggregated = c.get("/jobs/" + finished + "/vertices/" + finished_vid
                          + "/subtasks/metrics?get=numRecordsOut&agg=sum")
                      .body;
  REQUIRE(aggregated.size() == 1);
  CHECK(aggregated[0]["sum"].get<double>() > 0);
  CHECK_FALSE(aggregated[0].contains("min"));
  auto jm_metrics = c.get("/jobmanager/metrics?get=numRegisteredTaskManagers").body;
  REQUIRE(jm_metrics.size() == 1);
  CHECK(jm_metrics[0]["value"] == "2");

  // A checkpoint triggered through REST completes, its status polled by trigger id.
  {
    for (const std::string prefix : {"", "/v1"}) {
      auto trigger = c.post(prefix + "/jobs/" + running + "/checkpoints", "");
      REQUIRE(trigger.status == 202);
      check_fields(trigger.body, trigger_response, "POST checkpoints");
      const auto path = prefix + "/jobs/" + running + "/checkpoints/"
        + trigger.body["request-id"].get<std::string>();
      answer status;
      REQUIRE(eventually(
        [&] {
          status = c.get(path);
          return status.status == 200 && status.body["status"]["id"] == "COMPLETED";
        },
        30s));
      CAPTURE(status.text);
      REQUIRE(status.body["operation"]["checkpointId"].is_number_integer());
      auto id = status.body["operation"]["checkpointId"].get<std::int64_t>();
      check_answer(
        c.get(prefix + "/jobs/" + running + "/checkpoints/details/" + std::to_string(id)),
        {200, completed_checkpoint_statistics}, "the triggered checkpoint");
    }
    // A type Flint does not take, an unknown trigger, and a job that ended.
    check_answer(c.post("/jobs/" + running + "/checkpoints", R"({"checkpointType": "FULL"})"),
                 {400, {}}, "FULL checkpoint");
    check_answer(c.get("/jobs/" + running + "/checkpoints/0123456789abcdef0123456789abcdef"),
                 {404, {}}, "unknown trigger");
    auto on_finished = c.post("/jobs/" + finished + "/checkpoints", "{}");
    REQUIRE(on_finished.status == 202);
    auto failed = c.get("/jobs/" + finished + "/checkpoints/"
                        + on_finished.body["request-id"].get<std::string>());
    CHECK(failed.body["status"]["id"] == "COMPLETED");
    CHECK(failed.body["operation"]["failureCause"]["stack-trace"].is_string());
  }

  // yarn-cancel answers as a cancel does; bad job ids get Flink's errors.
  {
    check_answer(c.get("/jobs/" + finished + "/yarn-cancel"), {409, {}}, "yarn-cancel finished");
    check_answer(c.get("/v1/jobs/0123456789abcdef0123456789abcdef/yarn-cancel"), {404, {}},
                 "yarn-cancel unknown");
    check_answer(c.get("/jobs/not-a-job/config"), {400, {}}, "malformed job id");
    check_answer(c.get("/jobs/0123456789abcdef0123456789abcdef/execution-result"), {404, {}},
                 "unknown job's result");
  }

  // Stop with drain ends the job with a savepoint (Flint does not drain yet: a plain
  // stop-with-savepoint, logged), which savepoint-disposal then deletes.
  {
    const auto target = (c.dir / "savepoints").string();
    auto stop = c.post("/v1/jobs/" + running + "/stop",
                       json{{"drain", true}, {"targetDirectory", target}}.dump());
    REQUIRE(stop.status == 202);
    check_fields(stop.body, trigger_response, "POST stop");
    answer status;
    REQUIRE(eventually(
      [&] {
        status =
          c.get("/jobs/" + running + "/savepoints/" + stop.body["request-id"].get<std::string>());
        return status.status == 200 && status.body["status"]["id"] == "COMPLETED";
      },
      60s));
    CAPTURE(status.text);
    REQUIRE(status.body["operation"]["location"].is_string());
    const auto location = status.body["operation"]["location"].get<std::string>();
    REQUIRE(eventually([&] { return c.get("/jobs/" + running).body["state"] == "FINISHED"; }, 30s));
    auto ended = c.get("/v1/jobs/" + running + "/execution-result").body;
    CHECK(ended["job-execution-result"]["application-status"] == "SUCCEEDED");
    auto with_savepoint = c.get("/jobs/" + running + "/checkpoints").body;
    CHECK(with_savepoint["latest"]["savepoint"].is_object());
    check_fields(with_savepoint["latest"]["savepoint"], completed_checkpoint_statistics,
                 "latest savepoint");
    CHECK(with_savepoint["latest"]["savepoint"]["checkpoint_type"] == "SYNC_SAVEPOINT");
    CHECK(with_savepoint["latest"]["savepoint"]["is_savepoint"] == true);
    CHECK(with_savepoint["latest"]["savepoint"]["external_path"] == location);

    auto dispose = c.post("/v1/savepoint-disposal", json{{"savepoint-path", location}}.dump());
    REQUIRE(dispose.status == 200);
    check_fields(dispose.body, trigger_response, "POST savepoint-disposal");
    auto disposed =
      c.get("/savepoint-disposal/" + dispose.body["request-id"].get<std::string>()).body;
    CHECK(disposed["status"]["id"] == "COMPLETED");
    CHECK_FALSE(disposed["operation"].contains("failure-cause"));
    auto dir = location.starts_with("file:") ? location.substr(5) : location;
    CHECK_FALSE(std::filesystem::exists(dir));
    // Again: nothing is there; and a directory that holds no savepoint is not deleted.
    auto again = c.post("/savepoint-disposal", json{{"savepoint-path", location}}.dump());
    auto again_status = c.get("/savepoint-disposal/" + again.body["request-id"].get<std::string>());
    CHECK(again_status.body["operation"]["failure-cause"]["stack-trace"].is_string());
    auto not_savepoint =
      c.post("/savepoint-disposal", json{{"savepoint-path", (c.dir / "log").string()}}.dump());
    auto refused =
      c.get("/savepoint-disposal/" + not_savepoint.body["request-id"].get<std::string>());
    CHECK(refused.body["operation"]["failure-cause"]["stack-trace"].is_string());
    CHECK(std::filesystem::exists(c.dir / "log" / "jobmanager.log"));
    check_answer(c.post("/savepoint-disposal", "{\"savepoint-path\": 3}"), {400, {}},
                 "disposal without a path");
  }
}
