#!/usr/bin/env bash
# By hand, not in ctest: the failover kill tests ROUNDS times each (default 20), with a summary.
#   FLINT_BIN=build/bin FLINT_JOBS=build/jobs FLINT_SOURCE=. test/soak/failover_soak.sh [ROUNDS]
# Each round is a whole test of test/apps/cluster (its own cluster, its own processes); a failed
# round keeps its output in $SOAK_DIR (default /tmp/flint-failover-soak).
set -uo pipefail
: "${FLINT_BIN:?FLINT_BIN (build/bin) must be set}"
: "${FLINT_JOBS:?FLINT_JOBS (build/jobs) must be set}"
: "${FLINT_SOURCE:?FLINT_SOURCE (the repository) must be set}"
export FLINT_LOG_LEVEL=${FLINT_LOG_LEVEL:-info}
rounds=${1:-20}
out=${SOAK_DIR:-/tmp/flint-failover-soak}
mkdir -p "$out"
tests=(taskmanager_failover taskmanager_lost_no_restart netns_link_down_failover)
for t in "${tests[@]}"; do
  pass=0 fail=0 skip=0
  for r in $(seq 1 "$rounds"); do
    log="$out/$t.$r.log"
    bash "$FLINT_SOURCE/test/apps/cluster/${t}_test.sh" >"$log" 2>&1
    case $? in
      0) pass=$((pass + 1)); rm -f "$log" ;;
      77) skip=$((skip + 1)); rm -f "$log" ;;
      *) fail=$((fail + 1)); echo "$t round $r failed: $log" ;;
    esac
  done
  echo "$t: $pass passed, $fail failed, $skip skipped of $rounds"
done
