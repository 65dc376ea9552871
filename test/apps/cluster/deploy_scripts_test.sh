#!/usr/bin/env bash
# deploy/start-cluster.sh starts a JobManager and one TaskManager per workers line — localhost
# directly, any other host through ssh (here an `ssh` on PATH that records its call and runs the
# command on this machine, as the remote shell would); a job needing both TaskManagers' slots
# runs; deploy/stop-cluster.sh stops every process it started, through ssh for the remote one.
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
printf '# one TaskManager here, one on a "remote" worker\nlocalhost\nworker-b # over ssh\n' >"$FLINT_CONF_DIR/workers"
mkdir -p "$WORK/fake-bin"
cat >"$WORK/fake-bin/ssh" <<'SSH'
#!/usr/bin/env bash
# ssh [-n] [-o opt]... host -- command: logs the host and command, runs the command here.
args=("$@"); host=""; i=0
while [[ $i -lt ${#args[@]} ]]; do
  case "${args[$i]}" in
    -n) ;;
    -o) i=$((i + 1)) ;;
    --) command="${args[*]:$((i + 1))}"; break ;;
    *) host="${args[$i]}" ;;
  esac
  i=$((i + 1))
done
echo "ssh $host: $command" >>"$FAKE_SSH_LOG"
exec bash -c "$command"
SSH
chmod +x "$WORK/fake-bin/ssh"
export PATH="$WORK/fake-bin:$PATH" FAKE_SSH_LOG="$WORK/ssh.log"
CLEANUPS+=("'$FLINT_SOURCE/deploy/stop-cluster.sh' >/dev/null 2>&1")

"$FLINT_SOURCE/deploy/start-cluster.sh"
[[ $(wc -l <"$FLINT_PID_DIR/flint-$(id -un)-taskmanager.pid") -eq 2 ]] || fail "expected 2 TaskManager pids"
grep -q "^ssh worker-b: .*flint-daemon.sh' start taskmanager" "$WORK/ssh.log" || fail "worker-b was not started through ssh"
grep -q "localhost" "$WORK/ssh.log" && fail "localhost was started through ssh"
pids=$(cat "$FLINT_PID_DIR"/*.pid)

generate_text 500000 "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$FLINT_CONF_DIR/flink-conf.yaml" -p 4 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log" "$FLINT_LOG_DIR"/*; fail "flint run failed"; }
check_wordcount "$WORK/input.txt" "$WORK/output"

"$FLINT_SOURCE/deploy/stop-cluster.sh"
grep -q "^ssh worker-b: .*flint-daemon.sh' stop-all taskmanager" "$WORK/ssh.log" || fail "worker-b was not stopped through ssh"
cat "$WORK/ssh.log"
for pid in $pids; do
  if kill -0 "$pid" 2>/dev/null; then fail "process $pid still runs after stop-cluster.sh"; fi
done
ls "$FLINT_LOG_DIR"
echo "PASS"
