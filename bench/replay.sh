#!/usr/bin/env bash
# Replays the shared traces through the three policies and prints Markdown tables for
# docs/benchmarks.md. Usage: bench/replay.sh [path/to/rota] [path/to/shared/traces]
set -euo pipefail
ROTA=${1:-build/rota}
TRACES=${2:-../shared/traces}
PHILLY=$TRACES/philly/philly.csv
ALIBABA=$TRACES/alibaba-gpu-2023/openb_pod_list_default.csv

table() {  # table TITLE ARGS...: one replay of all three policies, as a Markdown table
  local title=$1; shift
  local start end
  start=$(date +%s%N)
  "$ROTA" simulate --json "$@" > /tmp/rota-replay.$$.json
  end=$(date +%s%N)
  python3 - "$title" "$(( (end - start) / 1000000 ))" "$*" /tmp/rota-replay.$$.json <<'PY'
import json, sys
title, secs, args, path = sys.argv[1], float(sys.argv[2]) / 1000, sys.argv[3], sys.argv[4]
d = json.load(open(path))
print(f"### {title}\n")
print(f"`rota simulate {args}` ({d['jobs']} jobs, {d['gpus']} GPUs, estimates {d['estimates']}; "
      f"replay of all three policies took {secs:.1f} s)\n")
print("| policy | jobs | rejected | avg wait | p50 wait | p99 wait | max wait | avg JCT | p99 JCT | util | Jain(wait) | Jain(slowdown) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
base = {r["policy"]: r for r in d["results"]}
for r in d["results"]:
    j = "-" if r["jain_wait"] < 0 else f"{r['jain_wait']:.3f}"
    js = "-" if r["jain_slowdown"] < 0 else f"{r['jain_slowdown']:.3f}"
    print(f"| {r['policy']} | {r['jobs']:,} | {r['rejected']:,} | {r['avg_wait']:,.0f} | {r['p50_wait']:,.0f} | "
          f"{r['p99_wait']:,.0f} | {r['max_wait']:,.0f} | {r['avg_jct']:,.0f} | {r['p99_jct']:,.0f} | "
          f"{100*r['utilisation']:.1f}% | {j} | {js} |")
if "backfill" in base and "rota" in base and base["backfill"]["avg_wait"] > 0:
    b, r = base["backfill"], base["rota"]
    print(f"\nrota / backfill: average wait {r['avg_wait']/b['avg_wait']:.2f}, "
          f"p99 wait {r['p99_wait']/max(b['p99_wait'],1):.2f}, average JCT {r['avg_jct']/b['avg_jct']:.2f}\n")
else:
    print()
PY
  rm -f /tmp/rota-replay.$$.json
}

table "Philly VC ed69ec on 8 GPUs" --trace "$PHILLY" --format philly --filter cluster=ed69ec --gpus 8
table "Philly VC e13805 on 8 GPUs" --trace "$PHILLY" --format philly --filter cluster=e13805 --gpus 8
table "Philly VC 11cb48 on 16 GPUs" --trace "$PHILLY" --format philly --filter cluster=11cb48 --gpus 16
table "Philly VC ed69ec on 8 GPUs, noisy estimates" --trace "$PHILLY" --format philly --filter cluster=ed69ec --gpus 8 --estimates noisy
table "Philly VC 11cb48 on 16 GPUs, history estimates" --trace "$PHILLY" --format philly --filter cluster=11cb48 --gpus 16 --estimates history
table "Whole Philly trace on 640 GPUs (80 nodes of 8), users = virtual clusters" --trace "$PHILLY" --format philly --columns user=cluster --gpus 640
table "Alibaba GPU-sharing trace on 32 GPUs (shares of 80 GB cards)" --trace "$ALIBABA" --format alibaba --gpus 32
