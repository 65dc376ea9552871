#!/usr/bin/env bash
# Prometheus metrics on every node (metrics.reporter.prom.*): a JobManager and two TaskManagers
# each serve the text format 0.0.4; after WordCount finished, its tasks' series are gone from the
# TaskManagers (as Flink's, an ended task's group is closed) and their own Status figures stay; the
# JobManager reports its TaskManagers and slots. A running job's figures, names and labels, read by
# Prometheus itself: prometheus_test.sh.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

SLOTS=2 write_loopback_config \
  "metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory" \
  "metrics.reporter.prom.port: 0"
NODES="jm tm1 tm2"
start_jobmanager
for tm in tm1 tm2; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml" >/dev/null; done
for _ in $(seq 1 100); do
  [[ $(grep -c "Registering TaskManager with ResourceID" "$WORK/jm.log") -ge 2 ]] && break; sleep 0.1
done

generate_text 3000000 "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 ||
  { cat "$WORK/run.log"; fail "WordCount failed"; }
check_wordcount "$WORK/input.txt" "$WORK/output"
# The job's figures outlive its tasks' series: REST's job details carry each vertex's records,
# exactly what was read and written (the chained source and tokenizer wrote one record a word,
# the counting vertex read each word and its sink wrote one update each).
job_id=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]\{32\}\)$/\1/p' "$WORK/run.log")
[[ -n "$job_id" ]] || fail "no JobID in flint run's output"
updates=$(cat "$WORK/output"/* | wc -l)
python3 - "$(ready_field jm rest_port)" "$job_id" "$updates" <<'PY' || fail "the job's vertex records do not match its output"
import json, sys, urllib.request
port, job, updates = sys.argv[1], sys.argv[2], int(sys.argv[3])
details = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/{job}", timeout=10))
vertices = details["vertices"]
first, last = vertices[0]["metrics"], vertices[-1]["metrics"]
def check(ok, why):
    if not ok:
        sys.exit(f"check failed: {why}")
check(first["write-records"] == updates, f"source vertex wrote {first['write-records']} records, the output has {updates} updates")
check(last["read-records"] == updates, f"counting vertex read {last['read-records']} records, the output has {updates} updates")
check(first["write-records-complete"] and last["read-records-complete"], f"figures not complete: {vertices}")
PY
# The JobManager's lines in Flink's words (grep-compatible with Flink's logs).
grep -q "Received JobGraph submission 'Streaming WordCount' ([0-9a-f]\{32\})\.$" "$WORK/jm.log" ||
  fail "no Dispatcher line 'Received JobGraph submission '<name>' (<id>).'"
grep -q "Starting execution of job 'Streaming WordCount' ([0-9a-f]\{32\}) under job master id " "$WORK/jm.log" ||
  fail "no JobMaster line 'Starting execution of job '<name>' (<id>) under job master id ...'"
grep -q " (1/2)#0 ([^)]*) switched from SCHEDULED to DEPLOYING\.$" "$WORK/jm.log" ||
  fail "task state lines do not name the task as Flink's '<name> (n/N)#attempt'"

ports=()
for n in jm tm1 tm2; do
  p=$(ready_field "$n" metrics_port)
  [[ -n "$p" && "$p" != 0 ]] || fail "$n started no Prometheus reporter"
  ports+=("$p")
done
python3 - "${ports[@]}" <<'PY' || fail "the scrapes do not hold the expected figures"
import re, sys, time, urllib.request
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
jm_port, tm_ports = sys.argv[1], sys.argv[2:]
# The text format 0.0.4: comments, or name{labels} value.
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? ([-+]?(?:[0-9.eE+-]+|NaN|Inf))$')
label = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        check(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"),
              f"port {port}: Content-Type {r.headers['Content-Type']}")
        text = r.read().decode()
    out = []
    for line in text.splitlines():
        if not line or line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = sample.match(line)
        check(m, f"port {port}: not the text format: {line!r}")
        out.append((m.group(1), dict(label.findall(m.group(2) or "")), float(m.group(3))))
    return out
# The job ended: its tasks' series left the TaskManagers' /metrics (Flink closes an ended task's
# metric group); the nodes' own figures stay. (A running job's figures: prometheus_test.sh.)
def without_job_series(port):  # the tasks' last references may go a moment after the job ended
    for _ in range(100):
        scraped = scrape(port)
        if not any(n.startswith("flink_taskmanager_job_") for n, _, _ in scraped):
            break
        time.sleep(0.1)
    return scraped
for port in tm_ports:
    scraped = without_job_series(port)
    names = {name for name, _, _ in scraped}
    for want in ("flink_taskmanager_Status_JVM_CPU_Load", "flink_taskmanager_Status_JVM_Threads_Count",
                 "flink_taskmanager_Status_ProcessTree_Memory_RSS"):
        check(want in names, f"port {port}: no {want}")
    for name, labels, value in scraped:
        for key, text in labels.items():
            check(re.fullmatch(r"[a-zA-Z0-9:_]*", text), f"label {key}={text!r} not filtered")
    left = sorted(n for n in names if n.startswith("flink_taskmanager_job_"))
    check(not left, f"port {port}: the ended job's series stayed: {left[:5]}")
jm = {name: value for name, labels, value in scrape(jm_port)}
print({k: v for k, v in jm.items() if k.startswith("flink_jobmanager_")})
for name, want in (("flink_jobmanager_numRegisteredTaskManagers", 2),
                   ("flink_jobmanager_taskSlotsTotal", 4), ("flink_jobmanager_numRunningJobs", 0)):
    check(jm.get(name) == want, f"{name} is {jm.get(name)}, not {want}")
check(jm.get("flink_jobmanager_Status_JVM_Threads_Count", 0) >= 1, "no JobManager Status figures")
PY
echo "PASS"
