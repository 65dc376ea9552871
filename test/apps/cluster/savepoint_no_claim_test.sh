#!/usr/bin/env bash
# Restore modes on real processes with RocksDB incremental checkpoints: WordCount -p 2 stops with
# a savepoint (flint stop), then runs twice from that same savepoint in NO_CLAIM mode (the
# default), each run long enough for several checkpoints to subsume each other and to end. The
# savepoint directory — every file, its size and its SHA-256 — is the same after both runs (the
# jobs never refer to its SST files, so nothing of it is deleted when their checkpoints are
# subsumed or when they end), and each run's output with the first run's is exact. Then a run in
# CLAIM mode owns another savepoint of the first run and deletes it once a checkpoint subsumes it.
. "$(dirname "$0")/lib.sh"

SLOTS=2 write_loopback_config "state.checkpoints.dir: $WORK/checkpoints" \
  "state.backend.type: rocksdb" "state.backend.incremental: true"
NODES="jm tm1"
start_jobmanager
start_node tm1 "" taskmanager --config "$WORK/flink-conf.yaml"
# Long enough for several checkpoints every 100 ms with RocksDB's cache (20 MB ended in 0.25 s).
generate_text "${FLINT_NO_CLAIM_INPUT_BYTES:-80000000}" "$WORK/input.txt"
flint_action() { local action=$1; shift; "$FLINT_BIN/flint" "$action" --config "$WORK/flink-conf.yaml" "$@"; }
job_of() { sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$1"; }
completed_checkpoints() { grep -c "Completed checkpoint [0-9]* for job $1" "$WORK/jm.log" || true; }
# Every file of a directory with its size and hash, sorted.
listing() { (cd "$1" && find . -type f -printf '%P %s ' -exec sh -c 'sha256sum <"$1" | cut -c1-64' _ {} \; | LC_ALL=C sort); }

flint_action run -d -p 2 -D execution.checkpointing.interval=200ms \
  "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" --output "$WORK/out1" >"$WORK/run1.log" 2>&1 \
  || { cat "$WORK/run1.log"; fail "run 1"; }
job1=$(job_of "$WORK/run1.log")
[[ -n "$job1" ]] || fail "no job id in $(cat "$WORK/run1.log")"
for _ in $(seq 1 600); do [[ $(completed_checkpoints "$job1") -ge 2 ]] && break; sleep 0.05; done
[[ $(completed_checkpoints "$job1") -ge 2 ]] || fail "the first run completed fewer than 2 checkpoints"
# An intermediate savepoint first, for the CLAIM run at the end.
flint_action savepoint "$job1" "$WORK/claimable" >"$WORK/claimable.log" 2>&1 \
  || { cat "$WORK/claimable.log"; fail "flint savepoint failed"; }
claimable=$(sed -n 's/^Savepoint completed. Path: file:\(.*\)$/\1/p' "$WORK/claimable.log")
[[ -f "$claimable/_metadata" ]] || fail "no _metadata in '$claimable'"
flint_action stop --savepointPath "$WORK/savepoints" "$job1" >"$WORK/stop.log" 2>&1 \
  || { cat "$WORK/stop.log"; fail "flint stop failed"; }
savepoint=$(sed -n 's/^Savepoint completed. Path: file:\(.*\)$/\1/p' "$WORK/stop.log")
[[ -f "$savepoint/_metadata" ]] || fail "no _metadata in '$savepoint'"
for _ in $(seq 1 100); do flint_action status "$job1" 2>/dev/null | grep -q "is FINISHED" && break; sleep 0.1; done
# RocksDB ran: the savepoint holds its SST files.
ssts=$(find "$savepoint" -maxdepth 1 -name '*.sst' | wc -l)
[[ $ssts -ge 2 ]] || { ls -la "$savepoint"; fail "the savepoint holds $ssts RocksDB SST files"; }
listing "$savepoint" >"$WORK/savepoint.before"
echo "savepoint: $(wc -l <"$WORK/savepoint.before") files, $ssts SSTs, $(du -sb "$savepoint" | cut -f1) bytes"

for run in 2 3; do
  flint_action run -p 2 -s "$savepoint" -D execution.checkpointing.interval=100ms \
    "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" --output "$WORK/out$run" >"$WORK/run$run.log" 2>&1 \
    || { cat "$WORK/run$run.log"; fail "run $run from the savepoint failed"; }
  job=$(job_of "$WORK/run$run.log")
  grep -q "Starting job $job from savepoint $savepoint .* in NO_CLAIM mode" "$WORK/jm.log" \
    || fail "run $run did not start from the savepoint in NO_CLAIM mode"
  n=$(completed_checkpoints "$job")
  [[ $n -ge 3 ]] || fail "run $run completed $n checkpoints; several must subsume each other"
  listing "$savepoint" >"$WORK/savepoint.after$run"
  if ! cmp -s "$WORK/savepoint.before" "$WORK/savepoint.after$run"; then
    { diff "$WORK/savepoint.before" "$WORK/savepoint.after$run" || true; } | head -20 >&2
    fail "run $run changed the savepoint it was restored from"
  fi
  mkdir -p "$WORK/both$run"
  cp "$WORK"/out1/part-* "$WORK/out$run"/part-* "$WORK/both$run/"
  check_wordcount "$WORK/input.txt" "$WORK/both$run"
  echo "run $run: $n checkpoints completed, savepoint unchanged"
done

# CLAIM: the job owns the intermediate savepoint and deletes it once its own checkpoint subsumes
# it (state.checkpoints.num-retained 1). (Its output overlaps the first run's: the first run went
# on past that savepoint.)
flint_action run -p 2 -s "$claimable" -claimMode CLAIM -D execution.checkpointing.interval=100ms \
  "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" --output "$WORK/out4" >"$WORK/run4.log" 2>&1 \
  || { cat "$WORK/run4.log"; fail "run 4 (CLAIM) failed"; }
job4=$(job_of "$WORK/run4.log")
grep -q "Starting job $job4 from savepoint $claimable .* in CLAIM mode" "$WORK/jm.log" \
  || fail "run 4 did not start in CLAIM mode"
grep -q "Discarded the claimed snapshot $claimable of job $job4" "$WORK/jm.log" \
  || fail "the claimed savepoint was not discarded"
[[ ! -e "$claimable" ]] || { ls -la "$claimable"; fail "the claimed savepoint is still there"; }
listing "$savepoint" | cmp -s - "$WORK/savepoint.before" || fail "the CLAIM run touched the other savepoint"
echo "CLAIM: the claimed savepoint was deleted once subsumed"
# A claim mode Flink does not know is refused before anything is submitted.
if flint_action run -s "$savepoint" --claimMode LEGACY "$FLINT_JOBS/wordcount.so" >"$WORK/run5.log" 2>&1; then
  fail "an unknown claim mode was accepted"
fi
grep -q "LEGACY" "$WORK/run5.log" || { cat "$WORK/run5.log"; fail "the error does not name the mode"; }
echo "PASS"
