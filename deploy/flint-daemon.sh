#!/usr/bin/env bash
# Starts or stops one Flint node in the background (Flink's flink-daemon.sh):
#   flint-daemon.sh start|stop|stop-all (jobmanager|taskmanager) [flint-node args...]
# Each running node has a pid file $FLINT_PID_DIR/flint-$USER-<role>.pid (one pid per line, as
# Flink keeps several TaskManagers of one host in one file) and a log
# $FLINT_LOG_DIR/flint-$USER-<role>-<n>-<host>.log (and .out for what it prints). `stop` ends the newest instance, `stop-all`
# every one; both send SIGTERM and wait for a clean exit.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/flint-config.sh"

usage() { echo "Usage: flint-daemon.sh (start|stop|stop-all) (jobmanager|taskmanager) [args]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
operation=$1 role=$2
shift 2
case "$role" in jobmanager | taskmanager) ;; *) usage ;; esac

pid_file="$FLINT_PID_DIR/flint-$FLINT_IDENT_STRING-$role.pid"
mkdir -p "$FLINT_LOG_DIR" "$FLINT_PID_DIR"

alive() { kill -0 "$1" 2>/dev/null; }

stop_pid() {
  local pid=$1
  if ! alive "$pid"; then
    echo "No $role daemon (pid: $pid) is running anymore on $(hostname)."
    return 0
  fi
  echo "Stopping $role daemon (pid: $pid) on host $(hostname)."
  kill -TERM "$pid"
  for _ in $(seq 1 100); do alive "$pid" || return 0; sleep 0.1; done
  echo "$role daemon (pid: $pid) did not stop within 10 s; killing it." >&2
  kill -KILL "$pid" 2>/dev/null || true
}

case "$operation" in
  start)
    node="$FLINT_BIN_DIR/flint-node"
    [[ -x "$node" ]] || { echo "No flint-node at $node (build first, or set FLINT_BIN_DIR)." >&2; exit 1; }
    # Drop pids of instances that are gone, then number the new one after the live ones.
    if [[ -f "$pid_file" ]]; then
      live=$(while read -r p; do alive "$p" && echo "$p"; done <"$pid_file" || true)
      printf '%s\n' $live >"$pid_file"
    fi
    index=$(grep -c . "$pid_file" 2>/dev/null || true)
    log="$FLINT_LOG_DIR/flint-$FLINT_IDENT_STRING-$role-${index:-0}-$(hostname).log"
    echo "Starting $role daemon on host $(hostname)."
    # As Flink's: the log in <name>.log (REST serves it and its directory's files), what the
    # process prints in <name>.out.
    nohup "$node" "$role" --config "$FLINT_CONF_FILE" --log-file "$log" "$@" >"${log%.log}.out" 2>&1 </dev/null &
    echo $! >>"$pid_file"
    ;;
  stop)
    [[ -s "$pid_file" ]] || { echo "No $role daemon to stop on host $(hostname)."; exit 0; }
    pid=$(tail -n 1 "$pid_file")
    sed -i '$d' "$pid_file"
    stop_pid "$pid"
    ;;
  stop-all)
    [[ -s "$pid_file" ]] || { echo "No $role daemon to stop on host $(hostname)."; exit 0; }
    while read -r pid; do stop_pid "$pid"; done <"$pid_file"
    rm -f "$pid_file"
    ;;
  *) usage ;;
esac
