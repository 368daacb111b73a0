#!/usr/bin/env bash
# GPU smoke test, for a machine with a real NVIDIA GPU and driver (issue 4). Builds nvml_probe
# (or reuses BUILD_DIR), loads the real libnvidia-ml through Rota's NVML backend and prints every
# card and MIG instance. Exits non-zero when NVML cannot be loaded or reports no card, or when a
# card is unhealthy. Takes well under 5 minutes (a build of two small targets).
#
#   scripts/gpu-smoke.sh [BUILD_DIR]        # default: build/
#   ROTA_NVML_LIBRARY=/path/libnvidia-ml.so.1 scripts/gpu-smoke.sh
#
# Not covered yet (issue 4): running a job that allocates GPU memory and checking attribution.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  timeout 120 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROTA_BUILD_BENCH=OFF >/dev/null
fi
timeout 200 cmake --build "$build" --target nvml_probe -j"$(nproc)" >/dev/null

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
if ! timeout 30 "$build/nvml_probe" >"$out"; then
  echo "gpu-smoke: FAIL: NVML could not be loaded or read (see above)" >&2
  exit 1
fi
cat "$out"

# Checks without jq (not always installed on GPU servers): at least one card, all healthy.
if ! grep -q '"uuid": "GPU-' "$out"; then
  echo "gpu-smoke: FAIL: NVML loaded but reported no GPU" >&2
  exit 1
fi
if grep '"health":' "$out" | grep -vq '"health": "OK"'; then
  echo "gpu-smoke: FAIL: a card is unhealthy (see \"health\" above)" >&2
  exit 1
fi
cards=$(grep -c '"uuid": "GPU-' "$out")
migs=$(grep -c '"uuid": "MIG-' "$out" || true)
echo "gpu-smoke: OK: $cards card(s), $migs MIG instance(s)"
