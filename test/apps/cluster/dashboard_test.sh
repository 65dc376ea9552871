#!/usr/bin/env bash
# The web dashboard in a real browser (Debian's chromium, headless, --dump-dom and --screenshot)
# against a running cluster of processes: a running job's graph shows each vertex with its state,
# the message timeline shows the slot protocol's messages in order, and a job whose slots cannot
# be had shows its pending slot requests in the "why is this job not running" panel. The
# screenshots are kept in $FLINT_ARTIFACTS (build/test-artifacts/dashboard). An event-time job
# with checkpoints shows its checkpoint history and its windows' watermarks.
. "$(dirname "$0")/lib.sh"
browser=$(command -v chromium || true)
[[ -n "$browser" ]] || { echo "SKIP: no chromium (bash deploy/install-deps.sh --tests installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
ARTIFACTS=${FLINT_ARTIFACTS:-$WORK/artifacts}/dashboard
mkdir -p "$ARTIFACTS"

SLOTS=2 write_loopback_config
NODES="jm tm1 tm2"
start_jobmanager
for tm in tm1 tm2; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml" >/dev/null; done
rest=$(ready_field jm rest_port)
[[ -n "$rest" && "$rest" != 0 ]] || fail "the JobManager serves no REST endpoint"
url="http://127.0.0.1:$rest"

# GET $1 of the REST API, printed; fails the test on a non-2xx answer.
rest_get() {
  python3 - "$url$1" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
    print(r.read().decode())
PY
}
# Waits up to 30 s until the python expression $2 holds of GET $1's JSON (as `j`).
await_rest() {
  for _ in $(seq 1 150); do
    if python3 - "$url$1" "$2" <<'PY' 2>/dev/null; then return 0; fi
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
    j = json.load(r)
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
    sleep 0.2
  done
  fail "GET $1 never satisfied: $2 (last: $(rest_get "$1" 2>&1 | head -c 400))"
}
# Dumps the DOM of the dashboard at route $1 (after its scripts ran) into $WORK/$2.html, and
# keeps a screenshot as $ARTIFACTS/$2.png.
browse() {
  local route=$1 name=$2
  local flags=(--headless=new --no-sandbox --disable-gpu --log-level=3 --no-first-run
               --user-data-dir="$WORK/chromium-$name" --virtual-time-budget=8000)
  "$browser" "${flags[@]}" --dump-dom "$url/#$route" >"$WORK/$name.html" 2>>"$WORK/chromium.log" || true
  "$browser" "${flags[@]}" --window-size=1400,900 --screenshot="$ARTIFACTS/$name.png" "$url/#$route" \
    >/dev/null 2>>"$WORK/chromium.log" || true
  [[ -s "$WORK/$name.html" ]] || fail "chromium rendered nothing for $route (see $WORK/chromium.log)"
}

await_rest /overview 'j["taskmanagers"] == 2 and j["slots-total"] == 4'
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -d -p 2 "$FLINT_JOBS/endless.so" --rate 200 \
  >"$WORK/run1.log" 2>&1 || { cat "$WORK/run1.log"; fail "flint run endless.so"; }
job=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run1.log")
[[ -n "$job" ]] || fail "no job id in $(cat "$WORK/run1.log")"
await_rest "/jobs/$job" 'j["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in j["vertices"])'
rest_get "/jobs/$job" >"$WORK/job.json"

# 1. The job graph: one box per vertex, each RUNNING.
browse "/job/running/$job/overview" graph
python3 - "$WORK/graph.html" "$WORK/job.json" <<'PY' || fail "the dashboard's job graph does not show the job's vertices running"
import json, re, sys
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
dom = open(sys.argv[1]).read()
job = json.load(open(sys.argv[2]))
boxes = {}
for tag in re.findall(r'<g [^>]*class="vertex[^"]*"[^>]*>', dom):
    vid = re.search(r'data-vertex-id="([^"]*)"', tag).group(1)
    boxes[vid] = re.search(r'data-status="([^"]*)"', tag).group(1)
want = {v["id"] for v in job["vertices"]}
print(f"graph: {len(boxes)} vertex boxes {sorted(boxes.values())} for {len(want)} vertices")
check(set(boxes) == want, f"boxes {sorted(boxes)} != vertices {sorted(want)}")
check(all(s == "RUNNING" for s in boxes.values()), f"not all RUNNING: {boxes}")
edges = re.findall(r'<g [^>]*class="edge[^"]*"[^>]*data-ship-strategy="([^"]*)"', dom)
check("HASH" in edges, f"no HASH edge drawn: {edges}")
# Each vertex's low watermark (Flink's column): endless.so has no event time, so "No Watermark".
marks = re.findall(r'<span class="watermark" data-watermark="([^"]*)">([^<]*)</span>', dom)
print(f"watermarks: {marks}")
check(len(marks) == len(want), f"{len(marks)} watermark cells for {len(want)} vertices")
check(all(text == "No Watermark" for _, text in marks), f"watermarks {marks}")
PY

# 2. The timeline: the slot protocol's messages, in the order the protocol sends them.
browse "/timeline" timeline
python3 - "$WORK/timeline.html" <<'PY' || fail "the timeline does not show the slot protocol in order"
import re, sys
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
dom = open(sys.argv[1]).read()
arrows = []
for tag in re.findall(r'<g [^>]*class="message[^"]*"[^>]*>', dom):
    method = re.search(r'data-method="([^"]*)"', tag).group(1)
    seq = int(re.search(r'data-sequence="([0-9]+)"', tag).group(1))
    arrows.append((seq, method))
arrows.sort()
first = {}
for seq, method in arrows:
    first.setdefault(method, seq)
order = ["register_job_manager", "request_slot", "offer_slots", "submit_task"]
print(f"timeline: {len(arrows)} arrows; first of each: {[(m, first.get(m)) for m in order]}")
check(all(m in first for m in order), f"missing: {[m for m in order if m not in first]}")
check([first[m] for m in order] == sorted(first[m] for m in order), "out of order")
# This page's own polling (REST's queries, marked `monitoring` by the recorder) is hidden by default.
check('id="filter-monitoring"' in dom, "no toggle for the dashboard's own queries")
titles = re.findall(r'<g [^>]*class="message[^"]*"[^>]*><title>([^<]*)</title>', dom)
rest = [t for t in titles if t.startswith("rest ") or " rest:" in t]
check(not rest, f"the dashboard's own queries are shown: {rest[:3]}")
PY

# 3. An event-time job with checkpoints: the checkpoints tab lists its completed checkpoints as
# the REST history has them, and the graph shows its windows' low watermark as a time.
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -d -p 2 \
  -D execution.checkpointing.interval=200ms "$FLINT_JOBS/windowed_clicks.so" --rate 2000 \
  >"$WORK/run3.log" 2>&1 || { cat "$WORK/run3.log"; fail "flint run windowed_clicks.so"; }
clicks=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run3.log")
[[ -n "$clicks" ]] || fail "no job id in $(cat "$WORK/run3.log")"
await_rest "/jobs/$clicks/checkpoints" 'j["counts"]["completed"] >= 2'
# Some vertex's input watermark moves past Long.MIN_VALUE (the windows' and the sink's).
await_rest "/jobs/$clicks" 'j["state"] == "RUNNING"'
python3 - "$url" "$clicks" <<'PY' || fail "no vertex of the event-time job reports a watermark"
import json, sys, time, urllib.request
url, job = sys.argv[1], sys.argv[2]
get = lambda path: json.load(urllib.request.urlopen(url + path, timeout=5))
deadline = time.time() + 30
while time.time() < deadline:
    marks = [m for v in get(f"/jobs/{job}")["vertices"]
             for m in get(f"/jobs/{job}/vertices/{v['id']}/watermarks")]
    if any(int(m["value"]) > 0 for m in marks):
        sys.exit(0)
    time.sleep(0.2)
sys.exit(f"watermarks still {marks}")
PY
browse "/job/running/$clicks/checkpoints" checkpoints
rest_get "/jobs/$clicks/checkpoints" >"$WORK/checkpoints.json"
python3 - "$WORK/checkpoints.html" "$WORK/checkpoints.json" <<'PY' || fail "the checkpoints tab does not show the checkpoint history"
import json, re, sys
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
dom = open(sys.argv[1]).read()
rest = json.load(open(sys.argv[2]))
table = re.search(r'<table id="checkpoint-history"[^>]*>(.*?)</table>', dom, re.S)
check(table, "no checkpoint history table")
rows = re.findall(r'<tr[^>]*>(.*?)</tr>', table.group(1), re.S)[1:]  # after the header
ids = [int(re.search(r'<td class="num">([0-9]+)</td>', r).group(1)) for r in rows if 'class="num"' in r]
statuses = re.findall(r'<span class="badge st-([A-Z_]+)">', table.group(1))
print(f"checkpoints: history ids {ids}, statuses {statuses}")
check(ids, "no checkpoint in the history table")
check("COMPLETED" in statuses, f"no completed checkpoint shown: {statuses}")
# The newest first, as REST's history lists them, at most web.checkpoints.history (10) of them,
# none newer than REST knows (the page polled a little earlier than REST was asked here).
rest_ids = [c["id"] for c in rest["history"]]
check(ids == sorted(ids, reverse=True), f"not newest first: {ids}")
check(len(ids) <= 10 and len(ids) == len(set(ids)), f"history rows {ids}")
check(max(ids) <= max(rest_ids), f"ids {ids} newer than REST's {rest_ids}")
check('id="latest-checkpoint"' in dom and "No checkpoint has completed yet" not in dom,
      "no latest completed checkpoint shown")
PY
browse "/job/running/$clicks/overview" clicks_graph
python3 - "$WORK/clicks_graph.html" <<'PY' || fail "the graph does not show the event-time job's watermarks"
import re, sys
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
dom = open(sys.argv[1]).read()
marks = re.findall(r'<span class="watermark" data-watermark="([^"]*)">([^<]*)</span>', dom)
print(f"watermarks: {marks}")
times = [(v, t) for v, t in marks if v.lstrip("-").isdigit() and int(v) > 0]
check(times, f"no vertex shows a watermark time: {marks}")
check(all("T" in t and t.startswith(v) for v, t in times), f"a watermark is not shown as a time: {times}")
PY

# 4. A job that asks for more slots than are free: its pending requests in the "why" panel.
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -d -p 8 "$FLINT_JOBS/endless.so" \
  >"$WORK/run2.log" 2>&1 || { cat "$WORK/run2.log"; fail "flint run -p 8"; }
starved=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run2.log")
[[ -n "$starved" ]] || fail "no job id in $(cat "$WORK/run2.log")"
await_rest "/jobs/$starved/why" 'len(j["pending-slot-requests"]) > 0'
browse "/job/running/$starved/why" why
python3 - "$WORK/why.html" <<'PY' || fail "the why panel does not show the pending slot requests"
import re, sys
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
dom = open(sys.argv[1]).read()
pending = re.findall(r'<tr [^>]*class="pending-request"[^>]*>', dom)
reasons = re.findall(r'<li class="why-reason">([^<]*)</li>', dom)
print(f"why: {len(pending)} pending requests shown; reasons: {reasons}")
check(pending, "no pending slot request shown")
check(any("slot request" in r for r in reasons), f"no reason names a slot request: {reasons}")
PY
ls "$ARTIFACTS"
echo "PASS"
