#!/usr/bin/env bash
# Stops the cluster start-cluster.sh started (Flink's stop-cluster.sh): the TaskManagers of every
# worker first, then the JobManager (with ZooKeeper HA: those of every masters line).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/flint-config.sh"
daemon="$FLINT_HOME/deploy/flint-daemon.sh"

workers=$(flint_read_hosts "$FLINT_CONF_DIR/workers")
stopped_local=false
for worker in $workers; do
  if flint_is_local_host "$worker"; then
    # One stop-all covers every local TaskManager, however many lines name this host.
    $stopped_local || "$daemon" stop-all taskmanager
    stopped_local=true
  else
    ssh -n $FLINT_SSH_OPTS "$worker" -- \
      "FLINT_HOME='$FLINT_HOME' FLINT_CONF_DIR='$FLINT_CONF_DIR' '$daemon' stop-all taskmanager" &
  fi
done
wait
ha=$(flint_conf_value high-availability.type "$(flint_conf_value high-availability NONE)")
if [[ "${ha,,}" == "zookeeper" && -f "$FLINT_CONF_DIR/masters" ]]; then
  stopped_local=false
  for master in $(flint_read_hosts "$FLINT_CONF_DIR/masters"); do
    host=${master%%:*}
    if flint_is_local_host "$host"; then
      $stopped_local || "$daemon" stop-all jobmanager
      stopped_local=true
    else
      ssh -n $FLINT_SSH_OPTS "$host" -- \
        "FLINT_HOME='$FLINT_HOME' FLINT_CONF_DIR='$FLINT_CONF_DIR' '$daemon' stop-all jobmanager" &
    fi
  done
  wait
else
  "$daemon" stop-all jobmanager
fi
