#!/usr/bin/env bash
# Strangers' bytes on every port of a cluster, with TLS (the default) or without (argument
# "plain"): while WordCount runs, raw sockets send random bytes, a frame claiming 4 GiB, an HTTP
# request, 100 kB of zeros, a truncated TLS hello, an RPC handshake claiming 4 GiB and a truncated
# frame to the JobManager's RPC port and to a TaskManager's RPC and data ports. Each is refused
# with a logged reason — with TLS at the handshake, without it by the inbound guard before CAF
# reads a header (a short one after rpc.handshake-timeout) — every node stays up without
# allocating what a stranger claims, and the job finishes exact.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
mode=${1:-tls}

if [[ $mode == tls ]]; then
  command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }
  certs=$WORK/certs
  "$FLINT_SOURCE/deploy/gen-certs.sh" "$certs" jm tm1 tm2 client >/dev/null
  SLOTS=2 write_loopback_config "security.ssl.internal.enabled: true" \
    "security.ssl.internal.truststore: $certs/ca.pem" \
    "security.ssl.internal.handshake-timeout: 1 s"
  keystore() { echo "-D" "security.ssl.internal.keystore=$certs/$1.pem"; }
  refusals="TLS handshake (accept) with 127.0.0.1:[0-9]* refused\|its TLS handshake did not complete"
else
  SLOTS=2 write_loopback_config "rpc.handshake-timeout: 1 s"
  keystore() { :; }
  refusals="Closing the connection with 127.0.0.1:[0-9]*: \|The connection with 127.0.0.1:[0-9]* ended in the middle of a frame"
fi
NODES="jm tm1 tm2"
# shellcheck disable=SC2046
start_node jm "" jobmanager --config "$WORK/flink-conf.yaml" $(keystore jm)
sed -i "s/^jobmanager.rpc.port: 0$/jobmanager.rpc.port: $(ready_field jm rpc_port)/" "$WORK/flink-conf.yaml"
for tm in tm1 tm2; do
  # shellcheck disable=SC2046
  start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml" $(keystore "$tm")
done
jm_port=$(ready_field jm rpc_port)
tm_port=$(ready_field tm1 rpc_port)
data_port=$(ready_field tm1 data_port)

generate_text 60000000 "$WORK/input.txt"
# shellcheck disable=SC2046
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" $(keystore client) \
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
    # CAF's BASP header: operation, 2 padding bytes, flags, payload length, data, source, dest.
    "an RPC handshake claiming 4 GiB": b"\x01\x00\x00\x00\xff\xff\xff\xff" + b"\x00" * 24,
    "a truncated frame": b"\x01\x00\x00\x00\x00\x00\x00\x28" + b"\x00" * 34,
}
failed = False
for port in map(int, sys.argv[1:]):
    for name, data in payloads.items():
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(5)
        start = time.time()
        try:
            s.sendall(data)
            if name == "a truncated frame":
                s.shutdown(socket.SHUT_WR)
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
if [[ $mode == plain ]]; then
  # An idle connection: closed after the 1 s rpc.handshake-timeout.
  exec 3<>"/dev/tcp/127.0.0.1/$jm_port"
  timeout 10 cat <&3 >/dev/null || fail "an idle connection stayed open 10 s"
  exec 3<&-
  grep -q "its RPC handshake did not arrive within 1000 ms (rpc.handshake-timeout)" "$WORK/jm.log" ||
    fail "the idle connection's closing was not logged"
fi
for n in jm tm1 tm2; do kill -0 "$(pid_of $n)" 2>/dev/null || fail "$n died"; done
# Past 10 lines a second per reason the guard counts them in one line instead, written once that
# second is over (by its reaper): wait for the lines, bounded, before counting.
count_refusals() {
  refused=$(cat "$WORK"/jm.log "$WORK"/tm1.log | grep -c "$refusals" || true)
  suppressed=$(cat "$WORK"/jm.log "$WORK"/tm1.log |
    sed -n 's/.*Suppressed \([0-9]*\) similar lines about refused or closed connections.*/\1/p' |
    awk '{ n += $1 } END { print n + 0 }')
  refused=$((refused + suppressed))
}
for _ in $(seq 1 50); do
  count_refusals
  [[ $refused -ge 21 ]] && break
  sleep 0.1
done
echo "logged refusals: $refused ($suppressed of them in 'Suppressed' lines)"
[[ $refused -ge 21 ]] || fail "only $refused of 21 strangers' connections were logged"
# Nothing a stranger claimed was allocated: no node's peak memory reached 1 GiB.
for n in jm tm1 tm2; do
  peak_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$(pid_of $n)/status")
  echo "$n peak memory: $((peak_kb / 1024)) MiB"
  [[ $peak_kb -lt 1048576 ]] || fail "$n peaked at $((peak_kb / 1024)) MiB"
done

await_client "$client" 120 "flint run still waits 120 s"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS"
check_wordcount "$WORK/input.txt" "$WORK/output"
echo "PASS"
