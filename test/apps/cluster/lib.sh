# Shared by the real-process cluster tests (sourced). Each test gets its own work dir, ports and
# processes, and stops everything it started on exit, whatever happened. The work dir is removed
# after a pass unless FLINT_KEEP_WORK is set.
set -euo pipefail

: "${FLINT_BIN:?FLINT_BIN (build/bin) must be set}"
: "${FLINT_JOBS:?FLINT_JOBS (build/jobs) must be set}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/flint-cluster-test.XXXXXX")
PIDS=()
CLEANUPS=()

cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  for c in "${CLEANUPS[@]}"; do eval "$c" || true; done
  # Keyed state backends' local directories of the nodes (a killed node cannot remove its own).
  for pid in "${PIDS[@]}"; do rm -rf "${TMPDIR:-/tmp}/flint-state-$pid-"*; done
  if [[ $status -ne 0 ]]; then
    echo "--- logs of the failed test ($WORK) ---"
    for f in "$WORK"/*.log; do [[ -f "$f" ]] && { echo "== $f"; tail -n 40 "$f"; }; done
  elif [[ -n "${FLINT_KEEP_WORK:-}" ]]; then
    echo "(kept $WORK)"
  else
    rm -rf "$WORK"
  fi
  exit $status
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# Starts `flint-node ROLE ARGS...` in the background (prefix with PREFIX, e.g. an `ip netns exec`),
# logging to $WORK/NAME.log; waits for its ready line and prints it. The node ignores SIGHUP, as
# deploy/flint-daemon.sh's nohup does: a test run from a shell that has exited (a soak left
# running in the background) leaves its process group orphaned, and the kernel hangs up every
# process of an orphaned group as soon as one is stopped — the node a test freezes with kill -STOP
# died of it instead of staying frozen.
start_node() {
  local name=$1 prefix=$2 role=$3
  shift 3
  (trap '' HUP; exec $prefix "$FLINT_BIN/flint-node" "$role" "$@") >"$WORK/$name.out" \
    2>"$WORK/$name.log" </dev/null &
  PIDS+=($!)
  local pid=$!
  for _ in $(seq 1 300); do
    if grep -q "^flint-node ready" "$WORK/$name.out" 2>/dev/null; then
      grep -m1 "^flint-node ready" "$WORK/$name.out" | tee "$WORK/$name.ready"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { cat "$WORK/$name.log" >&2; fail "$name exited before it was ready"; }
    sleep 0.1
  done
  fail "$name was not ready within 30 s"
}

# A loopback port nothing listens on now (checked by connecting; for scripts that need a fixed
# JobManager port, e.g. start-cluster.sh's TaskManagers).
unused_port() {
  # Below the kernel's ephemeral range where it leaves room: a port in that range can be taken
  # as the local end of any outgoing connection between this check and the server's bind (seen:
  # ZooKeeper's "Address already in use" in a soak).
  local p low=32768 span=30000
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
  if [ "$low" -gt 21024 ]; then span=$((low - 20000)); fi
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % span))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  fail "no unused port found"
}

# A field of a node's ready line: ready_field jm rpc_port.
ready_field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$WORK/$1.ready"; }

# Writes $WORK/flink-conf.yaml for a loopback cluster whose JobManager listens on an ephemeral
# port; after start_jobmanager the TaskManagers and the client read the bound port from it.
# SLOTS sets taskmanager.numberOfTaskSlots (default 2); arguments are further lines.
write_loopback_config() {
  cat >"$WORK/flink-conf.yaml" <<CONF
jobmanager.rpc.address: 127.0.0.1
jobmanager.rpc.port: 0
taskmanager.host: 127.0.0.1
taskmanager.numberOfTaskSlots: ${SLOTS:-2}
blob.storage.directory: $WORK/blobs
rest.bind-address: 127.0.0.1
rest.port: 0
CONF
  printf '%s\n' "$@" >>"$WORK/flink-conf.yaml"
}
start_jobmanager() {
  start_node jm "" jobmanager --config "$WORK/flink-conf.yaml"
  sed -i "s/^jobmanager.rpc.port: 0$/jobmanager.rpc.port: $(ready_field jm rpc_port)/" "$WORK/flink-conf.yaml"
}

# A few MB of deterministic text: Zipf-like words with mixed case, digits, '_' and punctuation.
generate_text() {
  local bytes=$1 out=$2
  awk -v bytes="$bytes" 'BEGIN {
    srand(20261129);
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    for (i = 0; i < 3000; i++) { w = ""; n = 1 + int(rand() * 9);
      for (k = 0; k < n; k++) w = w substr(letters, 1 + int(rand() * 63), 1); vocab[i] = w }
    split(" |, |--|; |'"'"'|!  |\t| ", seps, "|");
    size = 0; line = "";
    while (size < bytes) {
      r = rand(); line = line vocab[int(r * r * r * 3000)] seps[1 + int(rand() * 8)];
      if (++on == 12) { print line; size += length(line) + 1; line = ""; on = 0 }
    }
  }' >"$out"
}

# The independent count: "word count" lines, sorted (a word is a run of [A-Za-z0-9_], lower-cased).
plain_count() {
  LC_ALL=C tr -cs 'A-Za-z0-9_' '\n' <"$1" | LC_ALL=C tr 'A-Z' 'a-z' | grep -v '^$' | LC_ALL=C sort | uniq -c \
    | awk '{print $2, $1}'
}

# Flint's result: the highest "(word,n)" per word over every visible file under $1 (a file, or a
# directory of subtask or part files; hidden in-progress files are not output), as sorted
# "word count" lines.
final_counts() {
  local path=$1
  local files
  if [[ -d "$path" ]]; then files=("$path"/*); else files=("$path"); fi
  cat "${files[@]}" | LC_ALL=C awk '
    /^\(.*,[0-9]+\)$/ { s = substr($0, 2, length($0) - 2); i = match(s, /,[0-9]+$/);
                        w = substr(s, 1, i - 1); n = substr(s, i + 1) + 0;
                        if (!(w in top) || n > top[w]) top[w] = n; next }
    { print "malformed line: " $0 > "/dev/stderr"; bad = 1 }
    END { for (w in top) print w, top[w]; exit bad }' | LC_ALL=C sort
}

# Fails unless Flint's output at $2 holds exactly the plain count of input $1, with one update line
# per input word.
check_wordcount() {
  local input=$1 output=$2
  plain_count "$input" >"$WORK/expected.txt"
  final_counts "$output" >"$WORK/actual.txt" || fail "malformed output in $output"
  if ! cmp -s "$WORK/expected.txt" "$WORK/actual.txt"; then
    # (|| true: under pipefail a differing diff would end the test before fail says why)
    { diff "$WORK/expected.txt" "$WORK/actual.txt" || true; } | head -20 >&2
    fail "counts differ from the independent count"
  fi
  local words updates
  words=$(awk '{s += $2} END {print s}' "$WORK/expected.txt")
  if [[ -d "$output" ]]; then updates=$(cat "$output"/* | wc -l); else updates=$(wc -l <"$output"); fi
  [[ "$words" -eq "$updates" ]] || fail "$updates updates for $words words"
  # No update twice: with the count of updates equal to the words and each word's highest count
  # right, every word has exactly the updates 1..n — no duplicate, no gap.
  local doubled
  if [[ -d "$output" ]]; then doubled=$(cat "$output"/* | LC_ALL=C sort | uniq -d | head -3)
  else doubled=$(LC_ALL=C sort "$output" | uniq -d | head -3); fi
  [[ -z "$doubled" ]] || fail "updates written twice: $doubled"
  echo "counts equal: $(wc -l <"$WORK/expected.txt") distinct words, $words words, one update each"
}

# Prints the first of the named nodes whose log shows a running task, waiting up to 30 s for
# one; fails the test (showing $WORK/run.log) if none does.
await_busy_node() {
  local n
  for _ in $(seq 1 300); do
    for n in "$@"; do
      if grep -q "switched from INITIALIZING to RUNNING" "$WORK/$n.log" 2>/dev/null; then echo "$n"; return 0; fi
    done
    sleep 0.1
  done
  cat "$WORK/run.log" >&2 || true
  fail "the job never ran on any of $*"
}

# Index into PIDS of the node named $1, from the order the nodes were started in ($NODES).
pid_of() {
  local i=0 n
  for n in $NODES; do [[ "$n" == "$1" ]] && { echo "${PIDS[$i]}"; return 0; }; i=$((i + 1)); done
  fail "no node named $1"
}

# Waits up to $2 seconds for the background `flint run` $1 to exit (the test fails with $3 if it
# does not), then prints $WORK/run.log and leaves its exit status in CLIENT_STATUS.
await_client() {
  local pid=$1 seconds=$2
  for _ in $(seq 1 $((seconds * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then cat "$WORK/run.log"; fail "$3"; fi
  CLIENT_STATUS=0
  wait "$pid" || CLIENT_STATUS=$?
  cat "$WORK/run.log"
}
