#!/usr/bin/env bash
# deploy/start-cluster.sh starts a JobManager and one TaskManager per workers line (localhost:
# no ssh); a job needing both TaskManagers' slots runs; deploy/stop-cluster.sh stops every
# process it started.
. "$(dirname "$0")/lib.sh"

export FLINT_HOME="$FLINT_SOURCE" FLINT_BIN_DIR="$FLINT_BIN"
export FLINT_CONF_DIR="$WORK/conf" FLINT_PID_DIR="$WORK/pids" FLINT_LOG_DIR="$WORK/log"
mkdir -p "$FLINT_CONF_DIR"
port=$(unused_port)
cat >"$FLINT_CONF_DIR/flink-conf.yaml" <<CONF
jobmanager.rpc.address: 127.0.0.1
jobmanager.rpc.port: $port
taskmanager.host: 127.0.0.1
taskmanager.numberOfTaskSlots: 2
blob.storage.directory: $WORK/blobs
CONF
printf '# two TaskManagers on this host\nlocalhost\nlocalhost\n' >"$FLINT_CONF_DIR/workers"
CLEANUPS+=("'$FLINT_SOURCE/deploy/stop-cluster.sh' >/dev/null 2>&1")

"$FLINT_SOURCE/deploy/start-cluster.sh"
[[ $(wc -l <"$FLINT_PID_DIR/flint-$(id -un)-taskmanager.pid") -eq 2 ]] || fail "expected 2 TaskManager pids"
pids=$(cat "$FLINT_PID_DIR"/*.pid)

generate_text 500000 "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$FLINT_CONF_DIR/flink-conf.yaml" -p 4 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log" "$FLINT_LOG_DIR"/*; fail "flint run failed"; }
check_wordcount "$WORK/input.txt" "$WORK/output"

"$FLINT_SOURCE/deploy/stop-cluster.sh"
for pid in $pids; do
  if kill -0 "$pid" 2>/dev/null; then fail "process $pid still runs after stop-cluster.sh"; fi
done
ls "$FLINT_LOG_DIR"
echo "PASS"
