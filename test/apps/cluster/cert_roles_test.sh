#!/usr/bin/env bash
# Certificates with roles and pinned fingerprints on real processes (security.ssl.internal.*,
# certificates from deploy/gen-certs.sh, fingerprints in security.ssl.internal.cert.fingerprint):
# - a TaskManager started with a client's certificate (gen-certs.sh --client alice) does not
#   register: the ResourceManager refuses register_task_executor and logs it;
# - alice's client runs WordCount exact, lists, savepoints and cancels a job;
# - a certificate the cluster's CA signed but that is not pinned is refused at the handshake, as a
#   TaskManager and as a client, and logged with its fingerprint.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 77; }

certs=$WORK/certs
"$FLINT_SOURCE/deploy/gen-certs.sh" "$certs" jm tm1 mallory --client alice >"$WORK/gen-certs.log"
fingerprint() { openssl x509 -in "$certs/$1.pem" -noout -fingerprint -sha256 | cut -d= -f2; }
SLOTS=2 write_loopback_config "security.ssl.internal.enabled: true" \
  "security.ssl.internal.truststore: $certs/ca.pem" \
  "security.ssl.internal.cert.fingerprint: $(fingerprint jm),$(fingerprint tm1),$(fingerprint alice)"
start_node jm "" jobmanager --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/jm.pem"
sed -i "s/^jobmanager.rpc.port: 0$/jobmanager.rpc.port: $(ready_field jm rpc_port)/" "$WORK/flink-conf.yaml"
registered() { grep -c "Registering TaskManager with ResourceID" "$WORK/jm.log" || true; }
start_node tm1 "" taskmanager --config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/tm1.pem"
for _ in $(seq 1 100); do [[ $(registered) -ge 1 ]] && break; sleep 0.1; done
[[ $(registered) -eq 1 ]] || fail "tm1 did not register over TLS"

# A TaskManager with alice's (client) certificate: refused by method, logged, never registered.
start_node intruder "" taskmanager --config "$WORK/flink-conf.yaml" \
  -D "security.ssl.internal.keystore=$certs/alice.pem"
denied="Permission denied: register_task_executor at resource_manager"
for _ in $(seq 1 100); do grep -qF "$denied" "$WORK/jm.log" && break; sleep 0.1; done
grep -F "$denied" "$WORK/jm.log" | head -1
grep -qF "$denied" "$WORK/jm.log" || fail "a TaskManager with a client certificate was not refused"
[[ $(registered) -eq 1 ]] || fail "a TaskManager with a client certificate registered"

# A TaskManager and a client with a certificate the CA signed but that is not pinned.
start_node mallory "" taskmanager --config "$WORK/flink-conf.yaml" \
  -D "security.ssl.internal.keystore=$certs/mallory.pem"
flint() { "$FLINT_BIN/flint" "$@"; }
if flint list --timeout "3 s" --config "$WORK/flink-conf.yaml" \
  -D "security.ssl.internal.keystore=$certs/mallory.pem" >"$WORK/mallory-list.log" 2>&1; then
  fail "a client with an unpinned certificate could list jobs"
fi
unpinned="its certificate's SHA-256 fingerprint $(fingerprint mallory) is not in security.ssl.internal.cert.fingerprint"
for _ in $(seq 1 50); do grep -qF "$unpinned" "$WORK/jm.log" && break; sleep 0.1; done
grep -qF "$unpinned" "$WORK/jm.log" || fail "the unpinned certificate's refusal was not logged with its fingerprint"
[[ $(registered) -eq 1 ]] || fail "a TaskManager with an unpinned certificate registered"

# alice's client may do what Flink's CLI does.
alice=(--config "$WORK/flink-conf.yaml" -D "security.ssl.internal.keystore=$certs/alice.pem")
generate_text 2000000 "$WORK/input.txt"
flint run "${alice[@]}" -p 2 "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" \
  --output "$WORK/output" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; fail "alice's WordCount failed"; }
check_wordcount "$WORK/input.txt" "$WORK/output"
flint run -d "${alice[@]}" -p 1 "$FLINT_JOBS/cli_endless.so" >"$WORK/endless.log" 2>&1 \
  || { cat "$WORK/endless.log"; fail "alice could not submit a second job"; }
job=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/endless.log")
[[ -n "$job" ]] || fail "no job id in $(cat "$WORK/endless.log")"
for _ in $(seq 1 100); do flint list "${alice[@]}" 2>/dev/null | grep -q "$job.*RUNNING" && break; sleep 0.1; done
flint list "${alice[@]}" | grep "$job" | grep -q RUNNING || fail "alice could not list her running job"
flint savepoint "${alice[@]}" "$job" "$WORK/savepoints" >"$WORK/savepoint.log" 2>&1 \
  || { cat "$WORK/savepoint.log"; fail "alice could not take a savepoint"; }
flint cancel "${alice[@]}" "$job" >"$WORK/cancel.log" 2>&1 || { cat "$WORK/cancel.log"; fail "alice could not cancel"; }
for _ in $(seq 1 100); do flint list -a "${alice[@]}" 2>/dev/null | grep "$job" | grep -q CANCELED && break; sleep 0.1; done
flint list -a "${alice[@]}" | grep "$job" | grep -q CANCELED || fail "alice's job was not cancelled"
[[ $(registered) -eq 1 ]] || fail "a TaskManager registered again"
echo "client certificate: TaskManager refused, WordCount exact, list/savepoint/cancel served; unpinned certificate refused"
