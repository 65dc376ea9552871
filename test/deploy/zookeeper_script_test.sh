#!/usr/bin/env bash
# deploy/zookeeper.sh against a real server: start on a free loopback port in a temp dir, `srvr`
# serves, a second start is a no-op, a start on the busy port fails clearly, stop leaves no pid.
# Usage: zookeeper_script_test.sh PATH/TO/deploy/zookeeper.sh
set -euo pipefail
script=${1:?usage: $0 PATH/TO/zookeeper.sh}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

dir=$(mktemp -d -t flint-zk-script-XXXXXX)
cleanup() {
  "$script" stop "$dir" >/dev/null 2>&1 || true
  "$script" stop "$dir/other" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

port_open() { timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null; }
port=
for _ in $(seq 50); do
  candidate=$((20000 + RANDOM % 40000))
  if ! port_open "$candidate"; then
    port=$candidate
    break
  fi
done
[ -n "$port" ] || fail "no free loopback port found"

ZK_TICK_TIME=500 "$script" start "$dir" "$port" || fail "start"
[ -s "$dir/zookeeper.pid" ] || fail "no pid file"
pid=$(cat "$dir/zookeeper.pid")
grep -q '^tickTime=500$' "$dir/zoo.cfg" || fail "ZK_TICK_TIME not in zoo.cfg"

answer=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"; printf srvr >&3; cat <&3' "$port")
grep -q '^Mode: standalone' <<<"$answer" || fail "srvr answered: $answer"

"$script" start "$dir" "$port" | grep -q 'already running' || fail "second start is not a no-op"
[ "$(cat "$dir/zookeeper.pid")" = "$pid" ] || fail "second start changed the pid"

if out=$("$script" start "$dir/other" "$port" 2>&1); then
  fail "a start on a busy port succeeded"
fi
grep -q 'in use' <<<"$out" || fail "busy port error was: $out"

if "$script" start "$dir" notaport 2>/dev/null; then fail "a bad port was accepted"; fi

"$script" stop "$dir" || fail "stop"
if kill -0 "$pid" 2>/dev/null; then fail "pid $pid still alive after stop"; fi
[ ! -e "$dir/zookeeper.pid" ] || fail "pid file left behind"
"$script" stop "$dir" | grep -q 'not running' || fail "second stop is not a no-op"
echo "PASS"
