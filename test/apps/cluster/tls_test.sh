#!/usr/bin/env bash
# Mutual TLS on real processes (security.ssl.internal.*, certificates from deploy/gen-certs.sh):
# - a JobManager and two TaskManagers run WordCount exact, the client with its own certificate;
# - peers that fail the handshake (a TaskManager and a client with another CA's certificate, a
#   client without TLS) are refused, logged with their address, and cannot register, list or
#   submit; a connected TaskManager is killed (kill -9); every other connection keeps working (no
#   TaskManager registers again, a second job is exact) — CAF's module alone would drop them all
#   (CAF-NOTES "TLS");
# - an idle TCP connection that never starts a handshake is closed after the handshake timeout;
# - past rpc.max-connections a new connection is closed before its handshake;
# - a proxy between the client and the JobManager sees none of the envelope's plain text;
# - a keystore without a key, or with a wrong passphrase, stops a node at start with a clear error.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }

certs=$WORK/certs
"$FLINT_SOURCE/deploy/gen-certs.sh" "$certs" jm tm1 tm2 client >/dev/null
"$FLINT_SOURCE/deploy/gen-certs.sh" "$WORK/other-ca" stranger >/dev/null
GEN_CERTS_PASSWORD=secret "$FLINT_SOURCE/deploy/gen-certs.sh" "$WORK/locked" locked >/dev/null

SLOTS=2 write_loopback_config "security.ssl.internal.enabled: true" \
  "security.ssl.internal.truststore: $certs/ca.pem" \
  "security.ssl.internal.handshake-timeout: 1 s"
NODES="jm tm1 tm2"
start_node jm "" jobmanager --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/jm.pem"
sed -i "s/^jobmanager.rpc.port: 0$/jobmanager.rpc.port: $(ready_field jm rpc_port)/" "$WORK/flink-conf.yaml"
port=$(ready_field jm rpc_port)
for tm in tm1 tm2; do
  start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/$tm.pem"
done
for _ in $(seq 1 100); do
  [[ $(grep -c "Registering TaskManager with ResourceID" "$WORK/jm.log") -ge 2 ]] && break; sleep 0.1
done
[[ $(grep -c "Registering TaskManager with ResourceID" "$WORK/jm.log") -eq 2 ]] || fail "the TaskManagers did not register over TLS"
grep -q "Mutual TLS on every connection" "$WORK/jm.log" || fail "the JobManager did not say it uses TLS"

flint() { "$FLINT_BIN/flint" "$@"; }
client_tls=(--config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/client.pem")
generate_text 2000000 "$WORK/input.txt"
flint run "${client_tls[@]}" -p 4 "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" \
  --output "$WORK/output1" >"$WORK/run1.log" 2>&1 || { cat "$WORK/run1.log"; fail "WordCount over TLS failed"; }
check_wordcount "$WORK/input.txt" "$WORK/output1"

# Strangers: another CA's TaskManager and client, and a client without TLS.
start_node stranger "" taskmanager --config "$WORK/flink-conf.yaml" \
  -D "security.ssl.internal.keystore=$WORK/other-ca/stranger.pem" -D "security.ssl.internal.truststore=$WORK/other-ca/ca.pem"
if flint list --timeout "3 s" --config "$WORK/flink-conf.yaml" \
  -D "security.ssl.internal.keystore=$WORK/other-ca/stranger.pem" >"$WORK/stranger-list.log" 2>&1; then
  fail "a client with another CA's certificate could list jobs"
fi
if flint list --timeout "3 s" --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.enabled=false" \
  >"$WORK/plain-list.log" 2>&1; then
  fail "a client without TLS could list jobs"
fi
sleep 2
grep -q "TLS handshake (accept) with 127.0.0.1:[0-9]* refused" "$WORK/jm.log" || fail "no refused handshake logged with the peer's address"
grep -c "TLS handshake (accept) with" "$WORK/jm.log" | sed 's/^/refused handshakes logged: /'
[[ $(grep -c "Registering TaskManager with ResourceID" "$WORK/jm.log") -eq 2 ]] || fail "the stranger TaskManager registered (or a TaskManager had to register again)"

# An idle TCP connection: closed after the 1 s handshake timeout.
exec 3<>"/dev/tcp/127.0.0.1/$port"
if timeout 10 cat <&3 >/dev/null; then echo "idle connection closed by the JobManager"; else fail "an idle connection stayed open 10 s"; fi
exec 3<&-
grep -q "its TLS handshake did not complete within 1000 ms" "$WORK/jm.log" || fail "the idle connection's closing was not logged"

# A cap on accepted connections: a JobManager that takes two at once refuses a third stranger
# before its handshake and logs it; once the idle two are reaped, a client is served again.
start_node capped "" jobmanager --config "$WORK/flink-conf.yaml" -D jobmanager.rpc.port=0 \
  -D "blob.storage.directory=$WORK/capped-blobs" -D rpc.max-connections=2 \
  -D "security.ssl.internal.keystore=$certs/jm.pem" >/dev/null
capped_port=$(ready_field capped rpc_port)
exec 4<>"/dev/tcp/127.0.0.1/$capped_port"
exec 5<>"/dev/tcp/127.0.0.1/$capped_port"
sleep 0.3
exec 6<>"/dev/tcp/127.0.0.1/$capped_port"
start=$(date +%s%N)
timeout 10 cat <&6 >/dev/null || fail "a connection past the cap stayed open 10 s"
echo "connection past the cap closed after $(( ($(date +%s%N) - start) / 1000000 )) ms"
exec 6<&-
grep -q "Refusing the connection from 127.0.0.1:[0-9]*: 2 connections are open (rpc.max-connections: 2)" \
  "$WORK/capped.log" || fail "the refusal past the cap was not logged"
timeout 10 cat <&4 >/dev/null; timeout 10 cat <&5 >/dev/null
exec 4<&- 5<&-
flint list --timeout "5 s" "${client_tls[@]}" -m "127.0.0.1:$capped_port" >"$WORK/capped-list.log" 2>&1 ||
  { cat "$WORK/capped-list.log"; fail "the capped JobManager served no client after the strangers went"; }

# A proxy between the client and the JobManager records both directions.
python3 - "$port" "$WORK/proxy.bytes" >"$WORK/proxy.port" 2>"$WORK/proxy.log" <<'PY' &
import socket, sys, threading
target = int(sys.argv[1])
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8)
print(srv.getsockname()[1], flush=True)
def pump(a, b, out):
    while True:
        data = a.recv(65536)
        if not data:
            break
        out.write(data); out.flush(); b.sendall(data)
    b.close()
while True:
    c, _ = srv.accept()
    s = socket.create_connection(("127.0.0.1", target))
    out = open(sys.argv[2], "ab")
    threading.Thread(target=pump, args=(c, s, out), daemon=True).start()
    threading.Thread(target=pump, args=(s, c, out), daemon=True).start()
PY
PIDS+=($!)
for _ in $(seq 1 50); do [[ -s "$WORK/proxy.port" ]] && break; sleep 0.1; done
proxy_port=$(cat "$WORK/proxy.port")
flint list -a -m "127.0.0.1:$proxy_port" "${client_tls[@]}" >"$WORK/proxied-list.log" 2>&1 ||
  { cat "$WORK/proxied-list.log"; fail "listing through the proxy failed"; }
[[ -s "$WORK/proxy.bytes" ]] || fail "the proxy saw no traffic"
for plain in dispatcher list_jobs flint-cli "Streaming WordCount"; do
  grep -a -q "$plain" "$WORK/proxy.bytes" && fail "the proxy saw '$plain' in clear"
done
echo "proxy: $(wc -c <"$WORK/proxy.bytes") bytes, no plain text of the envelope"

# A connected TLS peer dies hard (kill -9: no close_notify): the others must not notice.
start_node tm3 "" taskmanager --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/tm1.pem"
NODES="jm tm1 tm2 stranger capped proxy tm3" # as started (the proxy is a PIDS entry too)
for _ in $(seq 1 100); do
  [[ $(grep -c "Registering TaskManager with ResourceID" "$WORK/jm.log") -ge 3 ]] && break; sleep 0.1
done
[[ $(grep -c "Registering TaskManager with ResourceID" "$WORK/jm.log") -eq 3 ]] || fail "a third TaskManager did not register"
tm3_id=$(ready_field tm3 resource_id)
[[ -n "$tm3_id" ]] || fail "no resource_id in tm3's ready line"
[[ "$(pid_of tm3)" == "$(ready_field tm3 pid)" ]] || fail "\$NODES does not list the nodes in the order they started"
kill -KILL "$(pid_of tm3)"
# The others are checked once the JobManager has dropped tm3 (its connection closes with the
# process), not before.
lost="Closing TaskExecutor connection task_executor/$tm3_id because"
for _ in $(seq 1 300); do grep -qF "$lost" "$WORK/jm.log" && break; sleep 0.1; done
grep -F "$lost" "$WORK/jm.log" || fail "the JobManager did not drop the killed TaskManager within 30 s"

# The other connections kept working: a second job, no TaskManager registered again.
flint run "${client_tls[@]}" -p 4 "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" \
  --output "$WORK/output2" >"$WORK/run2.log" 2>&1 || { cat "$WORK/run2.log"; fail "the second job failed"; }
check_wordcount "$WORK/input.txt" "$WORK/output2"
[[ $(grep -c "Registering TaskManager with ResourceID" "$WORK/jm.log") -eq 3 ]] || fail "a TaskManager had to register again"
[[ $(grep -c "Closing TaskExecutor connection" "$WORK/jm.log") -eq 1 ]] ||
  fail "the JobManager dropped another TaskManager besides the killed one"
grep -q "JobManager.*lost\|Close ResourceManager connection" "$WORK/tm1.log" "$WORK/tm2.log" &&
  fail "a TaskManager lost its connection while others were refused"

# Bad key files stop a node at start with a clear error.
expect_start_failure() {
  local what=$1
  shift
  if "$FLINT_BIN/flint-node" jobmanager --config "$WORK/flink-conf.yaml" -D jobmanager.rpc.port=0 "$@" \
    >"$WORK/bad.out" 2>"$WORK/bad.log"; then fail "a JobManager with $what started"; fi
  grep -h "error" "$WORK/bad.log" | tail -1
}
expect_start_failure "a keystore without a key" -D "security.ssl.internal.keystore=$certs/ca.pem"
grep -q "holds no private key" "$WORK/bad.log" || fail "no clear error for a keystore without a key"
expect_start_failure "a wrong passphrase" -D "security.ssl.internal.keystore=$WORK/locked/locked.pem" \
  -D "security.ssl.internal.key-password=wrong"
grep -q "readable with the given password" "$WORK/bad.log" || fail "no clear error for a wrong passphrase"
expect_start_failure "a missing keystore" -D "security.ssl.internal.keystore=$WORK/nope.pem"
grep -q "cannot read security.ssl.internal.keystore" "$WORK/bad.log" || fail "no clear error for a missing keystore"
echo "PASS"
