#!/usr/bin/env bash
# By hand, not in ctest: the exactly-once acceptance test (test/apps/cluster/checkpoint_failover_test.sh)
# ROUNDS times (default 20), each killing a TaskManager after a random number of completed
# checkpoints (1..KILL_MAX, default 8: the default input takes about 2 s at 5 checkpoints a second), with a tally.
#   FLINT_BIN=build/bin FLINT_JOBS=build/jobs FLINT_SOURCE=. test/soak/checkpoint_soak.sh [ROUNDS]
# FLINT_STATE_BACKEND=rocksdb runs it on RocksDB. A failed round keeps its output in $SOAK_DIR
# (default /tmp/flint-checkpoint-soak).
set -uo pipefail
: "${FLINT_BIN:?FLINT_BIN (build/bin) must be set}"
: "${FLINT_JOBS:?FLINT_JOBS (build/jobs) must be set}"
: "${FLINT_SOURCE:?FLINT_SOURCE (the repository) must be set}"
export FLINT_LOG_LEVEL=${FLINT_LOG_LEVEL:-info}
rounds=${1:-20}
kill_max=${KILL_MAX:-8}
out=${SOAK_DIR:-/tmp/flint-checkpoint-soak}
mkdir -p "$out"
pass=0 fail=0
for r in $(seq 1 "$rounds"); do
  after=$((1 + RANDOM % kill_max))
  log="$out/round.$r.after-$after.log"
  if bash "$FLINT_SOURCE/test/apps/cluster/checkpoint_failover_test.sh" "$after" >"$log" 2>&1; then
    pass=$((pass + 1)); rm -f "$log"
  else
    fail=$((fail + 1)); echo "round $r (kill after checkpoint $after) failed: $log"
  fi
done
echo "checkpoint_failover${FLINT_STATE_BACKEND:+ ($FLINT_STATE_BACKEND)}: $pass passed, $fail failed of $rounds"
[[ $fail -eq 0 ]]
