#!/usr/bin/env bash
# Exactly-once on real processes (Flink's TaskManagerProcessFailureStreamingRecoveryITCase): a
# JobManager and three one-slot TaskManagers (one spare), WordCount -p 2 from a text file that
# takes several seconds, checkpoints every 100 ms into state.checkpoints.dir, the exactly-once
# file sink. After KILL_AFTER checkpoints completed (first argument, default 2) a busy TaskManager
# is killed (SIGKILL); FLINT_STATE_BACKEND=rocksdb (and FLINT_INCREMENTAL=true) keeps the state
# in RocksDB; the job restores its latest checkpoint on the survivor and the spare,
# finishes, and the committed output has exactly one update per input word and the right counts.
. "$(dirname "$0")/lib.sh"
kill_after=${1:-2}

SLOTS=1 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 3" \
  "restart-strategy.fixed-delay.delay: 0 ms" \
  "execution.checkpointing.interval: 100 ms" \
  "state.checkpoints.dir: $WORK/checkpoints" \
  ${FLINT_STATE_BACKEND:+"state.backend.type: $FLINT_STATE_BACKEND"} \
  ${FLINT_INCREMENTAL:+"state.backend.incremental: $FLINT_INCREMENTAL"}
NODES="jm tm1 tm2 tm3"
start_jobmanager
for tm in tm1 tm2 tm3; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done

generate_text "${FLINT_FAILOVER_INPUT_BYTES:-100000000}" "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
for _ in $(seq 1 600); do
  grep -q "Completed checkpoint $kill_after for job" "$WORK/jm.log" 2>/dev/null && break
  kill -0 "$client" 2>/dev/null || { cat "$WORK/run.log"; fail "the job ended before checkpoint $kill_after"; }
  sleep 0.05
done
grep -q "Completed checkpoint $kill_after for job" "$WORK/jm.log" || fail "checkpoint $kill_after never completed"
victim=$(await_busy_node tm1 tm2 tm3)
kill -KILL "$(pid_of "$victim")"
echo "killed $victim after checkpoint $kill_after completed"

await_client "$client" 120 "flint run still waits 120 s after the kill"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "is no longer reachable" "$WORK/jm.log" || fail "the JobManager did not see the TaskManager go"
grep -E -q "Restoring job [0-9a-f]+ from Checkpoint [0-9]+ @ [0-9]+ for [0-9a-f]+ located at $WORK/checkpoints/" \
  "$WORK/jm.log" || fail "the job did not restore a checkpoint"
grep -m1 "Restoring job" "$WORK/jm.log"
# The figure for the notes: from the JobManager noticing the loss to every task RUNNING again
# with its state restored (its log's clock).
awk '/is no longer reachable/ && !lost { lost = $2 } lost && /switched from INITIALIZING to RUNNING/ { back = $2 }
     function ms(t, p) { split(t, p, /[:,]/); return ((p[1] * 60 + p[2]) * 60 + p[3]) * 1000 + p[4] }
     END { if (lost && back) printf "recovery: %d ms from the loss to all tasks RUNNING again\n", ms(back) - ms(lost) }' \
  "$WORK/jm.log"
ls -a "$WORK/output" | grep -q '^\.part-' && echo "(hidden in-progress files of the killed attempt remain)"
check_wordcount "$WORK/input.txt" "$WORK/output"
job_dir=$(ls -d "$WORK"/checkpoints/*/ | head -1)
[[ -d "$job_dir/shared" && -d "$job_dir/taskowned" ]] || fail "no Flink layout under $job_dir"
echo "PASS"
