#!/usr/bin/env bash
# Installs the Debian 12 packages Rota needs to build and test, only those that are missing.
set -euo pipefail
PKGS=(build-essential cmake pkg-config git
      libsqlite3-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
      libtomlplusplus-dev libcpp-httplib-dev libcurl4-openssl-dev libssl-dev
      libgtest-dev libgmock-dev libbenchmark-dev python3
      python3-aiosmtpd  # a real SMTP server for tests/daemon/test_notify.py (run by /usr/bin/python3)
      procps util-linux passwd)  # pkill, setpriv/runuser/mount, useradd: the daemon integration tests
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "Installing missing packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
