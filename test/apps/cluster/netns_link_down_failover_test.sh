#!/usr/bin/env bash
# Failover when a TaskManager's link is cut on a network-namespace LAN (`ip link set ... down`):
# no connection drop reaches the JobManager, only the heartbeat timeout notices. Host 1 runs the
# JobManager, hosts 2-4 a one-slot TaskManager each; WordCount -p 2 under fixed-delay restarts on
# the spare and FINISHES with output equal to an independent count.
# Exits 77 (ctest: skipped) where namespaces cannot be created, saying why.
. "$(dirname "$0")/lib.sh"
lan="$FLINT_SOURCE/deploy/netns/lan.sh"
name="fo$$"
if ! "$lan" up "$name" 4 >"$WORK/lan.txt" 2>"$WORK/lan.err"; then
  echo "SKIP: network namespaces cannot be created here: $(cat "$WORK/lan.err")"
  exit 77
fi
CLEANUPS+=("'$lan' down '$name'")
jm=$("$lan" addr "$name" 1)
for i in 1 2 3 4; do
  # The restart waits 2 s, so that the cut-off TaskManager has failed its own tasks (its
  # JobManager heartbeat times out too) before their successors rewrite the output.
  cat >"$WORK/conf$i.yaml" <<CONF
jobmanager.rpc.address: $jm
jobmanager.rpc.port: 6123
taskmanager.host: $("$lan" addr "$name" "$i")
taskmanager.numberOfTaskSlots: 1
blob.storage.directory: $WORK/blobs$i
heartbeat.interval: 200 ms
heartbeat.timeout: 2 s
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 3
restart-strategy.fixed-delay.delay: 2 s
CONF
done
NODES="jm tm2 tm3 tm4"
start_node jm "$lan exec $name 1" jobmanager --config "$WORK/conf1.yaml"
for i in 2 3 4; do start_node "tm$i" "$lan exec $name $i" taskmanager --config "$WORK/conf$i.yaml"; done

generate_text "${FLINT_FAILOVER_INPUT_BYTES:-60000000}" "$WORK/input.txt"
"$lan" exec "$name" 1 "$FLINT_BIN/flint" run --config "$WORK/conf1.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
victim=$(await_busy_node tm2 tm3 tm4)
ip -n "$name-lan" link set "p${victim#tm}" down
echo "cut the link of $victim"

await_client "$client" 90 "flint run still waits 90 s after the cut"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "[Hh]eartbeat of TaskManager with id .* timed out" "$WORK/jm.log" || fail "the heartbeat timeout did not notice the cut"
grep -q "switched from state RUNNING to RESTARTING" "$WORK/jm.log" || fail "the job never went RESTARTING"
check_wordcount "$WORK/input.txt" "$WORK/output"
echo "PASS"
