#!/usr/bin/env bash
# Failover on real processes: a JobManager and three one-slot TaskManagers, WordCount -p 2 under
# fixed-delay; a busy TaskManager is killed (SIGKILL) mid-run. The JobManager notices the dropped
# connection at once, the job goes RESTARTING, runs again on the spare and the survivor, and
# FINISHES with output equal to an independent count.
. "$(dirname "$0")/lib.sh"

SLOTS=1 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 3" \
  "restart-strategy.fixed-delay.delay: 0 ms"
NODES="jm tm1 tm2 tm3"
start_jobmanager
for tm in tm1 tm2 tm3; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done

generate_text "${FLINT_FAILOVER_INPUT_BYTES:-60000000}" "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
victim=$(await_busy_node tm1 tm2 tm3)
kill -KILL "$(pid_of "$victim")"
echo "killed $victim ($(ready_field "$victim" resource_id))"

await_client "$client" 90 "flint run still waits 90 s after the kill"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "switched from state RUNNING to RESTARTING" "$WORK/jm.log" || fail "the job never went RESTARTING"
grep -q "is no longer reachable" "$WORK/jm.log" || fail "the JobManager did not see the TaskManager go"
grep -q "(attempt #1)" "$WORK/jm.log" || fail "no second attempt was deployed"
check_wordcount "$WORK/input.txt" "$WORK/output"
echo "PASS"
