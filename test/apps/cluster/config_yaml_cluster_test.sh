#!/usr/bin/env bash
# Flink 2's layout: a configuration directory holding only a nested config.yaml starts a cluster
# through deploy/start-cluster.sh (the scripts and the nodes read the same nested keys), and
# `flint run -m <REST address>` submits to it as Flink's CLI would (-m is the REST endpoint). A
# secret in it is logged as ******.
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
# A secret (unused: internal TLS is off) that the nodes' logs, which REST serves, must not show.
security:
  ssl:
    internal:
      key-password: hunter2-not-for-logs
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

# Secrets are logged as Flink logs them: "Loading configuration property: <key>, ******".
if grep -l "hunter2-not-for-logs" "$FLINT_LOG_DIR"/*; then
  fail "a node logged the value of security.ssl.internal.key-password"
fi
grep -q "Loading configuration property: security.ssl.internal.key-password, \*\*\*\*\*\*" \
  "$FLINT_LOG_DIR"/*jobmanager*.log || fail "the JobManager did not log the hidden key-password"

generate_text 200000 "$WORK/input.txt"
"$FLINT_BIN/flint" run -m "127.0.0.1:$rest_port" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 ||
  { cat "$WORK/run.log"; fail "flint run -m <REST address> failed"; }
grep -q "has finished" "$WORK/run.log" || { cat "$WORK/run.log"; fail "the job did not finish"; }
check_wordcount "$WORK/input.txt" "$WORK/output"

# flint-daemon.sh gives the node its --log-file: REST serves it and its directory, as Flink
# serves its log directory; what the process printed is the .out beside it.
python3 - "http://127.0.0.1:$rest_port" <<'PY' || fail "the daemon's log files are not served as Flink serves them"
import json, sys, urllib.request
base = sys.argv[1]
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
logs = json.load(urllib.request.urlopen(base + "/jobmanager/logs", timeout=10))["logs"]
names = {l["name"] for l in logs}
print(f"logs: {sorted(names)}")
jm = [n for n in names if "jobmanager" in n and n.endswith(".log")]
check(jm and jm[0][:-4] + ".out" in names, f"no jobmanager .log with its .out: {names}")
text = urllib.request.urlopen(base + "/jobmanager/log", timeout=10).read().decode()
check("Loading configuration property: security.ssl.internal.key-password, ******" in text,
      "the served log lacks the hidden key-password line")
check("hunter2" not in text, "the served log shows the secret")
out = urllib.request.urlopen(base + "/jobmanager/stdout", timeout=10).read().decode()
check("flint-node ready" in out, f"stdout is not the .out file: {out[:80]!r}")
PY

"$FLINT_SOURCE/deploy/stop-cluster.sh"
echo "PASS"
