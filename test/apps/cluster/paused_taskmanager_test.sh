#!/usr/bin/env bash
# A TaskManager that wakes after its heartbeat timed out cannot hang the job (issue 25): one
# JobManager, three one-slot TaskManagers, the checkpointed exactly-once WordCount -p 2 from 120 MB
# with checkpoints every 200 ms. A busy TaskManager is frozen (SIGSTOP) past its 3 s heartbeat
# timeout: the JobManager fails its tasks and the job restarts on the spare from the latest
# checkpoint. Then the frozen one wakes (SIGCONT) and registers again: its old executions are
# cancelled, its stale messages refused by attempt, a checkpoint it was part of is aborted at once.
# The job must finish with exactly one update per input word. test/soak/paused_taskmanager_soak.sh
# runs it 20 times.
. "$(dirname "$0")/lib.sh"

SLOTS=1 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 3 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 5" \
  "restart-strategy.fixed-delay.delay: 0 ms" \
  "execution.checkpointing.interval: 200 ms" \
  "state.checkpoints.dir: $WORK/checkpoints"
NODES="jm tm1 tm2 tm3"
start_jobmanager
for tm in tm1 tm2 tm3; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done

generate_text "${FLINT_FAILOVER_INPUT_BYTES:-120000000}" "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
victim=$(await_busy_node tm1 tm2 tm3)
for _ in $(seq 1 600); do
  grep -q "Completed checkpoint 2 for job" "$WORK/jm.log" 2>/dev/null && break
  kill -0 "$client" 2>/dev/null || { cat "$WORK/run.log"; fail "the job ended before checkpoint 2"; }
  sleep 0.05
done
grep -q "Completed checkpoint 2 for job" "$WORK/jm.log" || fail "checkpoint 2 never completed"
victim_pid=$(pid_of "$victim")
kill -STOP "$victim_pid"
CLEANUPS+=("kill -CONT $victim_pid 2>/dev/null")
echo "froze $victim ($(ready_field "$victim" resource_id))"
# Frozen until the job restarted from a checkpoint and runs again without it.
for _ in $(seq 1 1200); do
  grep -q "(attempt #1)" "$WORK/jm.log" 2>/dev/null &&
    grep -q "Restoring job" "$WORK/jm.log" 2>/dev/null && break
  kill -0 "$client" 2>/dev/null || break
  sleep 0.05
done
grep -q "timed out" "$WORK/jm.log" || fail "the JobManager never timed out the frozen TaskManager's heartbeat"
grep -q "(attempt #1)" "$WORK/jm.log" || fail "the job did not restart while $victim was frozen"
kill -CONT "$victim_pid"
echo "woke $victim"

await_client "$client" 150 "flint run still waits 150 s after $victim woke"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "switched from state RUNNING to RESTARTING" "$WORK/jm.log" || fail "the job never went RESTARTING"
grep -m1 "Restoring job" "$WORK/jm.log"
check_wordcount "$WORK/input.txt" "$WORK/output"
echo "PASS"
