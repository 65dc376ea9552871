#!/usr/bin/env bash
# JobManager failover with ZooKeeper HA on real processes (Flink's
# JobManagerHAProcessFailureRecoveryITCase): a real ZooKeeper server, two JobManagers (one leads,
# one stands by), three one-slot TaskManagers, the checkpointed exactly-once WordCount -p 2. After
# KILL_AFTER checkpoints completed (first argument, default 2) the leading JobManager is killed
# (SIGKILL). The standby must take leadership with a new leader id, the TaskManagers must
# register with it, the job must resume from its latest checkpoint and finish, and the committed
# output must hold exactly one update per input word. `flint run` is given no -m: it finds the
# Dispatcher through ZooKeeper and follows the new leader.
. "$(dirname "$0")/lib.sh"
kill_after=${1:-2}
session_timeout_ms=${FLINT_HA_SESSION_TIMEOUT_MS:-4000}

zk_port=$(unused_port)
ZK_TICK_TIME=500 "$FLINT_SOURCE/deploy/zookeeper.sh" start "$WORK/zk" "$zk_port" >/dev/null
CLEANUPS+=("'$FLINT_SOURCE/deploy/zookeeper.sh' stop '$WORK/zk' >/dev/null")

# 200 ms between restarts (Flink's default is 1 s): under CI load the loopback ZooKeeper stalled
# for every client at once, leader information flapped for ~50 ms, and five restarts at 0 ms were
# spent in it.
SLOTS=1 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 5" \
  "restart-strategy.fixed-delay.delay: 200 ms" \
  "execution.checkpointing.interval: 100 ms" \
  "state.checkpoints.dir: $WORK/checkpoints" \
  "high-availability.type: zookeeper" \
  "high-availability.zookeeper.quorum: 127.0.0.1:$zk_port" \
  "high-availability.storageDir: $WORK/ha" \
  "high-availability.cluster-id: ha-failover-test" \
  "high-availability.zookeeper.client.session-timeout: $session_timeout_ms ms"
NODES="jm1 jm2 tm1 tm2 tm3"
# Each JobManager has its own blob directory: the standby serves the job library from the HA
# storage, as a JobManager on another host would.
start_node jm1 "" jobmanager --config "$WORK/flink-conf.yaml" -D "blob.storage.directory=$WORK/blobs-jm1"
for _ in $(seq 1 100); do grep -q "dispatcher was granted leadership" "$WORK/jm1.log" && break; sleep 0.1; done
grep -q "dispatcher was granted leadership" "$WORK/jm1.log" || fail "the first JobManager never led"
start_node jm2 "" jobmanager --config "$WORK/flink-conf.yaml" -D "blob.storage.directory=$WORK/blobs-jm2"
for tm in tm1 tm2 tm3; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done

generate_text "${FLINT_FAILOVER_INPUT_BYTES:-120000000}" "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
for _ in $(seq 1 600); do
  grep -q "Completed checkpoint $kill_after for job" "$WORK/jm1.log" 2>/dev/null && break
  kill -0 "$client" 2>/dev/null || { cat "$WORK/run.log"; fail "the job ended before checkpoint $kill_after"; }
  sleep 0.05
done
grep -q "Completed checkpoint $kill_after for job" "$WORK/jm1.log" || fail "checkpoint $kill_after never completed"
grep -q "was granted leadership" "$WORK/jm2.log" && fail "the standby led while the leader was alive"
kill -KILL "$(pid_of jm1)"
killed_at=$(date +%s%3N)
echo "killed the leading JobManager after checkpoint $kill_after completed"

await_client "$client" 150 "flint run still waits 150 s after the kill"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "dispatcher was granted leadership" "$WORK/jm2.log" || fail "the standby never took leadership"
old_id=$(sed -n 's/.*dispatcher was granted leadership with leader id \([^ .]*\).*/\1/p' "$WORK/jm1.log" | head -1)
new_id=$(sed -n 's/.*dispatcher was granted leadership with leader id \([^ .]*\).*/\1/p' "$WORK/jm2.log" | head -1)
[[ -n "$new_id" && "$new_id" != "$old_id" ]] || fail "the new leader id $new_id is not new (old $old_id)"
echo "leadership: $old_id -> $new_id"
grep -E -q "Restoring job [0-9a-f]+ from Checkpoint [0-9]+ @ [0-9]+ for [0-9a-f]+ located at $WORK/checkpoints/" \
  "$WORK/jm2.log" || fail "the new leader did not restore the job from a checkpoint"
grep -m1 "Restoring job" "$WORK/jm2.log"
restored=$(sed -n 's/.*Restoring job [0-9a-f]* from Checkpoint \([0-9]*\) .*/\1/p' "$WORK/jm2.log" | head -1)
[[ "$restored" -ge "$kill_after" ]] || fail "restored checkpoint $restored, older than $kill_after"
registered=$(grep -c "Registering TaskManager with ResourceID" "$WORK/jm2.log" || true)
[[ "$registered" -ge 3 ]] || fail "only $registered TaskManagers registered with the new leader"
grep -q "Following the new Dispatcher leader" "$WORK/run.log" || fail "flint run did not follow the new leader"
# The figures for the notes: from the kill to the standby's leadership and to the job RUNNING
# again under it (the log's clock against the kill's; both this machine's wall clock).
log_ms() { local t; t=$(awk "/$1/ { print \$1 \" \" \$2; exit }" "$WORK/jm2.log"); [[ -n "$t" ]] &&
  echo $(( $(date -d "${t%,*}" +%s) * 1000 + 10#${t##*,} )); }
granted_ms=$(log_ms "Dispatcher dispatcher was granted leadership")
running_ms=$(log_ms "switched from state CREATED to RUNNING")
[[ -n "$granted_ms" && -n "$running_ms" ]] &&
  echo "failover: leader after $((granted_ms - killed_at)) ms, job RUNNING after $((running_ms - killed_at)) ms (session timeout $session_timeout_ms ms)"
check_wordcount "$WORK/input.txt" "$WORK/output"
echo "PASS"
