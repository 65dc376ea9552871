#!/usr/bin/env bash
# By hand, not in ctest: the paused TaskManager test (issue 25) ROUNDS times (default 20), with a
# summary. A round that hangs fails by its own bounded waits.
#   FLINT_BIN=build/bin FLINT_JOBS=build/jobs FLINT_SOURCE=. test/soak/paused_taskmanager_soak.sh [ROUNDS]
# A failed round keeps its output in $SOAK_DIR (default /tmp/flint-paused-taskmanager-soak).
set -uo pipefail
: "${FLINT_BIN:?FLINT_BIN (build/bin) must be set}"
: "${FLINT_JOBS:?FLINT_JOBS (build/jobs) must be set}"
: "${FLINT_SOURCE:?FLINT_SOURCE (the repository) must be set}"
export FLINT_LOG_LEVEL=${FLINT_LOG_LEVEL:-info}
rounds=${1:-20}
out=${SOAK_DIR:-/tmp/flint-paused-taskmanager-soak}
mkdir -p "$out"
pass=0 fail=0 skip=0
for r in $(seq 1 "$rounds"); do
  log="$out/paused_taskmanager.$r.log"
  bash "$FLINT_SOURCE/test/apps/cluster/paused_taskmanager_test.sh" >"$log" 2>&1
  case $? in
    0) pass=$((pass + 1)); echo "round $r passed"; rm -f "$log" ;;
    77) skip=$((skip + 1)); rm -f "$log" ;;
    *) fail=$((fail + 1)); echo "round $r failed: $log" ;;
  esac
done
echo "paused_taskmanager: $pass passed, $fail failed, $skip skipped of $rounds"
[[ $fail -eq 0 ]]
