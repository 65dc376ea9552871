#!/usr/bin/env bash
# Prometheus itself reads Flint's /metrics: Prometheus' own parser (`promtool check metrics`,
# Debian's prometheus package) accepts what a JobManager and a TaskManager of a running job serve,
# and a real Prometheus server, started here on a free loopback port with its own config and data
# in the test's work dir, scrapes both nodes every second and answers a query for
# flink_taskmanager_job_task_numRecordsIn with the job's figures: each series' value lies between
# what the TaskManager's own /metrics said just before and just after Prometheus' scrape. The
# series carry Flink's labels (operator_id beside operator_name) and buffers.outPoolUsage; once the
# job is cancelled its tasks' series leave the TaskManager's /metrics, as Flink closes an ended
# task's metric group.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
for tool in promtool prometheus; do
  command -v "$tool" >/dev/null || { echo "SKIP: no $tool (deploy/install-deps.sh --tests installs Debian's prometheus)"; exit 77; }
done

SLOTS=2 write_loopback_config \
  "metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory" \
  "metrics.reporter.prom.port: 0"
start_jobmanager
start_node tm "" taskmanager --config "$WORK/flink-conf.yaml" >/dev/null
for _ in $(seq 1 100); do
  grep -q "Registering TaskManager with ResourceID" "$WORK/jm.log" && break; sleep 0.1
done
jm_port=$(ready_field jm metrics_port)
tm_port=$(ready_field tm metrics_port)
[[ -n "$jm_port" && "$jm_port" != 0 && -n "$tm_port" && "$tm_port" != 0 ]] || fail "a node started no Prometheus reporter"

"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -d -p 2 "$FLINT_JOBS/endless.so" --rate 200 \
  >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; fail "flint run endless.so"; }
job=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run.log")
[[ -n "$job" ]] || fail "no job id in $(cat "$WORK/run.log")"

# The job's records flowing: every subtask reported, the keyed sum counting records in.
metrics() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read().decode())' "$1"; }
for i in $(seq 1 300); do
  metrics "$tm_port" >"$WORK/tm.metrics"
  [[ $(grep -c '^flink_taskmanager_job_task_numRecordsIn{' "$WORK/tm.metrics") -ge 4 ]] &&
    grep -q '^flink_taskmanager_job_task_numRecordsIn{.* [1-9][0-9.]*$' "$WORK/tm.metrics" && break
  [[ $i -lt 300 ]] || fail "the job's tasks did not report records in within 30 s"
  sleep 0.1
done

# Prometheus' own parser on every node's answer. promtool exits 1 on what it cannot parse and 3 on
# its style lints; the one lint Flink's own reporter trips too (its names are camelCase:
# numRecordsIn) is allowed, nothing else.
promtool_check() {
  local file=$1 log=$2 rc=0
  promtool check metrics <"$file" >"$log" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] && return 0
  [[ $rc -eq 3 ]] && ! grep -qv "metric names should be written in 'snake_case' not 'camelCase'$" "$log"
}
printf 'flink_taskmanager_job_task_numRecordsIn{task_name="x} 1\n' >"$WORK/broken.metrics"
! promtool_check "$WORK/broken.metrics" "$WORK/promtool-broken.log" ||
  fail "promtool accepted an unterminated label value: the check could not fail"
metrics "$jm_port" >"$WORK/jm.metrics"
for node in jm tm; do
  promtool_check "$WORK/$node.metrics" "$WORK/promtool-$node.log" ||
    { cat "$WORK/promtool-$node.log"; fail "promtool check metrics refused the $node's /metrics"; }
  echo "promtool check metrics: $node's /metrics ($(grep -vc '^#' "$WORK/$node.metrics") samples) accepted"
done

# A real Prometheus server scraping both nodes every second.
prom_port=$(unused_port)
mkdir -p "$WORK/prometheus-data"
cat >"$WORK/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: flint
    static_configs:
      - targets: ['127.0.0.1:$jm_port', '127.0.0.1:$tm_port']
CONF
promtool check config "$WORK/prometheus.yml" >"$WORK/promtool-config.log" 2>&1 ||
  { cat "$WORK/promtool-config.log"; fail "promtool refused the test's own config"; }
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prometheus-data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$WORK/prometheus.log" 2>&1 </dev/null &
PIDS+=($!)

python3 - "$prom_port" "$jm_port" "$tm_port" <<'PY' || fail "Prometheus does not hold the job's figures"
import json, re, sys, time, urllib.parse, urllib.request
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
prom, jm_port, tm_port = sys.argv[1:]
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? ([^ ]+)$')
label = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

def scrape(port):
    """Flint's own /metrics: [(name, labels, value)]."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            m = sample.match(line)
            check(m, f"not the text format: {line!r}")
            out.append((m.group(1), dict(label.findall(m.group(2) or "")), float(m.group(3))))
    return out

def records_in(port):
    return {l["task_attempt_id"]: v for n, l, v in scrape(port)
            if n == "flink_taskmanager_job_task_numRecordsIn"}

def query(q):
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=10) as r:
        answer = json.load(r)
    check(answer["status"] == "success", f"{q}: {answer}")
    return answer["data"]["result"]

def wait_for(what, seconds, probe):
    deadline = time.time() + seconds
    while True:
        try:
            got = probe()
            if got:
                return got
        except OSError:
            pass  # Prometheus still starting
        check(time.time() < deadline, f"{what} within {seconds} s")
        time.sleep(0.2)

# Flint's own answer: Flink's names, label values filtered to [a-zA-Z0-9:_] as Flink's reporter does.
own = scrape(tm_port)
names = {n for n, _, _ in own}
for want in ("flink_taskmanager_job_task_numRecordsInPerSecond", "flink_taskmanager_job_task_numBytesOutPerSecond",
             "flink_taskmanager_job_task_isBackPressured", "flink_taskmanager_job_task_buffers_inPoolUsage",
             "flink_taskmanager_job_task_buffers_outPoolUsage", "flink_taskmanager_job_task_busyTimeMsPerSecond",
             "flink_taskmanager_job_task_operator_numRecordsOutPerSecond", "flink_taskmanager_Status_JVM_CPU_Load"):
    check(want in names, f"no {want}")
for n, labels, v in own:
    for key, text in labels.items():
        check(re.fullmatch(r"[a-zA-Z0-9:_]*", text), f"label {key}={text!r} not filtered")
    if n == "flink_taskmanager_job_task_numRecordsIn":
        for key in ("host", "tm_id", "job_id", "job_name", "task_id", "task_attempt_id", "task_name",
                    "task_attempt_num", "subtask_index"):
            check(key in labels, f"no {key} label: {labels}")
    if n.endswith("PoolUsage"):
        check(0 <= v <= 1, f"{n} {labels}: {v}")
# task_name is the vertex's name, shared by its subtasks (Flink's, not "Map (1/2)").
task_names = {l["task_name"] for n, l, _ in own if n == "flink_taskmanager_job_task_numRecordsIn"}
check(task_names == {"Source:_Sequence_Source____Map", "aggregation____Filter____Sink:_Print_to_Std__Out"},
      f"task_name labels: {task_names}")

# Both targets up.
up = wait_for("both nodes scraped and up", 30,
              lambda: (lambda r: r if len(r) == 2 and all(s["value"][1] == "1" for s in r) else None)(query("up")))
print("Prometheus scrapes", sorted(s["metric"]["instance"] for s in up))

# Flint's figures before, Prometheus' latest scrape after that moment, Flint's figures after it:
# each series Prometheus answers lies between the two readings of the same counter.
before = records_in(tm_port)
after_before = time.time()
def fresh():
    series = query("flink_taskmanager_job_task_numRecordsIn[10s]")
    latest = {s["metric"].get("task_attempt_id"): s["values"][-1] for s in series}
    if len(latest) == len(before) and all(float(ts) > after_before for ts, _ in latest.values()):
        return series
series = wait_for("a scrape of the TaskManager after Flint's own reading", 15, fresh)
after = records_in(tm_port)
check(len(before) >= 4, f"expected the 4 subtasks' figures: {before}")
instant = {s["metric"]["task_attempt_id"]: s for s in query("flink_taskmanager_job_task_numRecordsIn")}
moving = 0
for s in series:
    attempt = s["metric"]["task_attempt_id"]
    value = float(s["values"][-1][1])
    check(s["metric"]["job_name"] == "Endless_Sequence", f"job_name label: {s['metric']}")
    check(s["metric"]["instance"] == f"127.0.0.1:{tm_port}", f"instance: {s['metric']}")
    check(before[attempt] <= value <= after[attempt],
          f"{s['metric']['task_name']} {attempt}: Prometheus {value}, Flint {before[attempt]} .. {after[attempt]}")
    check(attempt in instant, f"the instant query lacks {attempt}")
    moving += value > 0
    print(f"  {s['metric']['task_name']} ({s['metric']['subtask_index']}): numRecordsIn "
          f"Flint {before[attempt]:.0f} <= Prometheus {value:.0f} <= Flint {after[attempt]:.0f}")
check(moving >= 2, "no subtask counted records in")

# The JobManager's figures reach Prometheus too.
jobs = wait_for("flink_jobmanager_numRunningJobs 1", 15,
                lambda: [s for s in query("flink_jobmanager_numRunningJobs") if s["value"][1] == "1"])
check(jobs[0]["metric"]["instance"] == f"127.0.0.1:{jm_port}", f"{jobs}")
uptime = query("flink_jobmanager_job_uptime")
check(len(uptime) == 1 and float(uptime[0]["value"][1]) > 0, f"job uptime: {uptime}")

# Flink's labels and gauges beside the counters.
ops = query("flink_taskmanager_job_task_operator_numRecordsOut")
check(ops, "no operator series")
for s in ops:
    check(re.fullmatch(r"[0-9a-f]{32}", s["metric"].get("operator_id", "")), f"operator_id: {s['metric']}")
    check(s["metric"].get("operator_name"), f"operator_name: {s['metric']}")
check(len({s["metric"]["operator_id"] for s in ops}) == len({s["metric"]["operator_name"] for s in ops}),
      f"one operator_id per operator: {ops}")
usage = query("flink_taskmanager_job_task_buffers_outPoolUsage")
check(len(usage) == len(before) and all(0 <= float(s["value"][1]) <= 1 for s in usage),
      f"buffers.outPoolUsage: {usage}")
print(f"{len(ops)} operator series with operator_id; outPoolUsage of {len(usage)} subtasks in [0, 1]")
PY

# Cancelled, the job's tasks leave the TaskManager's /metrics; the node's own figures stay.
"$FLINT_BIN/flint" cancel --config "$WORK/flink-conf.yaml" "$job" >"$WORK/cancel.log" 2>&1 ||
  { cat "$WORK/cancel.log"; fail "flint cancel"; }
for i in $(seq 1 100); do
  metrics "$tm_port" >"$WORK/tm-after.metrics"
  grep -q '^flink_taskmanager_job_task' "$WORK/tm-after.metrics" || break
  [[ $i -lt 100 ]] || fail "the cancelled job's task series stayed on the TaskManager's /metrics"
  sleep 0.1
done
grep -q '^flink_taskmanager_Status_JVM_Threads_Count{' "$WORK/tm-after.metrics" ||
  fail "the TaskManager's own figures went with its tasks"
promtool_check "$WORK/tm-after.metrics" "$WORK/promtool-tm-after.log" ||
  fail "promtool refused the idle TaskManager's /metrics"
echo "after the cancel: no task series on the TaskManager's /metrics"
echo "PASS"
