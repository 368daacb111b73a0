#!/usr/bin/env bash
# What one scheduling pass of a running rotad costs with a long queue: rotad on GPUS simulated
# cards (64), every card held by one job, N jobs waiting (10,000, over one API connection), then
# PASSES passes (20), each made by one more submission; the cost is what `rota status --json`'s
# scheduler sums (wall time of each pass: building the state from the job table, the decision,
# and applying it) over those passes, and how long `rota queue --json` then takes (it has the
# reasons made once, design.md "Reasons on demand", and lists every job).
# Usage: bench/daemon/pass_cost.sh   (env: ROTAD, ROTA, GPUS, N, PASSES; POLICY: lines added to
# [policy], e.g. POLICY='promise_slack = "0s"')
# Prints one JSON object: {"pending", "gpus", "pass_ms", "queue_s", "explained"}.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ROTAD=${ROTAD:-$ROOT/build/rotad}
ROTA=${ROTA:-$ROOT/build/rota}
GPUS=${GPUS:-64}
N=${N:-10000}
PASSES=${PASSES:-20}
POLICY=${POLICY:-}
[ -x "$ROTAD" ] && [ -x "$ROTA" ] || { echo "build rotad and rota first (make build)" >&2; exit 1; }
WORK="$(mktemp -d /tmp/rota-pass-cost.XXXXXX)"
source "$ROOT/bench/daemon/rotad_sim.sh"
ROTAD_PID=
trap '[ -z "$ROTAD_PID" ] || { kill $ROTAD_PID 2>/dev/null; wait $ROTAD_PID 2>/dev/null; }; rm -rf "$WORK"' EXIT
rotad_sim_start "$GPUS" $'[limits]\nsubmit_rate = 0\npending_per_user = 0\n[policy]\n'"$POLICY"
rotad_sim_hold_all "$GPUS"
python3 "$ROOT/bench/daemon/api_submit.py" "$ROTA_SOCKET" "$N" "$WORK" > /dev/null
sums() { "$ROTA" status --json | python3 -c 'import json,sys; s=json.load(sys.stdin)["scheduler"]; print(s["passes"], s["mean_ms"] * s["passes"], s.get("explained", -1))'; }
read -r p0 t0 _ <<< "$(sums)"
for _ in $(seq "$PASSES"); do "$ROTA" submit --parsable --gpus 1 --output /dev/null -- true > /dev/null; done
read -r p1 t1 e1 <<< "$(sums)"
q0=$(date +%s.%N)
"$ROTA" queue --json > /dev/null
q1=$(date +%s.%N)
python3 - "$p0" "$t0" "$p1" "$t1" "$q0" "$q1" "$e1" "$N" "$GPUS" <<'PY'
import json, sys
p0, t0, p1, t1, q0, q1 = (float(x) for x in sys.argv[1:7])
e1, n, gpus = int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9])
print(json.dumps({"pending": n, "gpus": gpus, "pass_ms": round((t1 - t0) / max(1, p1 - p0), 3),
                  "passes": int(p1 - p0), "queue_s": round(q1 - q0, 3), "explained": e1}))
PY
