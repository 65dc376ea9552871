#!/usr/bin/env bash
# Nexmark under failure on real processes: a JobManager and two TaskManagers of two slots run
# q5 (hot items over HOP(10 s, 2 s)) and then q8 (new sellers, a TUMBLE(10 s) window join) from
# nexmark.so at -p 2 over 30'000 generated events (1'000 a second of event time: 30 s), paced to
# 4'000 events a second, with checkpoints every 200 ms and the exactly-once file sink. After
# checkpoint 2 of each, a TaskManager running it is killed (SIGKILL); the job restores its latest
# checkpoint (the source continues from each split's next event number) and finishes. The
# committed JSON lines equal, as a sorted multiset, the same query's output on an embedded
# MiniCluster without failures (`flint run --local`, -p 1, unpaced).
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

EVENTS="--events 30000 --tps 1000"

# run_and_kill QUERY "TMS": the expected output first (MiniCluster), then the query on the
# cluster, the kill of one of TMS running it after its 2nd checkpoint, and the comparison.
run_and_kill() {
  local name=$1 tms=$2
  # shellcheck disable=SC2086
  "$FLINT_BIN/flint" run --local -p 1 "$FLINT_JOBS/nexmark.so" --query "$name" $EVENTS \
    --sink "$WORK/expected-$name" >"$WORK/expected-$name.log" 2>&1 \
    || { cat "$WORK/expected-$name.log"; fail "the failure-free run of $name failed"; }
  committed "$WORK/expected-$name" >"$WORK/expected-$name.txt"
  [[ -s "$WORK/expected-$name.txt" ]] || fail "the failure-free run of $name wrote nothing"

  : >"$WORK/run.log"
  # shellcheck disable=SC2086
  "$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/nexmark.so" \
    --query "$name" $EVENTS --rate 4000 --sink "$WORK/$name" >"$WORK/run.log" 2>&1 &
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
  local victim="" tm
  for tm in $tms; do
    if grep -q "$job" "$WORK/$tm.log" 2>/dev/null; then victim=$tm; break; fi
  done
  [[ -n "$victim" ]] || victim=$(await_busy_node $tms)
  kill -KILL "$(pid_of "$victim")"
  VICTIM=$victim
  echo "$name: killed $victim after checkpoint 2 of job $job"
  await_client "$client" 120 "flint run of $name still waits 120 s after the kill"
  [[ $CLIENT_STATUS -eq 0 ]] || { cat "$WORK/run.log"; fail "flint run of $name exited $CLIENT_STATUS, expected 0"; }
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
run_and_kill q5 "tm1 tm2"
survivors=$(for tm in tm1 tm2; do [[ $tm != "$VICTIM" ]] && echo "$tm"; done)
# The first victim's place is taken by tm3, started now (its place in $NODES is after tm2).
start_node tm3 "" taskmanager --config "$WORK/flink-conf.yaml"
run_and_kill q8 "$survivors tm3"
echo "q5 and q8 exact after a kill -9 each ($((SECONDS - started)) s)"
echo "PASS"
