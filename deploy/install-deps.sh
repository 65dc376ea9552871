#!/usr/bin/env bash
# Installs everything Flint's build and benchmarks need, from Debian's packages (with --tests,
# what only the tests need as well).
# Idempotent: packages already present are skipped, so a second run costs a dpkg query.
set -euo pipefail

packages=(
  build-essential cmake ccache pkg-config git
  libcaf-dev
  libcapnp-dev capnproto
  libspdlog-dev libfmt-dev
  doctest-dev
  libyaml-cpp-dev
  libcli11-dev
  nlohmann-json3-dev
  librocksdb-dev
  iproute2 procps
  default-jre-headless libzookeeper-java libzookeeper-mt-dev
  # mutual TLS (security.ssl.internal.*) and deploy/gen-certs.sh
  libcaf-openssl0.17 libssl-dev openssl
  # test/fuzz: clang and its runtimes (libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer)
  clang libclang-rt-14-dev
  # the REST API and the dashboard (rest.port), the Prometheus reporter (metrics.reporter.prom.port)
  libcpp-httplib-dev
)

# `--tests`: also what only the tests need (the dashboard is checked in a headless browser;
# python3 checks the REST, metrics, trace and dashboard answers and plays raw peers in the cluster
# tests; Prometheus' promtool and server check and scrape every node's /metrics).
if [[ "${1:-}" == "--tests" ]]; then
  packages+=(chromium fonts-dejavu-core python3 prometheus)
elif [[ -n "${1:-}" ]]; then
  echo "install-deps: unknown argument '$1' (usage: install-deps.sh [--tests])" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"

# Debian's prometheus package enables and starts a system server on :9090 as it installs. The tests
# start their own, on free loopback ports, so one this script brought in is stopped and disabled (a
# prometheus that was present before is someone's and is left alone).
if [[ " ${missing[*]} " == *" prometheus "* ]]; then
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl stop prometheus.service || true
  elif [ -x /etc/init.d/prometheus ]; then
    $SUDO /etc/init.d/prometheus stop || true
  fi
  if command -v systemctl >/dev/null; then
    $SUDO systemctl disable prometheus.service || true   # works without a running systemd too
  elif command -v update-rc.d >/dev/null; then
    $SUDO update-rc.d prometheus disable || true
  fi
  echo "install-deps: the system prometheus service is stopped and disabled (the tests run their own)"
fi
