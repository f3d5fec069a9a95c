#!/usr/bin/env bash
# Installs every dependency of chaosbench from Debian packages. Idempotent and quiet when
# everything is already there; later features add their packages to this list only.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config python3 python3-jsonschema
  libboost-program-options-dev nlohmann-json3-dev catch2 libgloo-dev libbenchmark-dev
  libnl-3-dev libnl-route-3-dev libspdlog-dev libfmt-dev iproute2
  libnetfilter-queue-dev iptables iputils-ping iperf3 wrk
  libopenblas-dev libzstd-dev libxxhash-dev
  libjs-chart.js chromium
  python3-torch
  python3-scipy  # the gate's statistics cross-checked against SciPy (tests/history)
  openssh-server openssh-client libssl-dev
  slurmctld slurmd slurm-client munge
  dpkg-dev file  # the Debian package (cmake/packaging.cmake): dpkg-shlibdeps, and file for CPack
  faketime       # the agents' clock tests: a host whose clock is off by a known offset
  libcurl4-openssl-dev  # HTTP(S) client: probes, scrapes, Grafana annotations
  prometheus prometheus-node-exporter  # the Prometheus tests: a real server scrapes a run, a run scrapes node-exporter
  nodejs npm     # tests/openai_sdk: the official OpenAI SDK for Node as an outside client of llm-serve
)

# The npm packages of tests/openai_sdk (package-lock.json) into its node_modules, once per
# lock file. A registry out of reach is no failure of the setup: the test then says it is
# skipped and why (npm-install.log).
npm_packages() {
  local dir lock why
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/openai_sdk"
  command -v npm >/dev/null || return 0
  lock=$(sha256sum <"$dir/package-lock.json")
  [ "$(cat "$dir/node_modules/.installed-lock.sha256" 2>/dev/null)" = "$lock" ] && return 0
  echo "bootstrap: npm ci in $dir"
  if (cd "$dir" && timeout 300 npm ci --no-audit --no-fund --loglevel=error) >"$dir/npm-install.log" 2>&1; then
    rm -f "$dir/npm-install.log"
    echo "$lock" >"$dir/node_modules/.installed-lock.sha256"
  else
    # Its last line the reason, for the test's skip message.
    why=$(grep -m 1 FetchError "$dir/npm-install.log" || grep -m 1 -E 'npm (error|ERR!) code' "$dir/npm-install.log" ||
      tail -n 1 "$dir/npm-install.log")
    echo "npm ci failed: ${why#npm error }" >>"$dir/npm-install.log"
    echo "bootstrap: npm ci failed (tests/openai_sdk will be skipped): ${why#npm error }" >&2
  fi
  return 0
}

# A package whose command is already there from elsewhere counts as installed: NodeSource's
# nodejs (Node 20 on Debian 12, whose own is 18) bundles npm and conflicts with Debian's.
declare -A command_of=([nodejs]=node [npm]=npm)

missing=()
for p in "${packages[@]}"; do
  [ -n "${command_of[$p]:-}" ] && command -v "${command_of[$p]}" >/dev/null && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  npm_packages
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "bootstrap: need root (or sudo) to install: ${missing[*]}" >&2
    exit 3
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Packages are installed, never started: the test bed runs its own sshd, munged, slurmctld
# and slurmd per namespace, and a system sshd, munged or Slurm daemon (or any other) must
# not come up on the machine's own addresses.
# policy-rc.d tells Debian's maintainer scripts not to start services; one already there
# is left alone.
policy=/usr/sbin/policy-rc.d
made_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  made_policy=1
fi
status=0
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
[ -n "$made_policy" ] && $sudo rm -f "$policy"
[ "$status" -eq 0 ] && npm_packages
exit "$status"
