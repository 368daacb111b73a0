#!/usr/bin/env bash
# `make run`: starts rotad in the foreground on this machine's GPUs, or on simulated ones (the
# embedded default, packaging/rota-demo.toml) when the machine has none. Stop it with Ctrl-C;
# jobs that are still running keep running and are re-adopted by the next start.
set -euo pipefail
BUILD=${BUILD:-build}
config=packaging/rota-demo.toml
if [ -e /dev/nvidiactl ] && ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'; then
  config=""  # the real cards through NVML (the default GPU source)
fi
args=()
[ -n "$config" ] && args+=(--config "$config")
if [ -z "$config" ]; then
  echo "rota: NVIDIA driver found: scheduling this machine's GPUs through NVML"
else
  echo "rota: no NVIDIA driver here: scheduling the simulated GPUs of $config"
fi
if [ "$(id -u)" -eq 0 ]; then
  cat <<MSG
rota: rotad runs as root and serves everyone; it runs no job as root (allow_root_jobs), so
rota: submit as an ordinary user, e.g. with: runuser -u nobody -- $PWD/$BUILD/rota ...
MSG
fi
cat <<MSG
rota: in another terminal, try:
  $BUILD/rota submit --gpus 1 -- sh -c 'echo hello from \$CUDA_VISIBLE_DEVICES; sleep 30'
  $BUILD/rota queue --all
  $BUILD/rota run --gpu-mem 20G -- sh -c 'echo \$CUDA_VISIBLE_DEVICES'
  $BUILD/rota status
  $BUILD/rota web        # a one-time sign-in link for the web page (http://127.0.0.1:8080)
MSG
exec "$BUILD/rotad" "${args[@]}"
