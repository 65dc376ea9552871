#!/usr/bin/env bash
# Exactly-once with time on real processes: a JobManager and two TaskManagers of two slots; a
# windowed job (windowed_clicks.so: generated out-of-order clicks, per-split watermarks, 1 s
# tumbling event-time windows) and then an interval join (interval_join.so: orders and payments
# joined within 5 s) run at -p 2 on bounded, rate-limited generated input with checkpoints every
# 200 ms and the exactly-once file sink. After checkpoint 2 of each, a TaskManager running it is
# killed (SIGKILL); the job restores its latest checkpoint on the remaining slots (a fresh
# TaskManager replaces the first victim before the join runs) and finishes. Each committed output
# equals, line for line, the same job's output on an embedded MiniCluster without failures
# (`flint run --local`, -p 1, no rate limit).
. "$(dirname "$0")/lib.sh"

SLOTS=2 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 5" \
  "restart-strategy.fixed-delay.delay: 0 ms" \
  "execution.checkpointing.interval: 200 ms" \
  "execution.checkpointing.dir: $WORK/checkpoints" \
  ${FLINT_STATE_BACKEND:+"state.backend.type: $FLINT_STATE_BACKEND"}
NODES="jm tm1 tm2 tm3"
start_jobmanager
for tm in tm1 tm2; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done
job_of() { sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$1"; }

# The committed lines under $1 (visible files only), sorted.
committed() { find "$1" -type f ! -name '.*' -exec cat {} + 2>/dev/null | LC_ALL=C sort; }

# run_and_kill NAME JOB.so "TMS" ARGS...: the expected output first (MiniCluster), then the job on
# the cluster, the kill of one of TMS running it after its 2nd checkpoint, and the comparison.
run_and_kill() {
  local name=$1 library=$2 tms=$3
  shift 3
  "$FLINT_BIN/flint" run --local -p 1 "$FLINT_JOBS/$library" "$@" --rate 0 \
    --output "$WORK/expected-$name" >"$WORK/expected-$name.log" 2>&1 \
    || { cat "$WORK/expected-$name.log"; fail "the failure-free run of $name failed"; }
  committed "$WORK/expected-$name" >"$WORK/expected-$name.txt"
  [[ -s "$WORK/expected-$name.txt" ]] || fail "the failure-free run of $name wrote nothing"

  : >"$WORK/run.log"
  "$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/$library" "$@" \
    --output "$WORK/$name" >"$WORK/run.log" 2>&1 &
  local client=$! job=""
  CLEANUPS+=("kill -TERM $client 2>/dev/null")
  for _ in $(seq 1 300); do job=$(job_of "$WORK/run.log"); [[ -n "$job" ]] && break; sleep 0.1; done
  [[ -n "$job" ]] || { cat "$WORK/run.log"; fail "no job id for $name"; }
  for _ in $(seq 1 600); do
    grep -q "Completed checkpoint 2 for job $job" "$WORK/jm.log" && break
    kill -0 "$client" 2>/dev/null || { cat "$WORK/run.log"; fail "$name ended before checkpoint 2"; }
    sleep 0.05
  done
  grep -q "Completed checkpoint 2 for job $job" "$WORK/jm.log" || fail "checkpoint 2 of $name never completed"
  # A TaskManager running one of this job's tasks now (its log names the job's tasks' deployment).
  local victim="" tm
  for tm in $tms; do
    if grep -q "$job" "$WORK/$tm.log" 2>/dev/null; then victim=$tm; break; fi
  done
  [[ -n "$victim" ]] || victim=$(await_busy_node $tms)
  kill -KILL "$(pid_of "$victim")"
  VICTIM=$victim
  echo "$name: killed $victim after checkpoint 2 of job $job"
  await_client "$client" 120 "flint run of $name still waits 120 s after the kill"
  [[ $CLIENT_STATUS -eq 0 ]] || fail "flint run of $name exited $CLIENT_STATUS, expected 0"
  grep -E -q "Restoring job $job from Checkpoint [0-9]+ @" "$WORK/jm.log" \
    || fail "$name did not restore a checkpoint"
  grep -m1 "Restoring job $job" "$WORK/jm.log"
  committed "$WORK/$name" >"$WORK/actual-$name.txt"
  if ! cmp -s "$WORK/expected-$name.txt" "$WORK/actual-$name.txt"; then
    { diff "$WORK/expected-$name.txt" "$WORK/actual-$name.txt" || true; } | head -20 >&2
    fail "$name: the committed output differs from the run without failures"
  fi
  echo "$name: exact ($(wc -l <"$WORK/actual-$name.txt") lines equal the failure-free run)"
}

started=$SECONDS
# 30 s of event time at 4000 clicks a second: about 8 s of work; disorder below the bound, no late
# clicks, so the windows' contents do not depend on when watermarks happen to be emitted.
run_and_kill windows windowed_clicks.so "tm1 tm2" --count 30000 --rate 4000 --late-every 0 --splits 2
survivors=$(for tm in tm1 tm2; do [[ $tm != "$VICTIM" ]] && echo "$tm"; done)
# The first victim's place is taken by tm3, started now (its place in $NODES is after tm2).
start_node tm3 "" taskmanager --config "$WORK/flink-conf.yaml"
# 8000 orders and payments each at 1000 a second per stream: about 8 s.
run_and_kill join interval_join.so "$survivors tm3" --count 8000 --rate 1000 --splits 2
echo "both jobs exact after a kill -9 each ($((SECONDS - started)) s)"
echo "PASS"
