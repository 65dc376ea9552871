#!/usr/bin/env bash
# Exactly-once on real processes (Flink's TaskManagerProcessFailureStreamingRecoveryITCase): a
# JobManager and three one-slot TaskManagers (one spare), WordCount -p 2 from a text file that
# takes several seconds, checkpoints every 100 ms into state.checkpoints.dir, the exactly-once
# file sink. After KILL_AFTER checkpoints completed (first argument, default 2) a busy TaskManager
# is killed (SIGKILL); FLINT_STATE_BACKEND=rocksdb (and FLINT_INCREMENTAL=true) keeps the state
# in RocksDB; the job restores its latest checkpoint on the survivor and the spare,
# finishes, and the committed output has exactly one update per input word and the right counts.
. "$(dirname "$0")/lib.sh"
kill_after=${1:-2}

SLOTS=1 write_loopback_config "heartbeat.interval: 500 ms" "heartbeat.timeout: 10 s" \
  "restart-strategy.type: fixed-delay" "restart-strategy.fixed-delay.attempts: 3" \
  "restart-strategy.fixed-delay.delay: 0 ms" \
  "execution.checkpointing.interval: 100 ms" \
  "state.checkpoints.dir: $WORK/checkpoints" \
  ${FLINT_STATE_BACKEND:+"state.backend.type: $FLINT_STATE_BACKEND"} \
  ${FLINT_INCREMENTAL:+"state.backend.incremental: $FLINT_INCREMENTAL"}
NODES="jm tm1 tm2 tm3"
start_jobmanager
for tm in tm1 tm2 tm3; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done

generate_text "${FLINT_FAILOVER_INPUT_BYTES:-100000000}" "$WORK/input.txt"
# RocksDB with incremental checkpoints: each completed checkpoint is subsumed by the next one (its
# directory deleted), so a watcher keeps a copy of every chk-<n>/_metadata it sees, to show at the
# end what each checkpoint referred to.
rocksdb_incremental=false
[[ "${FLINT_STATE_BACKEND:-}" == rocksdb && "${FLINT_INCREMENTAL:-}" == true ]] && rocksdb_incremental=true
if $rocksdb_incremental; then
  mkdir -p "$WORK/captured"
  (
    while :; do
      for m in "$WORK"/checkpoints/*/chk-*/_metadata; do
        n=$(basename "$(dirname "$m")")
        [[ -f "$m" && ! -e "$WORK/captured/$n" ]] || continue
        cp "$m" "$WORK/captured/.$n" 2>/dev/null && mv "$WORK/captured/.$n" "$WORK/captured/$n"
      done
      sleep 0.02
    done
  ) &
  PIDS+=($!) # after the nodes: pid_of still finds them by their place in $NODES
  watcher=$!
fi
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 2 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 &
client=$!
for _ in $(seq 1 600); do
  grep -q "Completed checkpoint $kill_after for job" "$WORK/jm.log" 2>/dev/null && break
  kill -0 "$client" 2>/dev/null || { cat "$WORK/run.log"; fail "the job ended before checkpoint $kill_after"; }
  sleep 0.05
done
grep -q "Completed checkpoint $kill_after for job" "$WORK/jm.log" || fail "checkpoint $kill_after never completed"
victim=$(await_busy_node tm1 tm2 tm3)
kill -KILL "$(pid_of "$victim")"
echo "killed $victim after checkpoint $kill_after completed"

await_client "$client" 120 "flint run still waits 120 s after the kill"
[[ $CLIENT_STATUS -eq 0 ]] || fail "flint run exited $CLIENT_STATUS, expected 0"
grep -q "is no longer reachable" "$WORK/jm.log" || fail "the JobManager did not see the TaskManager go"
grep -E -q "Restoring job [0-9a-f]+ from Checkpoint [0-9]+ @ [0-9]+ for [0-9a-f]+ located at $WORK/checkpoints/" \
  "$WORK/jm.log" || fail "the job did not restore a checkpoint"
grep -m1 "Restoring job" "$WORK/jm.log"
# The figure for the notes: from the JobManager noticing the loss to every task RUNNING again
# with its state restored (its log's clock).
awk '/is no longer reachable/ && !lost { lost = $2 } lost && /switched from INITIALIZING to RUNNING/ { back = $2 }
     function ms(t, p) { split(t, p, /[:,]/); return ((p[1] * 60 + p[2]) * 60 + p[3]) * 1000 + p[4] }
     END { if (lost && back) printf "recovery: %d ms from the loss to all tasks RUNNING again\n", ms(back) - ms(lost) }' \
  "$WORK/jm.log"
ls -a "$WORK/output" | grep -q '^\.part-' && echo "(hidden in-progress files of the killed attempt remain)"
check_wordcount "$WORK/input.txt" "$WORK/output"
job_dir=$(ls -d "$WORK"/checkpoints/*/ | head -1)
[[ -d "$job_dir/shared" && -d "$job_dir/taskowned" ]] || fail "no Flink layout under $job_dir"
if $rocksdb_incremental; then
  kill -TERM "$watcher" 2>/dev/null || true
  # What each captured checkpoint refers to, read from its _metadata (a Cap'n Proto message: the
  # paths of its files are plain text in it): RocksDB's SST files under shared/ (Flint's heap
  # backend writes one "-keyed" file per subtask instead) and the instance's MANIFEST in its own
  # directory.
  : >"$WORK/shared-refs.txt"
  manifests=0
  while read -r m; do
    n=${m##*/chk-}
    LC_ALL=C grep -a -o "$WORK/checkpoints/[0-9a-f]*/shared/[A-Za-z0-9._-]*\.sst" "$m" | sort -u \
      | sed "s|^|$n |" >>"$WORK/shared-refs.txt" || true
    LC_ALL=C grep -a -q "$WORK/checkpoints/[0-9a-f]*/chk-$n/[A-Za-z0-9._-]*-MANIFEST-[0-9]*" "$m" \
      && manifests=$((manifests + 1))
  done < <(ls -d "$WORK"/captured/chk-* | sort -V)
  captured=$(ls "$WORK/captured" | wc -l)
  with_ssts=$(cut -d' ' -f1 "$WORK/shared-refs.txt" | sort -u | wc -l)
  echo "captured $captured checkpoints: $with_ssts refer to SST files in shared/, $manifests to a RocksDB MANIFEST"
  [[ $with_ssts -ge 2 ]] || fail "fewer than 2 of $captured captured checkpoints refer to RocksDB SST files in shared/"
  [[ $manifests -ge 2 ]] || fail "fewer than 2 of $captured captured checkpoints hold a RocksDB MANIFEST"
  # Incremental: a later checkpoint refers to an SST file an earlier one uploaded, instead of
  # uploading it again.
  awk '{ ids[$2] = n[$2]++ ? ids[$2] " " $1 : $1 }
       END { for (f in n) if (n[f] > 1) print n[f], f, "in checkpoints", ids[f] }' \
    "$WORK/shared-refs.txt" | sort -rn >"$WORK/reused.txt"
  [[ -s "$WORK/reused.txt" ]] || fail "no checkpoint re-used an SST file of an earlier one (each uploaded its own)"
  echo "$(wc -l <"$WORK/reused.txt") SST files re-used by later checkpoints, most referenced first:"
  head -3 "$WORK/reused.txt"
fi
echo "PASS"
