#!/usr/bin/env bash
# Region failover on real processes (Flink's RestartPipelinedRegionFailoverStrategy): a job of two
# WordCounts that share nothing (two_pipelines.so: two pipelined regions, each in its own slot
# sharing group) on three one-slot TaskManagers, one spare. The TaskManager running region A is
# killed (SIGKILL): only A's tasks restart (attempt #1, on the spare), B's keep attempt #0 and run
# on undisturbed, and both outputs are exact.
. "$(dirname "$0")/lib.sh"

SLOTS=1 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 3" \
  "restart-strategy.fixed-delay.delay: 0 ms" "jobmanager.execution.failover-strategy: region"
NODES="jm tm1 tm2 tm3"
start_jobmanager
for tm in tm1 tm2 tm3; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done
generate_text "${FLINT_REGION_INPUT_BYTES:-60000000}" "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 1 "$FLINT_JOBS/two_pipelines.so" \
  --input "$WORK/input.txt" --output-a "$WORK/out-a" --output-b "$WORK/out-b" >"$WORK/run.log" 2>&1 &
client=$!
# The TaskManager whose log shows region A's keyed count running.
victim=
for _ in $(seq 1 300); do
  for tm in tm1 tm2 tm3; do
    grep -q "A: Count.*switched from INITIALIZING to RUNNING" "$WORK/$tm.log" 2>/dev/null && victim=$tm
  done
  [[ -n "$victim" ]] && break
  kill -0 "$client" 2>/dev/null || { cat "$WORK/run.log"; fail "the job ended before region A ran"; }
  sleep 0.1
done
[[ -n "$victim" ]] || fail "region A never ran"
grep -q "B: Count.*switched from INITIALIZING to RUNNING" "$WORK/$victim.log" \
  && fail "both regions run on $victim: slot sharing groups did not separate them"
kill -KILL "$(pid_of "$victim")"
echo "killed $victim, which ran region A"

await_client "$client" 120 "flint run still waits 120 s after the kill"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "is no longer reachable" "$WORK/jm.log" || fail "the JobManager did not see the TaskManager go"
grep -E "tasks will be restarted to recover the failed task" "$WORK/jm.log" | head -1 || true
grep -q "Deploying \(Source: \)\?A: .*(attempt #1)" "$WORK/jm.log" || fail "region A was not redeployed"
if grep -q "Deploying \(Source: \)\?B: .*(attempt #1)" "$WORK/jm.log"; then
  grep "Deploying \(Source: \)\?B: " "$WORK/jm.log" >&2 || true
  fail "region B restarted too"
fi
deployed_b=$(grep -c "Deploying \(Source: \)\?B: .*(attempt #0)" "$WORK/jm.log")
[[ $deployed_b -ge 2 ]] || fail "region B's tasks were deployed $deployed_b times"
check_wordcount "$WORK/input.txt" "$WORK/out-a"
check_wordcount "$WORK/input.txt" "$WORK/out-b"
echo "PASS"
