#!/usr/bin/env bash
# Starts a standalone Flint cluster (Flink's start-cluster.sh): the JobManager on this host, then
# one TaskManager per line of $FLINT_CONF_DIR/workers — over ssh, except for entries naming this
# machine (localhost), which start directly. Extra arguments go to every flint-node.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/flint-config.sh"
daemon="$FLINT_HOME/deploy/flint-daemon.sh"

echo "Starting cluster."
"$daemon" start jobmanager "$@"

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
