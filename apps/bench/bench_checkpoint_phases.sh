#!/usr/bin/env bash
# The phases of `flint-bench checkpoint`'s checkpoints, from uprobes on the bench binary (perf,
# Debian's linux-perf; run as root): per checkpoint and task, the barrier alignment (first barrier
# to release, Flink's checkpointAlignmentTime), the synchronous part (stream_task::
# perform_checkpoint: the operators' snapshots, closing the sink's part file, the barrier
# downstream), the asynchronous part (its upload closure on the upload thread) and within it
# write_keyed_state, and every fsync by the thread it blocks (the upload thread: the part file,
# the keyed state file; a task thread; elsewhere: the JobMaster's _metadata and chk-<n>).
#
#   apps/bench/bench_checkpoint_phases.sh BUILD/bin/flint-bench INPUT [checkpoint options...]
#
# Prints the bench's JSON line, then one line per phase: count, mean, median, max in ms. The
# probes are removed at the end. Flint's checkpoint statistics carry no per-task phases yet (the
# acknowledgement has no CheckpointMetrics): this is how docs/checkpoint_cost.md measured them.
set -euo pipefail
bench=${1:?usage: $0 FLINT_BENCH INPUT [options]}
input=${2:?usage: $0 FLINT_BENCH INPUT [options]}
shift 2
bench=$(readlink -f "$bench")
work=$(mktemp -d /tmp/flint-checkpoint-phases-XXXXXX)
group=flint_cp_$$
cleanup() {
  perf probe -q -d "${group}:*" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# name demangled-symbol-prefix [return]
probe() {
  local name=$1 symbol=$2 ret=${3:-}
  local addr
  addr=$(nm -C --defined-only "$bench" | grep -F " $symbol" | grep -v '\[clone' | head -1 | cut -d' ' -f1)
  if [[ -z $addr ]]; then
    echo "no symbol '$symbol' in $bench" >&2
    exit 1
  fi
  perf probe -q -x "$bench" -a "${group}:${name}=0x${addr#"${addr%%[!0]*}"}${ret}" >/dev/null
}
probe on_barrier 'flint::network::barrier_aligner::on_barrier('
probe release_all 'flint::network::barrier_aligner::release_all()'
probe sync 'flint::streaming::stream_task::perform_checkpoint('
probe sync_ret 'flint::streaming::stream_task::perform_checkpoint(' %return
probe upload 'flint::streaming::stream_task::perform_checkpoint(flint::network::checkpoint_barrier const&)::{lambda()#1}::operator()'
probe upload_ret 'flint::streaming::stream_task::perform_checkpoint(flint::network::checkpoint_barrier const&)::{lambda()#1}::operator()' %return
probe write_keyed 'flint::state::write_keyed_state('
probe write_keyed_ret 'flint::state::write_keyed_state(' %return

perf record -q -o "$work/perf.data" -e "${group}:*" -e syscalls:sys_enter_fsync \
  -e syscalls:sys_exit_fsync "$bench" checkpoint --input "$input" "$@"
perf script -i "$work/perf.data" -F tid,time,event 2>/dev/null >"$work/events.txt"

python3 - "$work/events.txt" <<'EOF'
import collections, re, statistics, sys

events = []
for line in open(sys.argv[1]):
    m = re.match(r'\s*(\d+)\s+([\d.]+):\s+\S+?:(\S+?)(?:__return)?:', line)
    if m:
        events.append((int(m.group(1)), float(m.group(2)), m.group(3)))
phases = collections.defaultdict(list)
opened, first_barrier, fsync_at, upload_at, fsyncs_in_upload = {}, {}, {}, {}, {}
aligning = set()  # task threads that align barriers: the downstream (reduce + sink) tasks
for tid, t, e in events:
    if e == 'sync':
        opened[('sync', tid)] = t
    elif e == 'sync_ret' and ('sync', tid) in opened:
        phases[('sync', tid)].append(t - opened.pop(('sync', tid)))
    elif e == 'on_barrier':
        first_barrier.setdefault(tid, t)
    elif e == 'release_all' and tid in first_barrier:
        aligning.add(tid)
        phases['alignment (first barrier to release)'].append(t - first_barrier.pop(tid))
    elif e == 'upload':
        upload_at[tid] = t
        fsyncs_in_upload[tid] = 0
    elif e == 'upload_ret' and tid in upload_at:
        kind = 'with files' if fsyncs_in_upload[tid] else 'nothing to write'
        phases['async part, ' + kind].append(t - upload_at.pop(tid))
    elif e == 'write_keyed':
        opened[('wk', tid)] = t
    elif e == 'write_keyed_ret' and ('wk', tid) in opened:
        phases['  write_keyed_state (its fsync included)'].append(t - opened.pop(('wk', tid)))
    elif e == 'sys_enter_fsync':
        fsync_at[tid] = t
    elif e == 'sys_exit_fsync' and tid in fsync_at:
        took = t - fsync_at.pop(tid)
        if ('wk', tid) in opened:
            fsyncs_in_upload[tid] += 1
            phases['  fsync: the keyed state file'].append(took)
        elif tid in upload_at:
            # The sink's work before the acknowledgement: its part file, then the directory.
            fsyncs_in_upload[tid] += 1
            phases[('upload fsync', fsyncs_in_upload[tid])].append(took)
        else:
            phases[('fsync', tid)].append(took)

def merged(prefix, pick):
    out = []
    for key, values in list(phases.items()):
        if isinstance(key, tuple) and key[0] == prefix and pick(key[1]):
            out += values
    return out

rows = [
    ('alignment (first barrier to release)', phases['alignment (first barrier to release)']),
    ('sync part, sources', merged('sync', lambda tid: tid not in aligning)),
    ('sync part, reduce + sink tasks', merged('sync', lambda tid: tid in aligning)),
    ('async part, nothing to write', phases['async part, nothing to write']),
    ('async part, with files', phases['async part, with files']),
    ('  fsync: the sink part file', merged('upload fsync', lambda n: n == 1)),
    ('  fsync: the sink directory (last commit)', merged('upload fsync', lambda n: n == 2)),
    ('  write_keyed_state (its fsync included)', phases['  write_keyed_state (its fsync included)']),
    ('  fsync: the keyed state file', phases['  fsync: the keyed state file']),
    ('fsync on a task thread', merged('fsync', lambda tid: tid in aligning)),
    ('fsync elsewhere (JobMaster: _metadata, chk dir)', merged('fsync', lambda tid: tid not in aligning)),
]
for name, values in rows:
    if not values:
        print(f'{name:50s} n=  0')
        continue
    ms = [1000 * v for v in values]
    print(f'{name:50s} n={len(ms):3d} mean={statistics.mean(ms):8.2f} median='
          f'{statistics.median(ms):8.2f} max={max(ms):8.2f} ms')
EOF
