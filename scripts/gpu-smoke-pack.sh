#!/usr/bin/env bash
# Packs what scripts/gpu-smoke.sh needs into one directory that can be copied to a GPU machine
# without Rota's build dependencies (a CUDA image, say): the five binaries, stripped, and every
# shared library they load except the C library's own (libc, libm, libdl, libpthread, librt, the
# loader, libresolv, libnss), which the target has in a version at least as new. The NVIDIA driver's libraries are
# not packed: they must come from the target.
#
#   scripts/gpu-smoke-pack.sh BUILD_DIR OUT_DIR
#   # on the GPU machine:
#   LD_LIBRARY_PATH=OUT_DIR/lib ROTA_SMOKE_PREBUILT=1 scripts/gpu-smoke.sh OUT_DIR
set -euo pipefail
build="${1:?usage: gpu-smoke-pack.sh BUILD_DIR OUT_DIR}"
out="${2:?usage: gpu-smoke-pack.sh BUILD_DIR OUT_DIR}"
bins=(rotad rota rota-shepherd nvml_probe gpu_hold)

rm -rf "$out"
mkdir -p "$out/lib"
for b in "${bins[@]}"; do
  [[ -x "$build/$b" ]] || { echo "gpu-smoke-pack: $build/$b is missing (build it first)" >&2; exit 1; }
  strip -o "$out/$b" "$build/$b"
done
for b in "${bins[@]}"; do
  { ldd "$build/$b" || true; } | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | libutil.so.* | \
      libanl.so.* | libnss_* | ld-linux*) continue ;;  # the C library's own: the target's, never mixed
    libnvidia-ml.so* | libcuda.so*) continue ;;
  esac
  cp -L "$lib" "$out/lib/"
done
du -sh "$out"
