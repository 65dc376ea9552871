#!/usr/bin/env bash
# deploy/flint-config.sh's flint_conf_value reads a key from flink-conf.yaml's flat lines and from
# Flink 2's nested config.yaml alike, as flint-node does: the scripts then agree with the nodes
# on what the configuration says (high-availability.type decides how start-cluster.sh starts).
set -euo pipefail
FLINT_SOURCE=${FLINT_SOURCE:-$(cd "$(dirname "$0")/../../.." && pwd)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { # key default expected
  local got
  got=$(flint_conf_value "$1" "$2")
  [[ "$got" == "$3" ]] || fail "$1 in $FLINT_CONF_FILE: got '$got', expected '$3'"
}

export FLINT_CONF_DIR="$WORK/flat"
mkdir -p "$FLINT_CONF_DIR"
cat >"$FLINT_CONF_DIR/flink-conf.yaml" <<'CONF'
jobmanager.rpc.address: 10.0.0.1
# high-availability.type: ZOOKEEPER
high-availability.type: zookeeper # the leader comes from ZooKeeper
high-availability.type: NONE
CONF
. "$FLINT_SOURCE/deploy/flint-config.sh"
expect jobmanager.rpc.address localhost 10.0.0.1
expect high-availability.type x NONE
expect jobmanager.rpc.port 6123 6123

export FLINT_CONF_DIR="$WORK/nested"
mkdir -p "$FLINT_CONF_DIR"
cat >"$FLINT_CONF_DIR/config.yaml" <<'CONF'
# Flink 2's config.yaml
jobmanager:
  rpc:
    address: "jm.example"   # quoted
    port: 6124
  bind-host: 0.0.0.0
high-availability:
  type: zookeeper
  zookeeper:
    quorum: 'zk1:2181,zk2:2181'
env.java.opts.all: -Dx=1
taskmanager:
  memory.network.max: 64 mb
  numberOfTaskSlots: 2
rpc:
  port: 1
CONF
cat >"$FLINT_CONF_DIR/flink-conf.yaml" <<'CONF'
high-availability.type: NONE
CONF
. "$FLINT_SOURCE/deploy/flint-config.sh"
[[ "$FLINT_CONF_FILE" == "$FLINT_CONF_DIR/config.yaml" ]] || fail "config.yaml is not read first"
expect jobmanager.rpc.address localhost jm.example
expect jobmanager.rpc.port 6123 6124
expect jobmanager.bind-host x 0.0.0.0
expect high-availability.type NONE zookeeper
expect high-availability.zookeeper.quorum x zk1:2181,zk2:2181
expect taskmanager.memory.network.max x "64 mb"
expect taskmanager.numberOfTaskSlots 1 2
expect env.java.opts.all x -Dx=1
expect high-availability x x   # a map, not a value
expect rpc.port 0 1
expect port 0 0                # only full paths match
echo "deploy_conf_value: ok"
