#!/usr/bin/env bash
# Run the daemon benchmarks for every system and print one comparison table (Markdown).
#
# Usage: bench/daemon/compare.sh                 # run SYSTEMS, then print the table
#        bench/daemon/compare.sh --table DIR     # only print the table for DIR/*.json
# Env:   SYSTEMS=tsp,slurm,slurm-tuned,rota      (order = column order)
#        RESULTS_DIR=/tmp/rota-bench-results/<timestamp>   (one <system>.json + .log each)
#        ROTAD=build/rotad                        rota.sh runs only if it exists and ROTAD is built
#        SLURM_JOBS_N=100                         phase-3 job count for the Slurm runs
#        (1000 takes ~10 min stock, ~4 min tuned); other knobs as in lib.sh apply to all runs
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

table() { # DIR
  local files=() s
  for s in ${SYSTEMS//,/ }; do [ -s "$1/$s.json" ] && files+=("$1/$s.json"); done
  [ ${#files[@]} -gt 0 ] || { echo "no results in $1" >&2; return 1; }
  python3 "$HERE/stats.py" table "${files[@]}"
}

: "${SYSTEMS:=tsp,slurm,slurm-tuned,rota}"
if [ "${1:-}" = "--table" ]; then table "${2:?usage: compare.sh --table DIR}"; exit; fi

OUT=${RESULTS_DIR:-/tmp/rota-bench-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
export ROTAD=${ROTAD:-$REPO/build/rotad}

run_one() { # NAME CMD...: stdout (the JSON) -> NAME.json, stderr -> NAME.log
  local name=$1; shift
  echo "== $name: $* (log: $OUT/$name.log)" >&2
  if "$@" > "$OUT/$name.json" 2> "$OUT/$name.log"; then
    cat "$OUT/$name.json" >&2
  else
    echo "   $name FAILED (rc $?); last log lines:" >&2; tail -5 "$OUT/$name.log" >&2
    rm -f "$OUT/$name.json"
  fi
}

slurm_env=()
[ -n "${SLURM_JOBS_N:-}" ] && slurm_env=(env JOBS_N="$SLURM_JOBS_N")
for s in ${SYSTEMS//,/ }; do
  case $s in
    tsp)         run_one tsp "$HERE/baseline_tsp.sh" ;;
    slurm)       run_one slurm "${slurm_env[@]}" "$HERE/baseline_slurm.sh" ;;
    slurm-tuned) run_one slurm-tuned "${slurm_env[@]}" "$HERE/baseline_slurm.sh" --tuned ;;
    rota)
      if [ ! -x "$HERE/rota.sh" ]; then echo "== rota: skipped ($HERE/rota.sh not there yet)" >&2
      elif [ ! -x "$ROTAD" ]; then echo "== rota: skipped (rotad not built: $ROTAD)" >&2
      else run_one rota "$HERE/rota.sh"; fi ;;
    *) echo "unknown system '$s'" >&2 ;;
  esac
done
echo "== results in $OUT" >&2
echo
table "$OUT"
