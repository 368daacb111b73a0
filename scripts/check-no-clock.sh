#!/usr/bin/env bash
# The scheduling core and the simulator must never read a clock, sleep, or draw unseeded
# randomness: time comes in as a value. This check keeps it so.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='std::chrono|system_clock|steady_clock|time\(nullptr\)|time\(NULL\)|gettimeofday|clock_gettime|sleep_for|usleep|std::random_device|rand\(\)|localtime|gmtime\b'
if grep -nE "$pattern" src/core/*.h src/core/*.cc src/sim/*.h src/sim/*.cc 2>/dev/null | grep -v '_test.cc'; then
  echo "error: the pure core or the simulator reads a clock or unseeded randomness (see above)" >&2
  exit 1
fi
echo "check-no-clock: core and simulator read no clock"
