#!/usr/bin/env bash
# Makes the certificates of a Flint cluster with mutual TLS (security.ssl.internal.*):
#   deploy/gen-certs.sh DIR NAME... [--client NAME...]
# NAMEs before --client are nodes (JobManagers, TaskManagers: extendedKeyUsage serverAuth and
# clientAuth); NAMEs after it are clients (the CLI of a user: clientAuth only). A client
# certificate can submit, list, cancel and savepoint jobs, but a node refuses it as a
# TaskManager or JobManager, as a slot offer, or as a peer to connect to.
# DIR/ca.pem          the cluster CA's certificate: every node's security.ssl.internal.truststore
# DIR/ca-key.pem      the CA's private key (keep it away from the nodes; re-run to add names)
# DIR/NAME.pem        NAME's certificate signed by the CA, followed by its private key: one
#                     node's or client's security.ssl.internal.keystore
# An existing CA in DIR is reused, so names can be added later. With GEN_CERTS_PASSWORD set,
# the NAME keys are encrypted with it (security.ssl.internal.key-password). Days of validity:
# GEN_CERTS_DAYS (default 365). Needs `openssl` (deploy/install-deps.sh installs it).
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DIR NAME... [--client NAME...]" >&2; exit 2; }
dir=$1
shift
days=${GEN_CERTS_DAYS:-365}
mkdir -p "$dir"
umask 077
if [[ ! -f "$dir/ca.pem" || ! -f "$dir/ca-key.pem" ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
    -subj "/CN=Flint cluster CA" -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" 2>/dev/null
  echo "CA: $dir/ca.pem"
fi
client=0
for name in "$@"; do
  if [[ "$name" == --client ]]; then
    client=1
    continue
  fi
  [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "gen-certs.sh: bad name '$name'" >&2; exit 2; }
  work=$(mktemp -d)
  if [[ $client == 1 ]]; then
    subject="/O=Flint client/CN=$name"
    usage=clientAuth
  else
    subject="/O=Flint node/CN=$name"
    usage=serverAuth,clientAuth
  fi
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$subject" \
    -keyout "$work/key.pem" -out "$work/req.pem" 2>/dev/null
  printf 'subjectAltName=DNS:%s\nextendedKeyUsage=%s\n' "$name" "$usage" >"$work/ext"
  openssl x509 -req -in "$work/req.pem" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" \
    -CAcreateserial -days "$days" -extfile "$work/ext" -out "$work/cert.pem" 2>/dev/null
  if [[ -n "${GEN_CERTS_PASSWORD:-}" ]]; then
    openssl pkey -in "$work/key.pem" -aes256 -passout env:GEN_CERTS_PASSWORD -out "$work/enc.pem"
    mv "$work/enc.pem" "$work/key.pem"
  fi
  cat "$work/cert.pem" "$work/key.pem" >"$dir/$name.pem"
  rm -rf "$work"
  fingerprint=$(openssl x509 -in "$dir/$name.pem" -noout -fingerprint -sha256 | cut -d= -f2)
  echo "$name ($([[ $client == 1 ]] && echo client || echo node)): $dir/$name.pem $fingerprint"
done
