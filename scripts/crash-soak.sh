#!/bin/bash
# The crash cycles of tests/daemon/test_crash_cycles.py for longer: ROUNDS rounds (default 10) of
# CYCLES kills each (default 500), each round with a seed of its own, printed so that a failing
# round can be run again alone (ROTA_CRASH_SEED=S ROTA_CRASH_CYCLES=N). Stops at the first failure
# and prints the end of that round's output (each round's whole output: $SOAK_DIR/round-N.log).
#   scripts/crash-soak.sh [ROUNDS] [CYCLES]        (as root, after `make build`; leave build/ alone meanwhile)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
cycles=${2:-500}
export ROTA_BIN_DIR=${ROTA_BIN_DIR:-$PWD/build} ROTA_CRASH_CYCLES=$cycles PYTHONDONTWRITEBYTECODE=1
SOAK_DIR=${SOAK_DIR:-$(mktemp -d /tmp/rota-soak-XXXXXX)}
start=$(date +%s)
for round in $(seq 1 "$rounds"); do
  export ROTA_CRASH_SEED=$(( (RANDOM << 15 | RANDOM) + 1 ))
  log=$SOAK_DIR/round-$round.log
  echo "round $round of $rounds: $cycles cycles, ROTA_CRASH_SEED=$ROTA_CRASH_SEED"
  if ! (cd tests/daemon && python3 -m unittest test_crash_cycles) > "$log" 2>&1; then
    grep -v '^20[0-9][0-9]-' "$log" | tail -40
    echo "round $round failed (seed $ROTA_CRASH_SEED; whole output in $log)"
    exit 1
  fi
  grep '^crash cycles: faults' "$log" || true
done
echo "$((rounds * cycles)) cycles in $(( $(date +%s) - start )) s"
