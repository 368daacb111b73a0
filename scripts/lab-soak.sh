#!/bin/bash
# The soak of a simulated 20-person lab (src/daemon/lab_soak_test.cc) for longer than `make
# test`'s 3 days: DAYS days (default 7) with each of SEEDS (default 1 2 3), the whole daemon
# in-process on virtual time. Prints each run's table (a row per day: work done, the daemon's heap,
# the store, pass and request times) and what was checked; stops at the first run that fails.
# Each run's whole output: $SOAK_DIR/seed-S.log; a run is killed after 30 s per day (a day
# takes under a second).
#   scripts/lab-soak.sh [DAYS] [SEEDS...]          (after `make build`)
set -euo pipefail
cd "$(dirname "$0")/.."
days=${1:-7}
shift || true
seeds=(1 2 3)
[ $# -eq 0 ] || seeds=("$@")
SOAK_DIR=${SOAK_DIR:-$(mktemp -d /tmp/rota-lab-soak-XXXXXX)}
mkdir -p "$SOAK_DIR"
for seed in "${seeds[@]}"; do
  log=$SOAK_DIR/seed-$seed.log
  echo "== $days days, ROTA_SOAK_SEED=$seed"
  start=$(date +%s)
  # SIGKILL: the in-process daemon blocks SIGTERM (it reads it from a signalfd).
  if ! ROTA_SOAK_DAYS=$days ROTA_SOAK_SEED=$seed timeout -s KILL $((120 + 30 * days)) \
      build/rota_tests --gtest_filter='LabSoakTest.*' > "$log" 2>&1; then
    grep -v '^\[20[0-9][0-9]-' "$log" | tail -60
    echo "seed $seed failed (whole output in $log)"
    exit 1
  fi
  grep -E '^(day|[0-9]+ \||jobs:|notifications:|bookings:)' "$log"
  echo "($(( $(date +%s) - start )) s)"
done
