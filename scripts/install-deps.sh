#!/usr/bin/env bash
# Installs the Debian 12 packages Rota needs to build and test, only those that are missing.
set -euo pipefail
PKGS=(build-essential cmake pkg-config git
      libsqlite3-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
      libtomlplusplus-dev libcpp-httplib-dev libcurl4-openssl-dev libssl-dev
      libgtest-dev libgmock-dev libbenchmark-dev python3
      clang libclang-rt-14-dev  # the sanitized build and its fuzz targets (libFuzzer): fuzz/README.md
      tzdata                 # [policy] timezone: zone names with daylight saving (config/tzdb.cc)
      libpam0g-dev           # rotad: password sign-in on the web page
      prometheus wrk         # tests/daemon/test_prometheus.py, bench/http_bench.sh
      chromium fonts-wqy-microhei  # tests/web: the page in a real headless browser (Chinese glyphs)
      python3-aiosmtpd openssl  # a real SMTP server (with STARTTLS) for tests/daemon/test_notify.py
      procps util-linux passwd  # pkill, setpriv/runuser/mount, useradd: the daemon integration tests
      strace                 # tests/daemon/test_restart.py: rotad killed at an exact point
      slurmctld slurmd slurm-client munge  # tests/daemon/test_slurm*.py: a real Slurm for the Slurm engine
      iproute2               # tests/daemon/test_slurm_nodes.py: a second node in its own network namespace
      slurmdbd mariadb-server  # tests/daemon/test_slurm_accounting.py: Slurm's accounting (sacct)
      podman runc catatonit netavark busybox-static  # tests/daemon/test_containers.py: jobs in a real Podman
      debhelper lintian debootstrap)  # make deb; tests/daemon/test_package.py installs it in a Debian 12 root
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js for the web page's tests and libraries: Debian's, unless a node is already installed
# (another packaging of it would conflict with Debian's npm).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing missing packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  # Without an init system (a container), the packages' services must not start as they install
  # (mariadb-server's would fail there); the tests start their own. Docker's images say so with a
  # policy-rc.d already; one is put in place only for this install where there is none.
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ] && [ ! -d /run/systemd/system ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
  fi
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  if [ -n "$policy" ]; then $SUDO rm -f "$policy"; trap - EXIT; fi
fi
# npm packages, exactly as locked: uPlot for the page's charts, playwright-core for its tests.
cd "$(dirname "$0")/.."
for dir in web tests/web; do
  # npm writes node_modules/.package-lock.json last: without it the folder is missing, empty or
  # half written (an interrupted install), and is installed again.
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
    echo "Installing npm packages in $dir"
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  fi
done
