#!/usr/bin/env bash
# Every path key means the same path on every node: ZooKeeper HA with Flink's documented form
# `high-availability.storageDir: file:///...` (and the checkpoint and blob directories as file://
# URIs too), two JobManagers started from two different, empty working directories, three
# TaskManagers from a third. The checkpointed WordCount runs; after its 2nd checkpoint the leader
# is killed (SIGKILL) and the standby, started elsewhere, must find the job graph and the
# checkpoints where the leader wrote them, recover the job and finish it exactly once. Then a
# savepoint is taken to a file:// target and the path `flint savepoint` prints ("file:/...") is
# given back to `flint run -s` as it is. Nothing may be written under any working directory: a
# `file:` folder there is the bug this guards against.
. "$(dirname "$0")/lib.sh"

zk_port=$(unused_port)
ZK_TICK_TIME=500 "$FLINT_SOURCE/deploy/zookeeper.sh" start "$WORK/zk" "$zk_port" >/dev/null
CLEANUPS+=("'$FLINT_SOURCE/deploy/zookeeper.sh' stop '$WORK/zk' >/dev/null")

for d in jm1 jm2 tms cli; do mkdir -p "$WORK/cwd-$d"; done
# 200 ms between restarts (Flink's default is 1 s): under CI load the loopback ZooKeeper stalled
# for every client at once, leader information flapped for ~50 ms, and five restarts at 0 ms were
# spent in it.
SLOTS=1 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 5" \
  "restart-strategy.fixed-delay.delay: 200 ms" \
  "execution.checkpointing.interval: 100 ms" \
  "state.checkpoints.dir: file://$WORK/checkpoints" \
  "high-availability.type: zookeeper" \
  "high-availability.zookeeper.quorum: 127.0.0.1:$zk_port" \
  "high-availability.storageDir: file://$WORK/ha" \
  "high-availability.cluster-id: ha-file-uri-test" \
  "high-availability.zookeeper.client.session-timeout: 4000 ms"
sed -i "s|^blob.storage.directory: .*|blob.storage.directory: file://$WORK/blobs|" "$WORK/flink-conf.yaml"
NODES="jm1 jm2 tm1 tm2 tm3"
start_node jm1 "env -C $WORK/cwd-jm1" jobmanager --config "$WORK/flink-conf.yaml" \
  -D "blob.storage.directory=file:$WORK/blobs-jm1"
for _ in $(seq 1 100); do grep -q "dispatcher was granted leadership" "$WORK/jm1.log" && break; sleep 0.1; done
grep -q "dispatcher was granted leadership" "$WORK/jm1.log" || fail "the first JobManager never led"
start_node jm2 "env -C $WORK/cwd-jm2" jobmanager --config "$WORK/flink-conf.yaml" \
  -D "blob.storage.directory=file://localhost$WORK/blobs-jm2"
for tm in tm1 tm2 tm3; do start_node "$tm" "env -C $WORK/cwd-tms" taskmanager --config "$WORK/flink-conf.yaml"; done

# `flint ACTION --config ... ARGS` from its own working directory (ZooKeeper names the leader).
flint_cli() {
  local action=$1
  shift
  (cd "$WORK/cwd-cli" && exec "$FLINT_BIN/flint" "$action" --config "$WORK/flink-conf.yaml" "$@")
}
generate_text "${FLINT_FAILOVER_INPUT_BYTES:-120000000}" "$WORK/input.txt"
flint_cli run -p 2 "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" --output "$WORK/output" \
  >"$WORK/run.log" 2>&1 &
client=$!
# Two completed checkpoints, whatever their ids (a checkpoint triggered while ZooKeeper was slow to
# answer fails, and the next id is taken).
completed() { grep -c "Completed checkpoint [0-9]* for job" "$WORK/jm1.log" 2>/dev/null || true; }
for _ in $(seq 1 600); do
  [[ $(completed) -ge 2 ]] && break
  kill -0 "$client" 2>/dev/null || { cat "$WORK/run.log"; fail "the job ended before two checkpoints completed"; }
  sleep 0.05
done
[[ $(completed) -ge 2 ]] || fail "two checkpoints never completed"
ls "$WORK/ha/ha-file-uri-test/job_graphs/" | grep -q . || fail "no job graph under $WORK/ha"
kill -KILL "$(pid_of jm1)"
echo "killed the leading JobManager (started in $WORK/cwd-jm1) after two checkpoints"

await_client "$client" 150 "flint run still waits 150 s after the kill"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "dispatcher was granted leadership" "$WORK/jm2.log" || fail "the standby never took leadership"
grep -E -q "Restoring job [0-9a-f]+ from Checkpoint [0-9]+ @ [0-9]+ for [0-9a-f]+ located at $WORK/checkpoints/" \
  "$WORK/jm2.log" || fail "the standby did not restore the job from the checkpoint directory"
grep -m1 "Restoring job" "$WORK/jm2.log"
check_wordcount "$WORK/input.txt" "$WORK/output"

# A savepoint to a file:// target; its printed path, as printed, starts the next job.
flint_cli run -d -p 2 "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" \
  --output "$WORK/output2" >"$WORK/run2.log" 2>&1 || { cat "$WORK/run2.log"; fail "flint run -d failed"; }
job=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run2.log")
[[ -n "$job" ]] || { cat "$WORK/run2.log"; fail "no JobID"; }
for _ in $(seq 1 300); do
  grep -q "Completed checkpoint [0-9]* for job $job" "$WORK/jm2.log" && break
  sleep 0.1
done
flint_cli savepoint "$job" "file://$WORK/savepoints" >"$WORK/savepoint.log" 2>&1 \
  || { cat "$WORK/savepoint.log"; fail "flint savepoint to file://$WORK/savepoints failed"; }
cat "$WORK/savepoint.log"
printed=$(sed -n 's/^Savepoint completed. Path: \(file:.*\)$/\1/p' "$WORK/savepoint.log")
[[ "$printed" == "file:$WORK/savepoints/savepoint-"* ]] || fail "the savepoint is not under $WORK/savepoints: '$printed'"
[[ -f "${printed#file:}/_metadata" ]] || fail "no _metadata in ${printed#file:}"
flint_cli cancel "$job" >/dev/null
flint_cli run -d -p 2 -s "$printed" "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" \
  --output "$WORK/output3" >"$WORK/run3.log" 2>&1 || { cat "$WORK/run3.log"; fail "flint run -s $printed failed"; }
job3=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run3.log")
for _ in $(seq 1 300); do
  grep -q "Starting job $job3 from savepoint ${printed#file:} " "$WORK/jm2.log" && break
  sleep 0.1
done
grep -q "Starting job $job3 from savepoint ${printed#file:} " "$WORK/jm2.log" \
  || fail "the job given -s $printed did not start from the savepoint"
flint_cli cancel "$job3" >/dev/null

# Nothing under the directories the processes were started from.
for d in jm1 jm2 tms cli; do
  if [[ -n "$(ls -A "$WORK/cwd-$d")" ]]; then
    find "$WORK/cwd-$d" | head -20 >&2
    fail "something was written under the working directory of $d"
  fi
done
echo "nothing written under the four working directories"
echo "PASS"
