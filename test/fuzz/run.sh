#!/usr/bin/env bash
# test/fuzz/run.sh [SECONDS] [TARGET...]: runs each fuzz target (all when none is named) for
# SECONDS (default 10) from its seed corpus, then prints libFuzzer's final figures per target.
# New inputs go to $FLINT_FUZZ_DIR/corpus/<target>, crashes to $FLINT_FUZZ_DIR/artifacts/<target>/;
# the seeds in test/fuzz/corpus are only read. FLINT_FUZZ_DIR is the fuzz tree (default
# build/fuzz, which `ctest -L fuzz` builds). Exits 77 when a target is not built (ctest: skipped),
# 1 when one found a crash, a leak, a time-out or a sanitizer report.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tree="${FLINT_FUZZ_DIR:-$root/build/fuzz}"
seconds="${1:-10}"
shift $(($# > 0 ? 1 : 0))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(envelope protocol job_graph task_deployment_descriptor record_deserializer
           transport_messages state_codec config_yaml config_dynamic_properties)
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=0
summary=()
for t in "${targets[@]}"; do
  bin="$tree/bin/fuzz_$t"
  if [ ! -x "$bin" ]; then
    echo "run.sh: $bin is not built (ctest -L fuzz builds the fuzz tree)" >&2
    exit 77
  fi
  work="$tree/corpus/$t"
  artifacts="$tree/artifacts/$t/"
  mkdir -p "$work" "$artifacts"
  log="$tree/artifacts/$t.log"
  # The decoders of records and state bound every length by the bytes they were given: an input
  # of a few KiB that allocates 256 MiB at once, or grows the process past 512 MiB, is a bug.
  case "$t" in
    record_deserializer|state_codec) limits=(-rss_limit_mb=512 -malloc_limit_mb=256) ;;
    *) limits=(-rss_limit_mb=2048) ;;
  esac
  "$bin" -max_total_time="$seconds" -timeout=10 "${limits[@]}" -print_final_stats=1 \
    -artifact_prefix="$artifacts" "$work" "$here/corpus/$t" >"$log" 2>&1
  rc=$?
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
  # libFuzzer's last status line: "#<runs> DONE cov: <edges> ft: <features> corp: <inputs>/<size>".
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
  field() { sed -n "s/.* $1: \([^ ]*\).*/\1/p" <<<"$done_line"; }
  line=$(printf '%-27s %7s execs/s %9s runs  corpus %6s inputs/%-7s cov %5s  %s new' "$t" \
    "$(stat average_exec_per_sec)" "$(stat number_of_executed_units)" \
    "$(field corp | cut -d/ -f1)" "$(field corp | cut -d/ -f2)" "$(field cov)" \
    "$(stat new_units_added)")
  if [ $rc -ne 0 ]; then
    failed=1
    line="$line  FAILED (exit $rc): see $log"
    grep -m3 -E "ERROR:|runtime error:|SUMMARY:|Test unit written" "$log" >&2
  fi
  summary+=("$line")
done

printf '%s\n' "${summary[@]}"
exit $failed
