#!/usr/bin/env bash
# Strangers' bytes on every port of a TLS cluster: while WordCount runs, raw sockets send random
# bytes, a frame claiming 4 GiB, an HTTP request, 100 kB of zeros and a truncated TLS hello to
# the JobManager's RPC port and to a TaskManager's RPC and data ports. Each is refused at the
# handshake with a logged reason (the truncated hello after the handshake timeout), every node
# stays up, and the job finishes exact.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

certs=$WORK/certs
"$FLINT_SOURCE/deploy/gen-certs.sh" "$certs" jm tm1 tm2 client >/dev/null
SLOTS=2 write_loopback_config "security.ssl.internal.enabled: true" \
  "security.ssl.internal.truststore: $certs/ca.pem" \
  "security.ssl.internal.handshake-timeout: 1 s"
NODES="jm tm1 tm2"
start_node jm "" jobmanager --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/jm.pem"
sed -i "s/^jobmanager.rpc.port: 0$/jobmanager.rpc.port: $(ready_field jm rpc_port)/" "$WORK/flink-conf.yaml"
for tm in tm1 tm2; do
  start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/$tm.pem"
done
jm_port=$(ready_field jm rpc_port)
tm_port=$(ready_field tm1 rpc_port)
data_port=$(ready_field tm1 data_port)

generate_text 60000000 "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/client.pem" \
  -p 4 "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
await_busy_node tm1 tm2 >/dev/null

# Each payload on its own connection; the sender waits for the node to close it (at most 5 s).
python3 - "$jm_port" "$tm_port" "$data_port" >"$WORK/raw.log" 2>&1 <<'PY'
import os, socket, sys, time
payloads = {
    "random bytes": os.urandom(4096),
    "a frame claiming 4 GiB": b"\xff\xff\xff\xff" + b"\x00" * 60,
    "an HTTP request": b"GET / HTTP/1.1\r\nHost: flint\r\n\r\n",
    "100 kB of zeros": b"\x00" * 100000,
    "a truncated TLS hello": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
}
failed = False
for port in map(int, sys.argv[1:]):
    for name, data in payloads.items():
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(5)
        start = time.time()
        try:
            s.sendall(data)
            while s.recv(65536):
                pass
            print(f"port {port}: {name}: closed after {time.time() - start:.2f} s")
        except (ConnectionResetError, BrokenPipeError):
            print(f"port {port}: {name}: reset after {time.time() - start:.2f} s")
        except socket.timeout:
            print(f"port {port}: {name}: STILL OPEN after 5 s")
            failed = True
        s.close()
sys.exit(1 if failed else 0)
PY
status=$?
cat "$WORK/raw.log"
[[ $status -eq 0 ]] || fail "a node kept a stranger's connection open"
for n in jm tm1 tm2; do kill -0 "$(pid_of $n)" 2>/dev/null || fail "$n died"; done
refused=$(cat "$WORK"/jm.log "$WORK"/tm1.log | grep -c "TLS handshake (accept) with 127.0.0.1:[0-9]* refused\|its TLS handshake did not complete" || true)
echo "logged refusals: $refused"
[[ $refused -ge 15 ]] || fail "only $refused of 15 strangers' connections were logged"

await_client "$client" 120 "flint run still waits 120 s"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS"
check_wordcount "$WORK/input.txt" "$WORK/output"
echo "PASS"
