#!/usr/bin/env bash
# Runs one ZooKeeper server for Flint's high availability as a plain java process (no zkServer.sh,
# no system service): on 127.0.0.1:PORT, with its configuration, data, pid and log in DIR.
#
#   deploy/zookeeper.sh start DIR PORT   writes DIR/zoo.cfg, starts the server, waits until it serves
#   deploy/zookeeper.sh stop DIR [PORT]  SIGTERMs the pid in DIR/zookeeper.pid and waits for its exit
#
# Files: DIR/zoo.cfg, DIR/log4j.properties, DIR/data/ (snapshots and logs: keep it to keep the sessions and znodes),
# DIR/zookeeper.pid, DIR/zookeeper.log. Both commands are idempotent: starting a server that
# already serves from DIR, or stopping one that is not running, succeeds and says so.
#
# Environment: ZK_TICK_TIME (ms, default 2000; tests use 500), ZK_JAVA (default: java on PATH),
# ZK_CLASSPATH (default: Debian's libzookeeper-java jars), ZK_JVM_OPTS (default -Xmx512m),
# ZK_START_TIMEOUT (s, default 20), ZK_STOP_TIMEOUT (s, default 15, then SIGKILL).
# Install the server with deploy/install-deps.sh (default-jre-headless libzookeeper-java).
set -euo pipefail

die() {
  echo "zookeeper.sh: $*" >&2
  exit 1
}

usage() {
  echo "usage: $0 start DIR PORT | stop DIR [PORT]" >&2
  exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
port=${3:-}
case "$cmd" in
  start) [ $# -eq 3 ] || usage ;;
  stop) [ $# -le 3 ] || usage ;;
  *) usage ;;
esac
[ -n "$dir" ] || die "DIR is empty"
if [ -n "$port" ] || [ "$cmd" = start ]; then
  [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] ||
    die "PORT must be a number in 1..65535, got '$port'"
fi

tick_time=${ZK_TICK_TIME:-2000}
[[ "$tick_time" =~ ^[0-9]+$ ]] && [ "$tick_time" -gt 0 ] ||
  die "ZK_TICK_TIME must be a positive number of milliseconds, got '$tick_time'"
java=${ZK_JAVA:-java}
classpath=${ZK_CLASSPATH:-/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar}
jvm_opts=${ZK_JVM_OPTS:--Xmx512m}
start_timeout=${ZK_START_TIMEOUT:-20}
stop_timeout=${ZK_STOP_TIMEOUT:-15}

pid_file=$dir/zookeeper.pid
log_file=$dir/zookeeper.log

# The pid in DIR/zookeeper.pid if that process is alive and is a ZooKeeper server (a stale file
# whose pid was reused by something else does not count).
running_pid() {
  [ -f "$pid_file" ] || return 1
  local pid
  pid=$(cat "$pid_file" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q QuorumPeerMain || return 1
  echo "$pid"
}

# What the server on 127.0.0.1:$1 answers to the four-letter word $2, or nothing.
# (`nc` is not installed; bash's /dev/tcp is.) `ruok` answers before the server serves: use srvr.
four_letter_word() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && printf "%s" "$1" >&3 && cat <&3' \
    "$1" "$2" 2>/dev/null || true
}

port_open() {
  timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null
}

serving() {
  four_letter_word "$1" srvr | grep -q '^Mode:'
}

start() {
  if pid=$(running_pid); then
    if serving "$port"; then
      echo "zookeeper.sh: already running (pid $pid) and serving on 127.0.0.1:$port"
      return 0
    fi
    die "a server from $dir is running (pid $pid) but does not serve on 127.0.0.1:$port" \
      "(another port? see $log_file)"
  fi
  command -v "$java" >/dev/null 2>&1 ||
    die "'$java' not found: install default-jre-headless (deploy/install-deps.sh) or set ZK_JAVA"
  local jar=${classpath%%:*}
  [ -f "$jar" ] || die "$jar not found: install libzookeeper-java (deploy/install-deps.sh) or set ZK_CLASSPATH"
  if port_open "$port"; then
    die "port $port on 127.0.0.1 is in use by another process"
  fi

  mkdir -p "$dir/data" || die "cannot create $dir/data"
  dir=$(cd "$dir" && pwd)
  pid_file=$dir/zookeeper.pid
  log_file=$dir/zookeeper.log
  cat >"$dir/zoo.cfg" <<EOF
# Written by deploy/zookeeper.sh; rewritten on every start.
tickTime=$tick_time
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,stat,mntr
EOF
  # The jars carry no log4j configuration: without one the server logs nothing at all.
  cat >"$dir/log4j.properties" <<EOF
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} [myid:%X{myid}] %-5p [%t:%C{1}@%L] - %m%n
EOF

  # shellcheck disable=SC2086 # ZK_JVM_OPTS is a list of options
  setsid "$java" $jvm_opts -Dlog4j.configuration="file:$dir/log4j.properties" -cp "$classpath" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" \
    >>"$log_file" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pid_file"

  local deadline=$((SECONDS + start_timeout))
  while ! serving "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pid_file"
      echo "zookeeper.sh: the server exited before serving; last lines of $log_file:" >&2
      tail -n 20 "$log_file" >&2
      exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      kill -TERM "$pid" 2>/dev/null || true
      rm -f "$pid_file"
      echo "zookeeper.sh: not serving on 127.0.0.1:$port after ${start_timeout}s; last lines of $log_file:" >&2
      tail -n 20 "$log_file" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "zookeeper.sh: serving on 127.0.0.1:$port (pid $pid, dir $dir)"
}

stop() {
  local pid
  if ! pid=$(running_pid); then
    rm -f "$pid_file"
    echo "zookeeper.sh: not running (no live server in $pid_file)"
    return 0
  fi
  kill -TERM "$pid"
  local deadline=$((SECONDS + stop_timeout))
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      echo "zookeeper.sh: pid $pid did not exit ${stop_timeout}s after SIGTERM; sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    sleep 0.1
  done
  rm -f "$pid_file"
  echo "zookeeper.sh: stopped (pid $pid)"
}

"$cmd"
