# Sourced by the deploy scripts (Flink's config.sh): where Flint is, its configuration, pids, logs.
# Every path can be overridden from the environment, as with Flink's FLINK_* variables.

FLINT_HOME=${FLINT_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
FLINT_BIN_DIR=${FLINT_BIN_DIR:-$FLINT_HOME/build/bin}
FLINT_CONF_DIR=${FLINT_CONF_DIR:-${FLINK_CONF_DIR:-$FLINT_HOME/deploy}}
# As Flink 1.19+: Flink 2's config.yaml before flink-conf.yaml (flint-node looks it up the same way).
if [[ -f "$FLINT_CONF_DIR/config.yaml" ]]; then
  FLINT_CONF_FILE="$FLINT_CONF_DIR/config.yaml"
else
  FLINT_CONF_FILE="$FLINT_CONF_DIR/flink-conf.yaml"
fi
FLINT_LOG_DIR=${FLINT_LOG_DIR:-$FLINT_HOME/log}
FLINT_PID_DIR=${FLINT_PID_DIR:-/tmp}
FLINT_IDENT_STRING=${FLINT_IDENT_STRING:-$(id -un)}
FLINT_SSH_OPTS=${FLINT_SSH_OPTS:-"-o BatchMode=yes -o ConnectTimeout=10"}

# Prints the value of `key` in the configuration file, or $2 when unset. Reads flat
# `a.b.c: value` lines (flink-conf.yaml) and Flink 2's nested YAML (config.yaml's
# `a:` / `  b:` / `    c: value`), and a mix of both (`a:` / `  b.c: value`); the last
# occurrence wins. Comments and surrounding quotes are dropped; lists are not keys.
flint_conf_value() {
  local key=$1 default=$2 value=""
  if [[ -f "$FLINT_CONF_FILE" ]]; then
    value=$(awk -v want="$key" -v sq="'" '
      function clean(v,   q, shut) {
        sub(/^[ \t]+/, "", v)
        q = substr(v, 1, 1)
        if (q == "\"" || q == sq) {
          shut = index(substr(v, 2), q)
          if (shut > 0) return substr(v, 2, shut - 1)
        }
        sub(/(^|[ \t]+)#.*$/, "", v)
        sub(/[ \t]+$/, "", v)
        return v
      }
      /^[ \t]*(#|$)/ || /^[ \t]*-/ { next }
      {
        match($0, /^ */); indent = RLENGTH
        line = substr($0, indent + 1)
        colon = index(line, ":")
        if (colon == 0) next
        name = substr(line, 1, colon - 1); sub(/[ \t]+$/, "", name)
        v = clean(substr(line, colon + 1))
        while (depth > 0 && at[depth] >= indent) depth--
        full = (depth > 0 ? path[depth] "." : "") name
        if (v == "") { depth++; at[depth] = indent; path[depth] = full; next }
        if (full == want) found = v
      }
      END { print found }' "$FLINT_CONF_FILE")
  fi
  echo "${value:-$default}"
}

# Reads a hosts file (workers, masters): one host per line, '#' comments and blank lines skipped.
flint_read_hosts() {
  local file=$1
  [[ -f "$file" ]] || { echo "No hosts file at $file" >&2; return 1; }
  sed 's/#.*$//; s/[[:space:]]//g' "$file" | grep -v '^$' || true
}

# True for names that mean this machine: those need no ssh (as Flink's scripts treat localhost).
flint_is_local_host() {
  case "$1" in
    localhost | 127.0.0.1 | ::1 | "$(hostname)" | "$(hostname -f 2>/dev/null)") return 0 ;;
    *) return 1 ;;
  esac
}
