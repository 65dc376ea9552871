#!/usr/bin/env bash
# By hand, not in ctest: the ZooKeeper HA JobManager kill test ROUNDS times (default 20), the
# leader killed after a checkpoint count cycling through 2..6, with a summary.
#   FLINT_BIN=build/bin FLINT_JOBS=build/jobs FLINT_SOURCE=. test/soak/ha_soak.sh [ROUNDS]
# A failed round keeps its output in $SOAK_DIR (default /tmp/flint-ha-soak).
set -uo pipefail
: "${FLINT_BIN:?FLINT_BIN (build/bin) must be set}"
: "${FLINT_JOBS:?FLINT_JOBS (build/jobs) must be set}"
: "${FLINT_SOURCE:?FLINT_SOURCE (the repository) must be set}"
export FLINT_LOG_LEVEL=${FLINT_LOG_LEVEL:-info}
rounds=${1:-20}
out=${SOAK_DIR:-/tmp/flint-ha-soak}
mkdir -p "$out"
pass=0 fail=0 skip=0
for r in $(seq 1 "$rounds"); do
  kill_after=$((2 + (r - 1) % 5))
  log="$out/ha_failover.$r.log"
  bash "$FLINT_SOURCE/test/apps/cluster/ha_failover_test.sh" "$kill_after" >"$log" 2>&1
  case $? in
    0) pass=$((pass + 1)); grep -h "^leadership:\|^failover:" "$log"; rm -f "$log" ;;
    77) skip=$((skip + 1)); rm -f "$log" ;;
    *) fail=$((fail + 1)); echo "round $r (kill after $kill_after) failed: $log" ;;
  esac
done
echo "ha_failover: $pass passed, $fail failed, $skip skipped of $rounds"
[[ $fail -eq 0 ]]
