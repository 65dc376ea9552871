#!/usr/bin/env bash
# A small LAN of network namespaces on this machine, for multi-host tests (root only):
#
#   lan.sh up   NAME [HOSTS]   creates HOSTS (default 3) hosts NAME-h1..NAME-hN, each a namespace
#                              with loopback and one veth end 10.<a>.<b>.<i>/24, the other ends
#                              joined on a bridge in namespace NAME-lan; prints "host address"
#   lan.sh down NAME           deletes every namespace of NAME (the veths and bridge go with them)
#   lan.sh exec NAME I CMD...  runs CMD inside host I
#   lan.sh addr NAME I         prints host I's address
#
# Traffic stays inside: the bridge namespace has no route out, and nothing is attached to the
# machine's own interfaces. The subnet is derived from NAME so parallel harnesses do not collide.
set -euo pipefail

usage() { sed -n '2,12p' "$0" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
op=$1 name=$2
shift 2
[[ "$name" =~ ^[a-z0-9][a-z0-9-]{0,11}$ ]] || { echo "lan.sh: NAME must be 1-12 of [a-z0-9-]" >&2; exit 2; }

# 10.<a>.<b>.0/24 with a in 200..249, b in 0..255, from the name's checksum.
sum=$(printf '%s' "$name" | cksum | cut -d' ' -f1)
subnet="10.$((200 + sum % 50)).$(((sum / 50) % 256))"

host_ns() { echo "$name-h$1"; }
address() { echo "$subnet.$1"; }

case "$op" in
  up)
    hosts=${1:-3}
    [[ "$hosts" =~ ^[1-9][0-9]?$ ]] || { echo "lan.sh: HOSTS must be 1-99" >&2; exit 2; }
    if ! ip netns add "$name-lan" 2>/dev/null; then
      echo "lan.sh: cannot create network namespaces here (need root and CAP_SYS_ADMIN), or $name exists" >&2
      exit 3
    fi
    # Anything that fails below takes the whole LAN down again.
    trap '"$0" down "$name" >/dev/null 2>&1 || true' ERR
    ip -n "$name-lan" link add br0 type bridge
    ip -n "$name-lan" link set br0 up
    ip -n "$name-lan" link set lo up
    for i in $(seq 1 "$hosts"); do
      ns=$(host_ns "$i")
      ip netns add "$ns"
      ip -n "$ns" link set lo up
      # veth created inside the host namespace, its peer moved to the bridge namespace.
      ip -n "$ns" link add eth0 type veth peer name "p$i" netns "$name-lan"
      ip -n "$ns" addr add "$(address "$i")/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$name-lan" link set "p$i" master br0
      ip -n "$name-lan" link set "p$i" up
      echo "$ns $(address "$i")"
    done
    trap - ERR
    ;;
  down)
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^$name-(lan|h[0-9]+)$" || true); do
      ip netns delete "$ns"
    done
    ;;
  exec)
    [[ $# -ge 2 ]] || usage
    i=$1
    shift
    exec ip netns exec "$(host_ns "$i")" "$@"
    ;;
  addr)
    [[ $# -ge 1 ]] || usage
    address "$1"
    ;;
  *) usage ;;
esac
