# Sourced by the GPU smoke scripts (gpu-smoke.sh, gpu-notify-smoke.sh): makes the binaries they
# need ready and says where they are.
#   smoke_build BUILD_DIR TARGET...   sets `build` (absolute) and `lib_path` (LD_LIBRARY_PATH for
#                                     Rota's binaries), or calls fail
# With ROTA_SMOKE_PREBUILT=1 the binaries are taken as they are from BUILD_DIR (a directory made
# by scripts/gpu-smoke-pack.sh on another machine, with the libraries they need in BUILD_DIR/lib);
# otherwise BUILD_DIR is configured if needed and the targets are built.
smoke_build() {
  local dir="$1"
  shift
  if [[ "${ROTA_SMOKE_PREBUILT:-0}" == 1 ]]; then
    local b
    for b in "$@"; do
      [[ -x "$dir/$b" ]] || fail "ROTA_SMOKE_PREBUILT=1 but $dir/$b is missing"
    done
  else
    if [[ ! -f "$dir/CMakeCache.txt" ]]; then
      timeout 120 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROTA_BUILD_BENCH=OFF >/dev/null ||
        fail "cmake could not configure $dir"
    fi
    timeout 300 cmake --build "$dir" --target "$@" -j"$(nproc)" >/dev/null ||
      fail "the build of $* failed or took over 300 s"
  fi
  build="$(cd "$dir" && pwd)"
  lib_path="${LD_LIBRARY_PATH:-}"
  if [[ -d "$build/lib" ]]; then lib_path="$build/lib${lib_path:+:$lib_path}"; fi
}
