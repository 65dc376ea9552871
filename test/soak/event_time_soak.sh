#!/usr/bin/env bash
# By hand, not in ctest: the exactly-once-with-time tests ROUNDS times each (default 20), with a
# summary and each round's time.
#   FLINT_BIN=build/bin FLINT_JOBS=build/jobs FLINT_SOURCE=. test/soak/event_time_soak.sh [ROUNDS]
# Each round is a whole test of test/apps/cluster (its own cluster, its own processes): a kill -9
# of a TaskManager under a windowed job and an interval join, and savepoints of both restored at
# 2 -> 3 and 3 -> 2. FLINT_STATE_BACKEND=rocksdb runs them on RocksDB. A failed round keeps its
# output in $SOAK_DIR (default /tmp/flint-event-time-soak).
set -uo pipefail
: "${FLINT_BIN:?FLINT_BIN (build/bin) must be set}"
: "${FLINT_JOBS:?FLINT_JOBS (build/jobs) must be set}"
: "${FLINT_SOURCE:?FLINT_SOURCE (the repository) must be set}"
export FLINT_LOG_LEVEL=${FLINT_LOG_LEVEL:-info}
rounds=${1:-20}
out=${SOAK_DIR:-/tmp/flint-event-time-soak}
mkdir -p "$out"
tests=(event_time_failover event_time_rescale)
for t in "${tests[@]}"; do
  pass=0 fail=0 skip=0 times=""
  for r in $(seq 1 "$rounds"); do
    log="$out/$t.$r.log"
    start=$SECONDS
    bash "$FLINT_SOURCE/test/apps/cluster/${t}_test.sh" >"$log" 2>&1
    case $? in
      0) pass=$((pass + 1)); rm -f "$log" ;;
      77) skip=$((skip + 1)); rm -f "$log" ;;
      *) fail=$((fail + 1)); echo "$t round $r failed: $log" ;;
    esac
    times="$times $((SECONDS - start))"
  done
  echo "$t: $pass passed, $fail failed, $skip skipped of $rounds (seconds per round:$times)"
done
