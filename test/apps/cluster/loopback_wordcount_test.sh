#!/usr/bin/env bash
# One JobManager and two TaskManager processes on loopback; `flint run wordcount.so -p 4` counts
# equal an independent count, and `flint list` shows the job FINISHED.
. "$(dirname "$0")/lib.sh"

write_loopback_config
start_jobmanager
start_node tm1 "" taskmanager --config "$WORK/flink-conf.yaml"
start_node tm2 "" taskmanager --config "$WORK/flink-conf.yaml"

generate_text 3000000 "$WORK/input.txt"
"$FLINT_BIN/flint" run --config "$WORK/flink-conf.yaml" -p 4 "$FLINT_JOBS/wordcount.so" \
  --input "$WORK/input.txt" --output "$WORK/output" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; fail "flint run failed"; }
cat "$WORK/run.log"
grep -q "Job has been submitted with JobID" "$WORK/run.log" || fail "no submission line"
job=$(sed -n 's/.*Job has been submitted with JobID \([0-9a-f]*\).*/\1/p' "$WORK/run.log" | head -1)
check_wordcount "$WORK/input.txt" "$WORK/output"

"$FLINT_BIN/flint" list -a --config "$WORK/flink-conf.yaml" >"$WORK/list.log" 2>&1 || { cat "$WORK/list.log"; fail "flint list failed"; }
cat "$WORK/list.log"
grep "$job" "$WORK/list.log" | grep -q FINISHED || fail "flint list does not show job $job FINISHED"
echo "PASS"
