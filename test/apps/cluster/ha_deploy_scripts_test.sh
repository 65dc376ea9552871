#!/usr/bin/env bash
# deploy/start-cluster.sh with ZooKeeper HA: one JobManager per line of deploy/masters (two here,
# both on this host, each on a free port of high-availability.jobmanager.port), one TaskManager
# per workers line; `flint run` without -m finds the leader through ZooKeeper; stopping the
# leader hands the cluster to the other JobManager, which runs the next job;
# deploy/stop-cluster.sh stops every process it started.
. "$(dirname "$0")/lib.sh"

export FLINT_HOME="$FLINT_SOURCE" FLINT_BIN_DIR="$FLINT_BIN"
export FLINT_CONF_DIR="$WORK/conf" FLINT_PID_DIR="$WORK/pids" FLINT_LOG_DIR="$WORK/log"
mkdir -p "$FLINT_CONF_DIR"
zk_port=$(unused_port)
ZK_TICK_TIME=500 "$FLINT_SOURCE/deploy/zookeeper.sh" start "$WORK/zk" "$zk_port" >/dev/null
CLEANUPS+=("'$FLINT_SOURCE/deploy/zookeeper.sh' stop '$WORK/zk' >/dev/null")
cat >"$FLINT_CONF_DIR/flink-conf.yaml" <<CONF
taskmanager.host: 127.0.0.1
taskmanager.numberOfTaskSlots: 2
blob.storage.directory: $WORK/blobs
high-availability: zookeeper
high-availability.zookeeper.quorum: 127.0.0.1:$zk_port
high-availability.storageDir: $WORK/ha
high-availability.cluster-id: /deploy-scripts
high-availability.zookeeper.client.session-timeout: 4 s
CONF
printf '# two JobManagers on this host\nlocalhost:8081\n127.0.0.1:8082\n' >"$FLINT_CONF_DIR/masters"
printf 'localhost\n' >"$FLINT_CONF_DIR/workers"
CLEANUPS+=("'$FLINT_SOURCE/deploy/stop-cluster.sh' >/dev/null 2>&1")

"$FLINT_SOURCE/deploy/start-cluster.sh" | tee "$WORK/start.log"
grep -q "Starting HA cluster with 2 masters." "$WORK/start.log" || fail "start-cluster.sh did not read the masters"
jm_pids=$(cat "$FLINT_PID_DIR/flint-$(id -un)-jobmanager.pid")
[[ $(echo "$jm_pids" | wc -l) -eq 2 ]] || fail "expected 2 JobManager pids, got: $jm_pids"
pids="$jm_pids $(cat "$FLINT_PID_DIR/flint-$(id -un)-taskmanager.pid")"

generate_text 300000 "$WORK/input.txt"
run_job() {
  "$FLINT_BIN/flint" run --config "$FLINT_CONF_DIR/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
    --input "$WORK/input.txt" --output "$WORK/$1" >"$WORK/$1.log" 2>&1 ||
    { cat "$WORK/$1.log" "$FLINT_LOG_DIR"/*; fail "flint run ($1) failed"; }
  check_wordcount "$WORK/input.txt" "$WORK/$1"
}
run_job output1

# The leader is the JobManager whose log has the Dispatcher's grant; stop it gracefully.
leader_log=$(grep -l "Dispatcher dispatcher was granted leadership" "$FLINT_LOG_DIR"/flint-*-jobmanager-*.log | head -1)
[[ -n "$leader_log" ]] || fail "no JobManager leads"
standby_log=$(ls "$FLINT_LOG_DIR"/flint-*-jobmanager-*.log | grep -v "^$leader_log$")
# What the node printed (its ready line) is in the .out beside its .log, as Flink's.
leader_pid=$(sed -n 's/^flint-node ready role=jobmanager.* pid=\([0-9]*\).*/\1/p' "${leader_log%.log}.out")
[[ -n "$leader_pid" ]] || fail "cannot tell the leader's pid from ${leader_log%.log}.out"
kill -TERM "$leader_pid"
for _ in $(seq 1 200); do grep -q "Dispatcher dispatcher was granted leadership" "$standby_log" && break; sleep 0.1; done
grep -q "Dispatcher dispatcher was granted leadership" "$standby_log" || fail "the standby never took over"
run_job output2

"$FLINT_SOURCE/deploy/stop-cluster.sh"
for pid in $pids; do
  if kill -0 "$pid" 2>/dev/null; then fail "process $pid still runs after stop-cluster.sh"; fi
done
echo "PASS"
