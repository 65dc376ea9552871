// The metric registry, the Prometheus text format and the reporter over a real loopback socket.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>

#include "runtime/http/http_service.hpp"
#include "runtime/metrics/meter_view.hpp"
#include "runtime/metrics/metric_registry.hpp"
#include "runtime/metrics/process_metrics.hpp"
#include "runtime/metrics/prometheus_reporter.hpp"
#include "runtime/metrics/prometheus_text.hpp"
#include "runtime/metrics/task_io_metrics.hpp"

using namespace flint;
using namespace flint::metrics;
using namespace std::chrono_literals;

namespace {

/// A plain HTTP GET over loopback: the whole answer, headers included.
std::string http_get(std::uint16_t port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  auto req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  REQUIRE(::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size()));
  std::string out;
  char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n <= 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

} // namespace

TEST_CASE("a group leaves the registry with its registration") {
  auto reg = metric_registry::make();
  {
    auto r = reg->add([](std::vector<sample>& out) { out.push_back({"jobmanager", "x", {}, 1}); });
    CHECK(reg->groups() == 1);
    CHECK(reg->collect().size() == 1);
  }
  CHECK(reg->groups() == 0);
  CHECK(reg->groups_added() == 1);
  CHECK(reg->collect().empty());
}

TEST_CASE("a registration that outlives its registry does nothing when it goes") {
  registration r;
  {
    auto reg = metric_registry::make();
    r = reg->add([](std::vector<sample>&) {});
  }
  // r's destructor runs at the end without a registry: no crash.
}

TEST_CASE("Prometheus names and labels follow Flink's reporter") {
  CHECK(prometheus_name("taskmanager.job.task", "buffers.inPoolUsage")
        == "flink_taskmanager_job_task_buffers_inPoolUsage");
  CHECK(prometheus_name("jobmanager", "numRunningJobs") == "flink_jobmanager_numRunningJobs");
  auto text =
    to_prometheus_text({{"taskmanager.job.task",
                         "numRecordsIn",
                         {{"task_name", "Source: \"x\"\\y"}, {"subtask_index", "0"}},
                         42},
                        {"taskmanager.job.task", "numRecordsIn", {{"subtask_index", "1"}}, 0.5},
                        {"jobmanager", "numRunningJobs", {{"host", "h"}}, 3}});
  CHECK(text.find("# TYPE flink_taskmanager_job_task_numRecordsIn gauge\n") != std::string::npos);
  // Label values filtered to [a-zA-Z0-9:_] as Flink's filterLabelValueCharacters does by default.
  CHECK(text.find("flink_taskmanager_job_task_numRecordsIn{task_name=\"Source:__x__y\","
                  "subtask_index=\"0\"} 42.0\n")
        != std::string::npos);
  // filterLabelValueCharacters: false keeps them, escaping what the format needs.
  auto unfiltered = to_prometheus_text(
    {{"taskmanager.job.task", "numRecordsIn", {{"task_name", "Source: \"x\"\\y"}}, 42}},
    text_options{false});
  CHECK(unfiltered.find("{task_name=\"Source: \\\"x\\\"\\\\y\"} 42.0\n") != std::string::npos);
  CHECK(text.find("flink_taskmanager_job_task_numRecordsIn{subtask_index=\"1\"} 0.5\n")
        != std::string::npos);
  CHECK(text.find("flink_jobmanager_numRunningJobs{host=\"h\"} 3.0\n") != std::string::npos);
  // One TYPE line per family.
  CHECK(text.find("# TYPE flink_taskmanager_job_task_numRecordsIn")
        == text.rfind("# TYPE flink_taskmanager_job_task_numRecordsIn"));
}

TEST_CASE("port specs: a port, a range, or 0") {
  CHECK(http::parse_port_range("9249", "metrics.reporter.prom.port").value()
        == std::make_pair<std::uint16_t, std::uint16_t>(9249, 9249));
  CHECK(http::parse_port_range("9250-9260", "metrics.reporter.prom.port").value()
        == std::make_pair<std::uint16_t, std::uint16_t>(9250, 9260));
  CHECK(http::parse_port_range("0", "metrics.reporter.prom.port").value().first == 0);
  CHECK_FALSE(http::parse_port_range("nine", "metrics.reporter.prom.port"));
  CHECK_FALSE(http::parse_port_range("9260-9250", "metrics.reporter.prom.port"));
  CHECK_FALSE(http::parse_port_range("70000", "metrics.reporter.prom.port"));
  CHECK(http::parse_port_range("x", "metrics.reporter.prom.port")
          .error()
          .message.find("metrics.reporter.prom.port")
        != std::string::npos);
}

TEST_CASE("the time figures split a window into busy, idle and backpressured") {
  task_io_metrics io;
  using clock = task_io_metrics::clock;
  auto t0 = clock::now();
  io.time_per_second(t0); // opens the window
  io.step_began(t0);
  io.step_ended(t0 + 200ms, true, wait_reason::backpressured);
  io.step_began(t0 + 500ms); // 300 ms backpressured
  io.step_ended(t0 + 600ms, true, wait_reason::idle);
  auto t = io.time_per_second(t0 + 1000ms); // 400 ms idle, still waiting
  CHECK(t.busy_ms == doctest::Approx(300));
  CHECK(t.backpressured_ms == doctest::Approx(300));
  CHECK(t.idle_ms == doctest::Approx(400));
  // Within the next second the figures stay those of the window before.
  CHECK(io.time_per_second(t0 + 1500ms).idle_ms == doctest::Approx(400));
  auto later = io.time_per_second(t0 + 2000ms);
  CHECK(later.idle_ms == doctest::Approx(1000));
  CHECK(later.busy_ms == doctest::Approx(0));
}

TEST_CASE("the reporter serves the registry over HTTP in the text format") {
  auto reg = metric_registry::make();
  auto io = std::make_shared<task_io_metrics>();
  auto& source = io->add_operator("Source: numbers", "cbc357ccb763df2852fee8c4fc7d55f2");
  task_scope scope{"localhost", "tm-1", "j", "WordCount", "v", "a", "Source: numbers", 0, 1};
  auto group = reg->add(task_collector(scope, io));
  io->records_out = 1234;
  source.records_out = 99;
  auto reporter = prometheus_reporter::start(reg, "127.0.0.1", "0");
  REQUIRE_MESSAGE(reporter, reporter.error().to_string());
  auto answer = http_get((*reporter)->port(), "/metrics");
  CHECK(answer.find("200 OK") != std::string::npos);
  CHECK(answer.find("text/plain; version=0.0.4") != std::string::npos);
  CHECK(answer.find("flink_taskmanager_job_task_numRecordsOut{host=\"localhost\",tm_id=\"tm_1\"")
        != std::string::npos);
  CHECK(answer.find("subtask_index=\"1\"} 1234.0") != std::string::npos);
  CHECK(answer.find("flink_taskmanager_job_task_operator_numRecordsOut{") != std::string::npos);
  CHECK(answer.find("operator_id=\"cbc357ccb763df2852fee8c4fc7d55f2\",operator_name=\"Source:_numbers\"} 99.0")
        != std::string::npos);
  CHECK(answer.find("flink_taskmanager_job_task_numRecordsOutPerSecond{") != std::string::npos);
  CHECK(answer.find("flink_taskmanager_job_task_isBackPressured{") != std::string::npos);
}

TEST_CASE("a reporter told not to filter label values serves them as they are") {
  auto reg = metric_registry::make();
  auto group = reg->add([](std::vector<sample>& out) {
    out.push_back({"jobmanager.job", "uptime", {{"job_name", "Streaming WordCount"}}, 1});
  });
  auto reporter = prometheus_reporter::start(reg, "127.0.0.1", "0", text_options{false});
  REQUIRE_MESSAGE(reporter, reporter.error().to_string());
  auto answer = http_get((*reporter)->port(), "/metrics");
  CHECK(answer.find("job_name=\"Streaming WordCount\"") != std::string::npos);
  auto filtering = prometheus_reporter::start(reg, "127.0.0.1", "0");
  REQUIRE(filtering);
  CHECK(http_get((*filtering)->port(), "/metrics").find("job_name=\"Streaming_WordCount\"")
        != std::string::npos);
}

TEST_CASE("a meter view gives a counter's rate per second over the last minute, as MeterView") {
  meter_view view;
  using clock = meter_view::clock;
  auto t0 = clock::time_point{} + std::chrono::hours(1);
  CHECK(view.rate(t0, 100) == 0.0); // one sample: no rate yet
  CHECK(view.rate(t0 + 500ms, 150) == 0.0); // under a second
  CHECK(view.rate(t0 + 2s, 300) == doctest::Approx(100.0));
  CHECK(view.rate(t0 + 10s, 1100) == doctest::Approx(100.0));
  // Past the span, the rate covers only its last minute: 10/s over the newest 60 s.
  CHECK(view.rate(t0 + 70s, 1700) == doctest::Approx(10.0));
  CHECK(view.rate(t0 + 130s, 1700) == doctest::Approx(0.0).epsilon(0.01));
}

TEST_CASE("a task's meters, isBackPressured and its operators' meters are reported") {
  auto io = std::make_shared<task_io_metrics>();
  auto& sink = io->add_operator("Sink: out", "0123456789abcdef0123456789abcdef");
  task_scope scope{"h", "tm", "j", "job", "v", "a", "Map", 0, 0};
  auto collect = task_collector(scope, io);
  auto value = [](const std::vector<sample>& samples, const std::string& scope_name,
                  const std::string& name) {
    for (const auto& s : samples)
      if (s.scope == scope_name && s.name == name)
        return s.value;
    FAIL("no " << scope_name << " " << name);
    return -1.0;
  };
  std::vector<sample> first;
  collect(first);
  for (const char* name : {"numRecordsInPerSecond", "numRecordsOutPerSecond", "numBytesInPerSecond",
                           "numBytesOutPerSecond", "numBytesIn"})
    CHECK(value(first, "taskmanager.job.task", name) == 0.0);
  CHECK(value(first, "taskmanager.job.task", "isBackPressured") == 0.0);
  CHECK(value(first, "taskmanager.job.task.operator", "numRecordsInPerSecond") == 0.0);
  sink.records_in = 10;
  io->bytes_in_local = 5;
  io->bytes_in_remote = 7;
  auto now = task_io_metrics::clock::now();
  io->step_began(now);
  io->step_ended(now, true, wait_reason::backpressured);
  std::vector<sample> second;
  collect(second);
  CHECK(value(second, "taskmanager.job.task", "isBackPressured") == 1.0);
  CHECK(value(second, "taskmanager.job.task", "numBytesIn") == 12.0);
  io->step_began(task_io_metrics::clock::now());
  std::vector<sample> third;
  collect(third);
  CHECK(value(third, "taskmanager.job.task", "isBackPressured") == 0.0);
}

TEST_CASE("operator figures carry Flink's operator_id beside operator_name") {
  auto io = std::make_shared<task_io_metrics>();
  io->add_operator("Sink: out", "0123456789abcdef0123456789abcdef").records_in = 3;
  std::vector<sample> out;
  task_collector(task_scope{"h", "tm", "j", "job", "v", "a", "Sink: out", 0, 0}, io)(out);
  int operator_samples = 0;
  for (const auto& s : out) {
    if (s.scope != "taskmanager.job.task.operator")
      continue;
    ++operator_samples;
    std::map<std::string, std::string> vars(s.vars.begin(), s.vars.end());
    CHECK(vars["operator_id"] == "0123456789abcdef0123456789abcdef");
    CHECK(vars["operator_name"] == "Sink: out");
    CHECK(vars["task_name"] == "Sink: out");
  }
  CHECK(operator_samples == 4);
}

TEST_CASE("the task_name label is the vertex's name, without the subtask's (n/N), as Flink's") {
  auto name_of = [](const std::string& task_name, int subtask_index) {
    task_scope scope{"h", "tm", "j", "job", "v", "a", task_name, 0, subtask_index};
    for (const auto& [key, value] : scope.vars())
      if (key == "task_name")
        return value;
    return std::string("(none)");
  };
  CHECK(name_of("Source: numbers -> Map (2/4)", 1) == "Source: numbers -> Map");
  CHECK(name_of("Sink: out (1/1)", 0) == "Sink: out");
  // Only the task's own subtask suffix goes; a name that merely ends in parentheses stays.
  CHECK(name_of("Map (2/4)", 0) == "Map (2/4)");
  CHECK(name_of("Map (1/x)", 0) == "Map (1/x)");
  CHECK(name_of("Map (1/)", 0) == "Map (1/)");
  CHECK(name_of("Map", 0) == "Map");
  CHECK(name_of("", 0).empty());
}

TEST_CASE("a task reports the share of its output buffer pools in use as buffers.outPoolUsage") {
  auto io = std::make_shared<task_io_metrics>();
  io->out_pool_usage = 0.375f;
  std::vector<sample> out;
  task_collector(task_scope{"h", "tm", "j", "job", "v", "a", "Map", 0, 0}, io)(out);
  double usage = -1;
  for (const auto& s : out)
    if (s.scope == "taskmanager.job.task" && s.name == "buffers.outPoolUsage")
      usage = s.value;
  CHECK(usage == doctest::Approx(0.375));
  CHECK(prometheus_name("taskmanager.job.task", "buffers.outPoolUsage")
        == "flink_taskmanager_job_task_buffers_outPoolUsage");
}

TEST_CASE("a task reports its last checkpoint's alignment time and start delay in nanoseconds") {
  auto io = std::make_shared<task_io_metrics>();
  auto value_of = [&](const std::string& name) {
    std::vector<sample> out;
    task_collector(task_scope{"h", "tm", "j", "job", "v", "a", "Map", 0, 0}, io)(out);
    for (const auto& s : out)
      if (s.scope == "taskmanager.job.task" && s.name == name)
        return s.value;
    return -1.0;
  };
  // Before any checkpoint.
  CHECK(value_of("checkpointAlignmentTime") == 0);
  CHECK(value_of("checkpointStartDelayNanos") == 0);
  io->checkpoint_alignment_time = 30'000'000;
  io->checkpoint_start_delay_nanos = 2'000'000;
  CHECK(value_of("checkpointAlignmentTime") == 30'000'000);
  CHECK(value_of("checkpointStartDelayNanos") == 2'000'000);
  CHECK(prometheus_name("taskmanager.job.task", "checkpointAlignmentTime")
        == "flink_taskmanager_job_task_checkpointAlignmentTime");
  // An alignment in progress shows how long it has taken so far (Flink's
  // getAlignmentDurationNanos): a stuck one is visible before its checkpoint ends.
  using clock = task_io_metrics::clock;
  auto now = clock::time_point(std::chrono::seconds(100));
  io->checkpoint_alignment_started_nanos = std::chrono::nanoseconds(std::chrono::seconds(97)).count();
  CHECK(io->alignment_time_nanos(now) == 3'000'000'000);
  CHECK(value_of("checkpointAlignmentTime") > 30'000'000);
  io->checkpoint_alignment_started_nanos = 0;
  CHECK(io->alignment_time_nanos(now) == 30'000'000);
}

TEST_CASE("an ended task's series leave the registry once the task lets go of its figures") {
  // The TaskExecutor keeps the registration of an ended task for a while; what it reports must
  // not outlive the task (Flink closes the task's metric group as the task ends).
  auto reg = metric_registry::make();
  auto io = std::make_shared<task_io_metrics>();
  io->add_operator("Source: numbers", "cbc357ccb763df2852fee8c4fc7d55f2");
  io->records_out = 7;
  auto group = reg->add(task_collector(task_scope{"h", "tm", "j", "job", "v", "a", "Map", 0, 0}, io));
  auto keep = reg->add([](std::vector<sample>& out) {
    out.push_back({"taskmanager", "Status.JVM.Threads.Count", {{"host", "h"}}, 3});
  });
  auto running = reg->collect();
  CHECK(running.size() > 20);
  io.reset(); // the task ended: its executor and the task itself dropped their references
  auto ended = reg->collect();
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].scope == "taskmanager");
}

TEST_CASE("the process figures are read from /proc as Flink's Status group names them") {
  // /proc/<pid>/stat with a command holding a space and a parenthesis.
  const std::string stat = "4242 (flint (node) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 "
                           "250 50 0 0 20 0 17 0 12345 100000000 2500 18446744073709551615";
  auto figures = parse_proc_figures(stat, "25000 2500 700 1 0 3000 0", 100, 4096);
  REQUIRE(figures);
  CHECK(figures->cpu_time_ns == 3'000'000'000); // (250 + 50) ticks of 10 ms
  CHECK(figures->threads == 17);
  CHECK(figures->rss_bytes == 2500 * 4096);
  CHECK_FALSE(parse_proc_figures("garbage", "1 2", 100, 4096));
  CHECK_FALSE(parse_proc_figures(stat, "", 100, 4096));
  CHECK(cpu_load(0, 500'000'000, 1s, 2) == doctest::Approx(0.25));
  CHECK(cpu_load(0, 5'000'000'000, 1s, 2) == 1.0);

  std::vector<sample> out;
  process_collector("taskmanager", {{"host", "h"}, {"tm_id", "tm-1"}})(out);
  REQUIRE(out.size() == 4);
  std::map<std::string, double> by_name;
  for (const auto& s : out) {
    CHECK(s.scope == "taskmanager");
    by_name[s.name] = s.value;
  }
  CHECK(by_name.at("Status.JVM.Threads.Count") >= 1);
  CHECK(by_name.at("Status.ProcessTree.Memory.RSS") > 0);
  CHECK(by_name.at("Status.JVM.CPU.Time") >= 0);
  CHECK(by_name.at("Status.JVM.CPU.Load") >= 0);
  CHECK(prometheus_name("taskmanager", "Status.JVM.CPU.Load") == "flink_taskmanager_Status_JVM_CPU_Load");
}

TEST_CASE("a second reporter on a taken port takes the next one of its range") {
  auto reg = metric_registry::make();
  auto first = prometheus_reporter::start(reg, "127.0.0.1", "0");
  REQUIRE(first);
  auto p = (*first)->port();
  auto spec = std::to_string(p) + "-" + std::to_string(p + 5);
  auto second = prometheus_reporter::start(reg, "127.0.0.1", spec);
  REQUIRE_MESSAGE(second, second.error().to_string());
  CHECK((*second)->port() > p);
  auto taken = prometheus_reporter::start(reg, "127.0.0.1", std::to_string(p));
  REQUIRE_FALSE(taken);
  CHECK(taken.error().message.find("no free port") != std::string::npos);
}
