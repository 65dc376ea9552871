#!/usr/bin/env bash
# Savepoint round trip on real processes: WordCount -p 2 runs detached with the exactly-once file
# sink and exactly one periodic checkpoint (the minimal pause after it is an hour), which commits
# its first part files; then `flint savepoint` writes a savepoint holding the counts' keyed
# state, and `flint cancel` ends the job — no checkpoint after the savepoint commits anything
# past it; `flint run -s` starts the same program from it at -p 3, which rescales the key groups
# and the source splits, and finishes. The committed output of both runs together has one update
# per input word and the right counts. Then the bad inputs: a truncated _metadata, a savepoint
# with state of an operator the job lacks (without and with --allowNonRestoredState), a job that
# cannot take a savepoint.
. "$(dirname "$0")/lib.sh"

SLOTS=2 write_loopback_config "state.checkpoints.dir: $WORK/checkpoints"
NODES="jm tm1 tm2"
start_jobmanager
for tm in tm1 tm2; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml"; done
generate_text "${FLINT_SAVEPOINT_INPUT_BYTES:-60000000}" "$WORK/input.txt"
flint_action() { local action=$1; shift; "$FLINT_BIN/flint" "$action" --config "$WORK/flink-conf.yaml" "$@"; }

flint_action run -d -p 2 -D execution.checkpointing.interval=200ms -D execution.checkpointing.min-pause=1h \
  "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run1.log" 2>&1 \
  || { cat "$WORK/run1.log"; fail "run 1"; }
job=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run1.log")
[[ -n "$job" ]] || fail "no job id in $(cat "$WORK/run1.log")"
# The savepoint comes once checkpoint 1 has completed and both sink subtasks committed its part
# files: the counts have state by then.
committed_parts() { find "$WORK/output" -maxdepth 1 -type f -name 'part-*' -size +0 2>/dev/null | sort; }
for _ in $(seq 1 600); do
  grep -q "Completed checkpoint 1 for job $job" "$WORK/jm.log" && [[ $(committed_parts | wc -l) -ge 2 ]] && break
  sleep 0.1
done
grep -q "Completed checkpoint 1 for job $job" "$WORK/jm.log" || fail "checkpoint 1 of the first run never completed"
[[ $(committed_parts | wc -l) -ge 2 ]] || { ls -la "$WORK/output"; fail "the first run's checkpoint committed no part file of each sink"; }
flint_action savepoint "$job" "$WORK/savepoints" >"$WORK/savepoint.log" 2>&1 || { cat "$WORK/savepoint.log"; fail "flint savepoint failed"; }
cat "$WORK/savepoint.log"
path=$(sed -n 's/^Savepoint completed. Path: file:\(.*\)$/\1/p' "$WORK/savepoint.log")
[[ -f "$path/_metadata" ]] || fail "no _metadata in '$path'"
[[ "$(basename "$path")" == savepoint-${job:0:6}-* ]] || fail "savepoint directory named $(basename "$path")"
flint_action cancel "$job" >/dev/null 2>&1 || true
# The savepoint holds the keyed counts of both subtasks in files of their own
# (`<operator id>-<subtask>-<attempt>`, beside _metadata, which keeps the operator state), each
# at least 1 KiB: hundreds of counted words.
keyed_files() {
  find "$path" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{32}-[0-9]+-[0-9]+(-keyed)?' "$@"
}
keyed=$(keyed_files -size +1k | wc -l)
[[ $keyed -ge 2 ]] || { ls -la "$path"; fail "the savepoint holds $keyed keyed state files of 1 KiB or more, expected 2"; }
echo "savepoint: $(keyed_files -printf '%f %s bytes  ')"
# What the first run committed (once it is over) stays, beside the second run's files.
for _ in $(seq 1 100); do flint_action status "$job" 2>/dev/null | grep -q "is CANCELED" && break; sleep 0.1; done
flint_action status "$job" | grep -q "is CANCELED" || fail "the first run was not cancelled"
committed_parts >"$WORK/run1.parts"
[[ -s "$WORK/run1.parts" ]] || fail "the first run committed no output"
echo "first run: $(wc -l <"$WORK/run1.parts") committed part files, $(cat $(cat "$WORK/run1.parts") | wc -l) updates"

flint_action run -p 3 -s "$path" -D execution.checkpointing.interval=200ms \
  "$FLINT_JOBS/wordcount.so" --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run2.log" 2>&1 \
  || { cat "$WORK/run2.log"; fail "run 2 from the savepoint failed"; }
grep -q "Restoring job [0-9a-f]* from Savepoint [0-9]* @ [0-9]* for [0-9a-f]* located at $path" "$WORK/jm.log" \
  || fail "the second run did not restore the savepoint"
while read -r part; do [[ -s "$part" ]] || fail "the first run's $part is gone after the second run"; done <"$WORK/run1.parts"
# The savepoint was taken mid-way: the second run counted the rest of the input.
committed_parts | grep -v -x -F -f "$WORK/run1.parts" >"$WORK/run2.parts" ||
  fail "the second run committed nothing: the first one had counted everything before its savepoint"
echo "second run: $(wc -l <"$WORK/run2.parts") committed part files, $(cat $(cat "$WORK/run2.parts") | wc -l) updates"
check_wordcount "$WORK/input.txt" "$WORK/output"

# A truncated _metadata: the job does not start, and the error names the file.
mkdir -p "$WORK/broken"
head -c 20 "$path/_metadata" >"$WORK/broken/_metadata"
if flint_action run -s "$WORK/broken" "$FLINT_JOBS/wordcount.so" >"$WORK/run3.log" 2>&1; then
  fail "a job started from a truncated _metadata"
fi
grep -q "$WORK/broken/_metadata" "$WORK/run3.log" "$WORK/jm.log" || { cat "$WORK/run3.log"; fail "the error does not name the file"; }
echo "truncated _metadata refused: $(grep -h -m1 -o "Cannot read checkpoint metadata[^.]*" "$WORK/run3.log" "$WORK/jm.log" | head -1)"

# Another program (endless.so: a sequence, no file source, no file sink) cannot take the
# savepoint's state of WordCount's operators...
if flint_action run -s "$path" "$FLINT_JOBS/endless.so" >"$WORK/run4.log" 2>&1; then
  fail "state of a missing operator was accepted without --allowNonRestoredState"
fi
grep -q "allowNonRestoredState" "$WORK/run4.log" || { cat "$WORK/run4.log"; fail "no --allowNonRestoredState hint"; }
echo "missing operators refused: $(grep -m1 -o "Cannot map checkpoint/savepoint state for operator [0-9a-f]*" "$WORK/run4.log")"
# ...unless told to skip it: then the check lets it start. (Its source has no uid and sits where
# WordCount's does, so both get the same operator id, as in Flink: restoring the text source's
# position into the sequence source then fails the task with a clear error — the reason Flink
# asks for uids on stateful operators.)
flint_action run -d -n -s "$path" "$FLINT_JOBS/endless.so" >"$WORK/run5.log" 2>&1 \
  || { cat "$WORK/run5.log"; fail "--allowNonRestoredState did not let the job be submitted"; }
job5=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run5.log")
for _ in $(seq 1 100); do
  grep -q "Starting job $job5 from savepoint $path (allowing non restored state)" "$WORK/jm.log" && break
  sleep 0.1
done
grep -q "Starting job $job5 from savepoint $path (allowing non restored state)" "$WORK/jm.log" \
  || fail "the job with non-restored state did not start from the savepoint"
flint_action cancel "$job5" >/dev/null 2>&1 || true

# A checkpoint directory that cannot be made: the job does not start, the error names it.
if flint_action run -D execution.checkpointing.interval=1s -D "state.checkpoints.dir=$WORK/input.txt/checkpoints" \
    "$FLINT_JOBS/wordcount.so" >"$WORK/run6.log" 2>&1; then
  fail "a job started with an unusable checkpoint directory"
fi
grep -q "state.checkpoints.dir.*$WORK/input.txt/checkpoints" "$WORK/run6.log" \
  || { cat "$WORK/run6.log"; fail "the error does not name the checkpoint directory"; }
echo "unusable checkpoint directory refused"

# flint stop: a final savepoint, then the job FINISHES (its sources end after the barrier).
flint_action run -d "$FLINT_JOBS/endless.so" >"$WORK/run7.log" 2>&1 || { cat "$WORK/run7.log"; fail "run 7"; }
job7=$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$WORK/run7.log")
for _ in $(seq 1 100); do
  flint_action status "$job7" 2>/dev/null | grep -q "is RUNNING" && break
  sleep 0.1
done
flint_action stop --savepointPath "$WORK/savepoints" "$job7" >"$WORK/stop.log" 2>&1 \
  || { cat "$WORK/stop.log"; fail "flint stop failed"; }
grep -q "^Suspending job \"$job7\" with a savepoint.$" "$WORK/stop.log" || fail "no Suspending line"
grep -q "^Savepoint completed. Path: file:$WORK/savepoints/savepoint-" "$WORK/stop.log" || fail "no savepoint path"
for _ in $(seq 1 100); do
  flint_action status "$job7" 2>/dev/null | grep -q "is FINISHED" && break
  sleep 0.1
done
flint_action status "$job7" | grep -q "is FINISHED" || fail "the stopped job did not finish"
echo "stop with savepoint: $(grep Path "$WORK/stop.log"), job FINISHED"
echo "PASS"
