#!/usr/bin/env bash
# `flint trace` against real nodes: a live tail shows heartbeats as they happen, and
# `--export chrome` writes trace-event JSON in which the slot protocol's messages come in order
# (request_slot, offer_slots, submit_task) for a job that ran.
. "$(dirname "$0")/lib.sh"

write_loopback_config "heartbeat.interval: 300 ms" "heartbeat.timeout: 5 s"
start_jobmanager
start_node tm1 "" taskmanager --config "$WORK/flink-conf.yaml"

# Live: the tail prints heartbeats while they happen, not all at the end.
"$FLINT_BIN/flint" trace --config "$WORK/flink-conf.yaml" --follow --duration "4 s" \
  --method heartbeat_from_resource_manager >"$WORK/tail.txt" 2>&1 &
tail_pid=$!
sleep 1.5
early=$(grep -c heartbeat_from_resource_manager "$WORK/tail.txt" || true)
sleep 1.5
later=$(grep -c heartbeat_from_resource_manager "$WORK/tail.txt" || true)
wait "$tail_pid" || { cat "$WORK/tail.txt"; fail "flint trace --follow failed"; }
echo "heartbeats seen after 1.5 s: $early, after 3 s: $later"
[[ $early -ge 1 && $later -gt $early ]] || { cat "$WORK/tail.txt"; fail "the live tail did not show heartbeats as they happened"; }

"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" --output "$WORK/out" \
  >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; fail "flint run failed"; }
"$FLINT_BIN/flint" trace --config "$WORK/flink-conf.yaml" --export chrome "$WORK/trace.json" \
  || fail "flint trace --export chrome failed"
"$FLINT_BIN/flint" trace --config "$WORK/flink-conf.yaml" --export mermaid "$WORK/trace.mmd" \
  || fail "flint trace --export mermaid failed"
head -1 "$WORK/trace.mmd" | grep -q sequenceDiagram || fail "the mermaid export is not a sequence diagram"

python3 - "$WORK/trace.json" <<'PY' || fail "the chrome export is not what Perfetto needs"
import json, sys
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
doc = json.load(open(sys.argv[1]))  # valid JSON or an exception
events = [e for e in doc["traceEvents"] if e.get("ph") not in ("M",)]
check(events, "no events")
for e in events:
    check({"name", "ph", "ts", "pid", "tid"} <= e.keys(), f"an event lacks a field: {e}")
def first(name):
    ts = [e["ts"] for e in events if e["name"] == name]
    check(ts, "no " + name)
    return min(ts)
order = ["register_task_executor", "request_slot", "offer_slots", "submit_task", "update_task_execution_state"]
times = [first(n) for n in order]
check(times == sorted(times), f"out of order: {list(zip(order, times))}")
print("chrome export: %d events; first %s" % (len(events), " < ".join(order)))
PY
echo "PASS"
