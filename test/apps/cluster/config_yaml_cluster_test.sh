#!/usr/bin/env bash
# Flink 2's layout: a configuration directory holding only a nested config.yaml starts a cluster
# through deploy/start-cluster.sh (the scripts and the nodes read the same nested keys), and
# `flint run -m <REST address>` submits to it as Flink's CLI would (-m is the REST endpoint).
. "$(dirname "$0")/lib.sh"

export FLINT_HOME="$FLINT_SOURCE" FLINT_BIN_DIR="$FLINT_BIN"
export FLINT_CONF_DIR="$WORK/conf" FLINT_PID_DIR="$WORK/pids" FLINT_LOG_DIR="$WORK/log"
unset FLINK_CONF_DIR
mkdir -p "$FLINT_CONF_DIR"
rpc_port=$(unused_port)
rest_port=$(unused_port)
cat >"$FLINT_CONF_DIR/config.yaml" <<CONF
# Flink 2's config.yaml: standard nested YAML.
jobmanager:
  rpc:
    address: 127.0.0.1
    port: $rpc_port
taskmanager:
  host: 127.0.0.1
  numberOfTaskSlots: 2
  memory:
    network:
      max: 64 mb
rest:
  port: $rest_port
  bind-address: 127.0.0.1
blob:
  storage:
    directory: $WORK/blobs
execution:
  buffer-timeout:
    interval: 10 ms
CONF
printf 'localhost\n' >"$FLINT_CONF_DIR/workers"
[[ ! -e "$FLINT_CONF_DIR/flink-conf.yaml" ]] || fail "the directory must hold config.yaml only"
CLEANUPS+=("'$FLINT_SOURCE/deploy/stop-cluster.sh' >/dev/null 2>&1")

"$FLINT_SOURCE/deploy/start-cluster.sh"
for _ in $(seq 1 100); do
  grep -q "Registering TaskManager with ResourceID" "$FLINT_LOG_DIR"/*jobmanager*.log 2>/dev/null && break
  sleep 0.1
done
grep -q "Registering TaskManager with ResourceID" "$FLINT_LOG_DIR"/*jobmanager*.log ||
  { tail -n 30 "$FLINT_LOG_DIR"/*; fail "no TaskManager registered with the config.yaml cluster"; }
# Every key of the file is known: no "not used" warnings, no deprecation warnings.
if grep -h "is not used\|not a Flint option\|deprecated configuration key" "$FLINT_LOG_DIR"/*.log; then
  fail "a key of config.yaml drew a warning"
fi

generate_text 200000 "$WORK/input.txt"
"$FLINT_BIN/flint" run -m "127.0.0.1:$rest_port" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 ||
  { cat "$WORK/run.log"; fail "flint run -m <REST address> failed"; }
grep -q "has finished" "$WORK/run.log" || { cat "$WORK/run.log"; fail "the job did not finish"; }
check_wordcount "$WORK/input.txt" "$WORK/output"

"$FLINT_SOURCE/deploy/stop-cluster.sh"
echo "PASS"
