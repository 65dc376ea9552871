# Sourced by the deploy scripts (Flink's config.sh): where Flint is, its configuration, pids, logs.
# Every path can be overridden from the environment, as with Flink's FLINK_* variables.

FLINT_HOME=${FLINT_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
FLINT_BIN_DIR=${FLINT_BIN_DIR:-$FLINT_HOME/build/bin}
FLINT_CONF_DIR=${FLINT_CONF_DIR:-$FLINT_HOME/deploy}
FLINT_LOG_DIR=${FLINT_LOG_DIR:-$FLINT_HOME/log}
FLINT_PID_DIR=${FLINT_PID_DIR:-/tmp}
FLINT_IDENT_STRING=${FLINT_IDENT_STRING:-$(id -un)}
FLINT_SSH_OPTS=${FLINT_SSH_OPTS:-"-o BatchMode=yes -o ConnectTimeout=10"}

# Prints the value of `key` in flink-conf.yaml (flat `key: value` lines), or $2 when unset.
flint_conf_value() {
  local key=$1 default=$2 value=""
  if [[ -f "$FLINT_CONF_DIR/flink-conf.yaml" ]]; then
    value=$(sed -n "s/^[[:space:]]*${key//./\\.}[[:space:]]*:[[:space:]]*//p" "$FLINT_CONF_DIR/flink-conf.yaml" \
      | tail -n 1 | sed 's/[[:space:]]*#.*$//; s/[[:space:]]*$//')
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
