#!/usr/bin/env bash
# A leading JobManager that wakes after its ZooKeeper session expired cannot hang the job (issue
# 25): a real ZooKeeper (session timeout 4 s), two JobManagers, two one-slot TaskManagers, the
# checkpointed exactly-once WordCount -p 2 from 240 MB with checkpoints every 200 ms. After
# checkpoint 2 the leader is frozen (SIGSTOP) past its session: the standby takes leadership and
# restores the job from its latest checkpoint. Then the old leader wakes (SIGCONT): it must act as
# leader on nothing it dequeued, its leadership is revoked, and nothing it sends may close or change
# a TaskManager's connection to the new JobMaster. The job must finish once, under the new leader,
# with exactly one update per input word. test/soak/paused_jobmanager_soak.sh runs it 20 times.
. "$(dirname "$0")/lib.sh"
session_timeout_ms=${FLINT_HA_SESSION_TIMEOUT_MS:-4000}
# Past the session (the standby takes over about one session timeout after the freeze), and
# short enough that the restored job still runs when the old leader wakes.
freeze_ms=${FLINT_FREEZE_MS:-5000}

zk_port=$(unused_port)
ZK_TICK_TIME=500 "$FLINT_SOURCE/deploy/zookeeper.sh" start "$WORK/zk" "$zk_port" >/dev/null
CLEANUPS+=("'$FLINT_SOURCE/deploy/zookeeper.sh' stop '$WORK/zk' >/dev/null")

SLOTS=1 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 5" \
  "restart-strategy.fixed-delay.delay: 200 ms" \
  "execution.checkpointing.interval: 200 ms" \
  "state.checkpoints.dir: $WORK/checkpoints" \
  "high-availability.type: zookeeper" \
  "high-availability.zookeeper.quorum: 127.0.0.1:$zk_port" \
  "high-availability.storageDir: $WORK/ha" \
  "high-availability.cluster-id: paused-jobmanager-test" \
  "high-availability.zookeeper.client.session-timeout: $session_timeout_ms ms"
NODES="jm1 jm2 tm1 tm2"
start_node jm1 "" jobmanager --config "$WORK/flink-conf.yaml" -D "blob.storage.directory=$WORK/blobs-jm1"
for _ in $(seq 1 100); do grep -q "dispatcher was granted leadership" "$WORK/jm1.log" && break; sleep 0.1; done
grep -q "dispatcher was granted leadership" "$WORK/jm1.log" || fail "the first JobManager never led"
start_node jm2 "" jobmanager --config "$WORK/flink-conf.yaml" -D "blob.storage.directory=$WORK/blobs-jm2"
for tm in tm1 tm2; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done

generate_text "${FLINT_FAILOVER_INPUT_BYTES:-240000000}" "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
for _ in $(seq 1 600); do
  grep -q "Completed checkpoint 2 for job" "$WORK/jm1.log" 2>/dev/null && break
  kill -0 "$client" 2>/dev/null || { cat "$WORK/run.log"; fail "the job ended before checkpoint 2"; }
  sleep 0.05
done
grep -q "Completed checkpoint 2 for job" "$WORK/jm1.log" || fail "checkpoint 2 never completed"
jm1_pid=$(pid_of jm1)
kill -STOP "$jm1_pid"
CLEANUPS+=("kill -CONT $jm1_pid 2>/dev/null")
stopped_at=$(date +%s%3N)
echo "froze the leading JobManager after checkpoint 2"
# Frozen past its session: until the standby restored the job and $freeze_ms passed.
for _ in $(seq 1 1200); do
  grep -q "Restoring job" "$WORK/jm2.log" 2>/dev/null &&
    (( $(date +%s%3N) - stopped_at >= freeze_ms )) && break
  kill -0 "$client" 2>/dev/null || break
  sleep 0.05
done
grep -q "Restoring job" "$WORK/jm2.log" || fail "the standby did not restore the job while the leader was frozen"
grep -q "reached terminal state" "$WORK/jm2.log" && fail "the job ended before the old leader woke (input too small)"
kill -CONT "$jm1_pid"
echo "woke the old leader after $(( $(date +%s%3N) - stopped_at )) ms"

await_client "$client" 150 "flint run still waits 150 s after the old leader woke"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "dispatcher was granted leadership" "$WORK/jm2.log" || fail "the standby never took leadership"
grep -q "dispatcher was revoked leadership" "$WORK/jm1.log" || fail "the old leader never saw its leadership revoked"
# Finished once: by the new leader, never by the old one.
finished=$(grep -c "reached terminal state FINISHED" "$WORK/jm2.log" || true)
[[ "$finished" -eq 1 ]] || fail "the new leader finished the job $finished times"
if grep -q "reached terminal state" "$WORK/jm1.log"; then
  fail "the old leader took the job to a terminal state: $(grep -m1 'reached terminal state' "$WORK/jm1.log")"
fi
# Each TaskManager lost the old leader once, at the takeover: the old JobMaster stopping after
# the wake is not the current leader's loss. (A TaskManager whose own ZooKeeper connection
# dropped on a loaded machine saw "no leader" for that reason: not counted.)
for tm in tm1 tm2; do
  grep -q "lost its server" "$WORK/$tm.log" && continue
  lost=$(grep -c "Close JobManager connection for job .*: JobManager lost leadership" "$WORK/$tm.log" || true)
  [[ "$lost" -le 1 ]] || fail "$tm closed its JobManager connection $lost times for a lost leadership"
done
grep -m1 "Restoring job" "$WORK/jm2.log"
check_wordcount "$WORK/input.txt" "$WORK/output"
echo "PASS"
