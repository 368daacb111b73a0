#!/usr/bin/env bash
# The rota policy against EASY backfill on every replay of issue 28, with exact and noisy
# estimates: prints rota/backfill for average, p99 and maximum wait, the utilisation difference
# (points), the Jain(slowdown) difference where users are known, rota's idle "held" GPU-hours and
# its replay time. A '*' marks a goal missed (avg <= 0.5, p99 <= 1, max <= 1, util >= -1,
# Jain >= 0). Backfill's replays are kept in $OUT and reused.
#   bench/policy_matrix.sh TAG [rota simulate flags...]    e.g.  default, or  off --set protect_max=0
# Environment: ROTA (build/rota), TRACES (../shared/traces), OUT (/tmp/rota-matrix), NAMES, ESTS.
set -euo pipefail
ROTA=${ROTA:-build/rota}; TRACES=${TRACES:-../shared/traces}; OUT=${OUT:-/tmp/rota-matrix}; mkdir -p $OUT
P=$TRACES/philly/philly.csv; A=$TRACES/alibaba-gpu-2023/openb_pod_list_default.csv
[ -s $OUT/syn4k.csv ] || python3 "$(dirname "$0")/synthetic_trace.py" --jobs 4000 --gpus 32 --load 0.9 --max-gpus 16 --seed 2 > $OUT/syn4k.csv
[ -s $OUT/syn16k.csv ] || python3 "$(dirname "$0")/synthetic_trace.py" > $OUT/syn16k.csv
tag=$1; shift
declare -A R
R[ed69ec]="--trace $P --format philly --filter cluster=ed69ec --gpus 8"
R[e13805]="--trace $P --format philly --filter cluster=e13805 --gpus 8"
R[11cb48]="--trace $P --format philly --filter cluster=11cb48 --gpus 16"
R[ee9e8c]="--trace $P --format philly --filter cluster=ee9e8c --columns user=cluster --gpus 128"
R[2869ce]="--trace $P --format philly --filter cluster=2869ce --gpus 48"
R[7f04ca]="--trace $P --format philly --filter cluster=7f04ca --gpus 72"
R[6c71a0]="--trace $P --format philly --filter cluster=6c71a0 --gpus 48"
R[alibaba]="--trace $A --format alibaba --gpus 32"
R[alibaba24]="--trace $A --format alibaba --gpus 24"
R[syn4k]="--trace $OUT/syn4k.csv --format philly --columns user=cluster --gpus 32"
R[syn16k]="--trace $OUT/syn16k.csv --format philly --columns user=cluster --gpus 128"
names=${NAMES:-"ed69ec e13805 11cb48 ee9e8c 2869ce 7f04ca 6c71a0 alibaba alibaba24 syn4k syn16k"}
for est in ${ESTS:-exact noisy}; do
for n in $names; do
  b=$OUT/base.$n.$est.json
  [ -s $b ] || echo "$ROTA simulate ${R[$n]} --estimates $est --policy backfill --json > $b"
  echo "$ROTA simulate ${R[$n]} --estimates $est --policy rota --json $* > $OUT/$tag.$n.$est.json"
done; done | xargs -P 2 -I{} sh -c "{}"
python3 - "$tag" "$names" "${ESTS:-exact noisy}" "$OUT" <<'PY'
import json,sys
tag,names,ests,out=sys.argv[1],sys.argv[2].split(),sys.argv[3].split(),sys.argv[4]
print(f"{'replay':18} {'avg':>5} {'p99':>5} {'max':>5} {'util':>6} {'jainSD':>6} {'held':>6} {'wall':>5}")
for est in ests:
  for n in names:
    b=json.load(open(f'{out}/base.{n}.{est}.json'))['results'][0]
    r=json.load(open(f'{out}/{tag}.{n}.{est}.json'))['results'][0]
    f=lambda k: r[k]/max(b[k],1e-9)
    js=f"{r['jain_slowdown']-b['jain_slowdown']:+.2f}" if r['jain_slowdown']>=0 else '-'
    bad=lambda ok,s: s if ok else s+'*'
    print(f"{n+'/'+est:18} {bad(f('avg_wait')<=0.5,format(f('avg_wait'),'.2f')):>6} {bad(f('p99_wait')<=1,format(f('p99_wait'),'.2f')):>6} {bad(f('max_wait')<=1,format(f('max_wait'),'.2f')):>6} {bad(r['utilisation']>=b['utilisation']-0.01,format(100*(r['utilisation']-b['utilisation']),'+.1f')):>6} {bad(js=='-' or float(js)>=0,js):>7} {r['idle_gpu_seconds']['held']/3600:6.0f} {r['wall_seconds']:5.1f}")
PY
