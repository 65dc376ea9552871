#!/usr/bin/env bash
# Savepoints of running event-time jobs restored at another parallelism: windowed_clicks.so
# (per-split watermarks, 1 s tumbling event-time windows: open windows and their timers in keyed
# state) and interval_join.so (orders and payments buffered per key until their interval passed,
# with cleanup timers) run on bounded, rate-limited generated input with the exactly-once file
# sink. Each checkpoints once, runs on, takes a savepoint mid-stream (windows, timers and join
# buffers non-empty) and is cancelled; the next run restores the savepoint at another parallelism
# (2 -> 3, then 3 -> 2) and finishes. The committed output equals, line for line, the job's output
# on an embedded MiniCluster without failures (`flint run --local`, -p 1, no rate limit).
. "$(dirname "$0")/lib.sh"

SLOTS=3 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "execution.checkpointing.dir: $WORK/checkpoints" \
  ${FLINT_STATE_BACKEND:+"state.backend.type: $FLINT_STATE_BACKEND"}
NODES="jm tm1 tm2"
start_jobmanager
for tm in tm1 tm2; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done
flint_action() { local action=$1; shift; "$FLINT_BIN/flint" "$action" --config "$WORK/flink-conf.yaml" "$@"; }
job_of() { sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$1"; }
committed() { find "$1" -type f ! -name '.*' -exec cat {} + 2>/dev/null | LC_ALL=C sort; }

# rescale NAME JOB.so FROM TO RATE ARGS...: the first run paced at RATE records a second (slow
# enough to be mid-stream at its savepoint on a loaded machine), the restored one unpaced (the
# records are functions of their indices: the pace changes when they come, not what they are).
rescale() {
  local name=$1 library=$2 from=$3 to=$4 rate=$5
  shift 5
  local out=$WORK/$name-$from-$to
  "$FLINT_BIN/flint" run --local -p 1 "$FLINT_JOBS/$library" "$@" --rate 0 \
    --output "$WORK/expected-$name" >"$WORK/expected-$name.log" 2>&1 \
    || { cat "$WORK/expected-$name.log"; fail "the failure-free run of $name failed"; }
  committed "$WORK/expected-$name" >"$WORK/expected-$name.txt"
  rm -rf "$WORK/expected-$name"

  flint_action run -d -p "$from" -D execution.checkpointing.interval=500ms \
    -D execution.checkpointing.min-pause=1h "$FLINT_JOBS/$library" "$@" --rate "$rate" --output "$out" \
    >"$WORK/r1.log" 2>&1 || { cat "$WORK/r1.log"; fail "$name: the run at $from"; }
  local j
  j=$(job_of "$WORK/r1.log")
  for _ in $(seq 1 600); do grep -q "Completed checkpoint 1 for job $j" "$WORK/jm.log" && break; sleep 0.05; done
  grep -q "Completed checkpoint 1 for job $j" "$WORK/jm.log" || fail "$name: checkpoint 1 never completed"
  sleep 0.5 # mid-stream: windows open, timers set, join buffers filled since checkpoint 1
  flint_action savepoint "$j" "$WORK/savepoints" >"$WORK/r1-savepoint.log" 2>&1 \
    || { cat "$WORK/r1-savepoint.log"; fail "$name: savepoint at $from"; }
  flint_action cancel "$j" >/dev/null 2>&1 || true
  local sp
  sp=$(sed -n 's/^Savepoint completed. Path: file:\(.*\)$/\1/p' "$WORK/r1-savepoint.log")
  [[ -n "$sp" && -d "$sp" ]] || { cat "$WORK/r1-savepoint.log"; fail "$name: no savepoint directory"; }
  # Keyed state in the savepoint: the windows' contents and timers, the join's buffers.
  local keyed
  keyed=$(find "$sp" -type f -size +0 ! -name _metadata | wc -l)
  [[ $keyed -ge 1 ]] || { ls -laR "$sp"; fail "$name: the savepoint holds no keyed state"; }
  flint_action run -p "$to" -s "$sp" -D execution.checkpointing.interval=200ms \
    "$FLINT_JOBS/$library" "$@" --rate 0 --output "$out" >"$WORK/r2.log" 2>&1 \
    || { cat "$WORK/r2.log"; fail "$name: the restored run at $to"; }
  committed "$out" >"$WORK/actual-$name.txt"
  if ! cmp -s "$WORK/expected-$name.txt" "$WORK/actual-$name.txt"; then
    { diff "$WORK/expected-$name.txt" "$WORK/actual-$name.txt" || true; } | head -20 >&2
    fail "$name rescaled $from -> $to: the committed output differs from the run without failures"
  fi
  echo "$name rescaled $from -> $to from a savepoint mid-stream: exact ($(wc -l <"$WORK/actual-$name.txt") lines)"
}

started=$SECONDS
# 20 s of event time (20 windows a user), 5 s at 4000 clicks a second; 40 s of orders and
# payments, 5 s at 800 a second each.
window_args=(--count 20000 --late-every 0 --splits 2)
join_args=(--count 4000 --splits 2)
rescale windows windowed_clicks.so 2 3 4000 "${window_args[@]}"
rescale windows windowed_clicks.so 3 2 4000 "${window_args[@]}"
rescale join interval_join.so 2 3 800 "${join_args[@]}"
rescale join interval_join.so 3 2 800 "${join_args[@]}"
echo "four rescaled restores exact ($((SECONDS - started)) s)"
echo "PASS"
