#!/usr/bin/env bash
# A TaskManager killed (SIGKILL) while a job runs: the job fails with a clear cause naming the
# lost TaskManager, `flint run` exits 1, nothing hangs.
. "$(dirname "$0")/lib.sh"

write_loopback_config "heartbeat.interval: 200 ms" "heartbeat.timeout: 2 s"
start_jobmanager
start_node tm1 "" taskmanager --config "$WORK/flink-conf.yaml"
start_node tm2 "" taskmanager --config "$WORK/flink-conf.yaml"
tm2_pid=${PIDS[2]}

"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 4 "$FLINT_JOBS/endless.so" >"$WORK/run.log" 2>&1 &
client=$!
# Wait until the job runs on both TaskManagers, then kill one.
for _ in $(seq 1 300); do
  grep -q "switched from DEPLOYING to INITIALIZING\|to RUNNING" "$WORK/tm2.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "to RUNNING\|to INITIALIZING" "$WORK/tm2.log" || { cat "$WORK/run.log"; fail "the job never ran on TaskManager 2"; }
kill -KILL "$tm2_pid"

status=0
for _ in $(seq 1 300); do kill -0 "$client" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$client" 2>/dev/null; then fail "flint run still waits 30 s after the TaskManager died"; fi
wait "$client" || status=$?
cat "$WORK/run.log"
[[ $status -eq 1 ]] || fail "flint run exited $status, expected 1"
lost=$(ready_field tm2 resource_id)
grep -q "FAILED" "$WORK/run.log" || fail "flint run did not report the job FAILED"
grep -q "$lost" "$WORK/run.log" || fail "the failure cause does not name the lost TaskManager $lost"
echo "PASS"
