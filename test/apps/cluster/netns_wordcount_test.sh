#!/usr/bin/env bash
# The same WordCount on a LAN of three network-namespace hosts with their own addresses: host 1
# runs the JobManager, hosts 2 and 3 a TaskManager each; the client runs on host 1.
# Exits 77 (ctest: skipped) where namespaces cannot be created, saying why.
. "$(dirname "$0")/lib.sh"
lan="$FLINT_SOURCE/deploy/netns/lan.sh"
name="fl$$"
if ! "$lan" up "$name" 3 >"$WORK/lan.txt" 2>"$WORK/lan.err"; then
  echo "SKIP: network namespaces cannot be created here: $(cat "$WORK/lan.err")"
  exit 77
fi
CLEANUPS+=("'$lan' down '$name'")
cat "$WORK/lan.txt"
jm=$("$lan" addr "$name" 1)
port=6123
for i in 1 2 3; do
  cat >"$WORK/conf$i.yaml" <<CONF
jobmanager.rpc.address: $jm
jobmanager.rpc.port: $port
taskmanager.host: $("$lan" addr "$name" "$i")
taskmanager.numberOfTaskSlots: 2
blob.storage.directory: $WORK/blobs$i
heartbeat.interval: 1 s
heartbeat.timeout: 10 s
CONF
done
start_node jm "$lan exec $name 1" jobmanager --config "$WORK/conf1.yaml"
start_node tm2 "$lan exec $name 2" taskmanager --config "$WORK/conf2.yaml"
start_node tm3 "$lan exec $name 3" taskmanager --config "$WORK/conf3.yaml"

generate_text 3000000 "$WORK/input.txt"
"$lan" exec "$name" 1 "$FLINT_BIN/flint" run --config "$WORK/conf1.yaml" -p 4 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; fail "flint run failed"; }
cat "$WORK/run.log"
check_wordcount "$WORK/input.txt" "$WORK/output"
# Each TaskManager registered from its own host's address (its resource id starts with it), and
# the JobMaster deployed tasks to each host at that address.
for i in 2 3; do
  addr=$("$lan" addr "$name" "$i")
  id=$(ready_field "tm$i" resource_id)
  [[ "$id" == "$addr:"* ]] || fail "tm$i's resource id $id is not on host $i's address $addr"
  grep -F "Registering TaskManager with ResourceID task_executor/$id " "$WORK/jm.log" ||
    fail "the ResourceManager did not register tm$i from $addr"
  grep -qF "to task_executor/$id @ $addr (dataPort=" "$WORK/jm.log" || fail "no task was deployed to tm$i at $addr"
done
echo "PASS"
