#!/usr/bin/env bash
# Starts a standalone Flint cluster (Flink's start-cluster.sh): the JobManager on this host (with
# ZooKeeper HA: one per line of $FLINT_CONF_DIR/masters), then one TaskManager per line of
# $FLINT_CONF_DIR/workers — over ssh, except for entries naming this machine (localhost), which
# start directly. Extra arguments go to every flint-node.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/flint-config.sh"
daemon="$FLINT_HOME/deploy/flint-daemon.sh"

ha=$(flint_conf_value high-availability.type "$(flint_conf_value high-availability NONE)")
if [[ "${ha,,}" == "zookeeper" ]]; then
  # HA: one JobManager per line of $FLINT_CONF_DIR/masters (host[:webui-port], as Flink's file);
  # they elect their leader through ZooKeeper, each on a port of high-availability.jobmanager.port.
  masters=$(flint_read_hosts "$FLINT_CONF_DIR/masters")
  echo "Starting HA cluster with $(echo "$masters" | grep -c .) masters."
  for master in $masters; do
    host=${master%%:*}
    # host:port sets that JobManager's rest.port, as Flink's start-cluster.sh does.
    rest=()
    [[ "$master" == *:* ]] && rest=(-D "rest.port=${master##*:}")
    if flint_is_local_host "$host"; then
      "$daemon" start jobmanager --host "$host" "${rest[@]}" "$@"
    else
      ssh -n $FLINT_SSH_OPTS "$host" -- \
        "FLINT_HOME='$FLINT_HOME' FLINT_CONF_DIR='$FLINT_CONF_DIR' '$daemon' start jobmanager --host '$host' ${rest[*]} $*" &
    fi
  done
else
  echo "Starting cluster."
  "$daemon" start jobmanager "$@"
fi

workers=$(flint_read_hosts "$FLINT_CONF_DIR/workers")
for worker in $workers; do
  if flint_is_local_host "$worker"; then
    "$daemon" start taskmanager "$@"
  else
    # The same installation path on every host, as Flink assumes.
    ssh -n $FLINT_SSH_OPTS "$worker" -- \
      "FLINT_HOME='$FLINT_HOME' FLINT_CONF_DIR='$FLINT_CONF_DIR' '$daemon' start taskmanager $*" &
  fi
done
wait
