#!/usr/bin/env bash
# A/B comparison of rotad builds on one phase of rota.sh, runs interleaved (A B A B ...) so that
# the drift of a shared VM falls on both alike. One run's numbers vary by more than most changes
# (the hand-over p50 ranged 3.9 to 6.4 ms over seven runs of one build), so compare medians.
# Usage: bench/daemon/ab.sh PHASE RUNS ROTAD_A [ROTAD_B]
#   PHASE: submit | handoff | jobs (see lib.sh); RUNS: runs per build.
# Prints one line per run and the median of the phase's main numbers per build. The rota CLI is
# the one in build/ (or $ROTA) for every run.
set -euo pipefail
phase=${1:?usage: ab.sh PHASE RUNS ROTAD_A [ROTAD_B]}
runs=${2:?usage: ab.sh PHASE RUNS ROTAD_A [ROTAD_B]}
shift 2
[ $# -ge 1 ] || { echo "usage: ab.sh PHASE RUNS ROTAD_A [ROTAD_B]" >&2; exit 2; }
case "$phase" in
  submit) keys="submit_per_s submit_ms" ;;
  handoff) keys="next_start_p50_ms next_start_p99_ms" ;;
  jobs) keys="jobs1000_s" ;;
  *) echo "ab.sh: unknown phase '$phase' (submit, handoff, jobs)" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d /tmp/rota-ab.XXXXXX)"
trap 'rm -rf "$out"' EXIT
for ((r = 1; r <= runs; r++)); do
  i=0
  for rotad in "$@"; do
    i=$((i + 1))
    ROTAD="$rotad" EXTRAS=0 PHASES="$phase" "$here/rota.sh" 2>/dev/null | tail -1 > "$out/$i.$r.json"
    echo "run $r $rotad: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(f"{k}={d.get(k)}" for k in sys.argv[2:]))' "$out/$i.$r.json" $keys)"
  done
done
i=0
for rotad in "$@"; do
  i=$((i + 1))
  python3 - "$rotad" "$out" "$i" $keys <<'PY'
import glob, json, statistics, sys
rotad, out, i, keys = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
runs = [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{i}.*.json"))]
parts = []
for k in keys:
    vals = [r[k] for r in runs if isinstance(r.get(k), (int, float))]
    parts.append(f"{k} median {statistics.median(vals):g} (min {min(vals):g}, max {max(vals):g})" if vals else f"{k} -")
print(f"{rotad}: {len(runs)} runs: " + "; ".join(parts))
PY
done
