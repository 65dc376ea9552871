#!/usr/bin/env bash
# The FAILING hang of issue 13: a JobManager and two one-slot TaskManagers, WordCount -p 2 from a
# file to --output, no restart strategy; one busy TaskManager is killed (SIGKILL). Every task ends,
# so the job must end FAILED with the TaskManager's loss as its cause, and `flint run` must exit 1
# within the heartbeat timeout plus a second.
. "$(dirname "$0")/lib.sh"

SLOTS=1 write_loopback_config "heartbeat.interval: 200 ms" "heartbeat.timeout: 2 s"
NODES="jm tm1 tm2"
start_jobmanager
for tm in tm1 tm2; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done

generate_text "${FLINT_FAILOVER_INPUT_BYTES:-60000000}" "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
victim=$(await_busy_node tm1 tm2)
kill -KILL "$(pid_of "$victim")"
killed_at=$(date +%s%N)

# heartbeat.timeout (2 s) plus a second.
await_client "$client" 3 "flint run still waits 3 s after the TaskManager died"
echo "flint run returned $(( ($(date +%s%N) - killed_at) / 1000000 )) ms after the kill"
[[ $CLIENT_STATUS -eq 1 ]] || fail "flint run exited $CLIENT_STATUS, expected 1"
grep -q "FAILED" "$WORK/run.log" || fail "flint run did not report the job FAILED"
grep -q "$(ready_field "$victim" resource_id)" "$WORK/run.log" || fail "the cause does not name the lost TaskManager"
echo "PASS"
