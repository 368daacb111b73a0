#!/usr/bin/env python3
"""Writes a synthetic GPU job trace in the Philly CSV layout, for replays where big jobs are rare
but present (issue 28). Deterministic for a seed.

  bench/synthetic_trace.py --jobs 16000 --gpus 128 --load 1.3 --max-gpus 32 --seed 1 > trace.csv
  rota simulate --trace trace.csv --format philly --columns user=cluster --gpus 128

Sizes: 1 GPU for most jobs, then 2, 4, 8, 16, 32, 64 cards, each power of two about a third as
frequent as the one before (up to --max-gpus). Run times: log-normal, median 40 minutes, from one
minute to three days. Arrivals: a Poisson process whose rate makes the offered load (GPU-seconds
asked for per second) --load times the cluster's --gpus. Users: --users of them, a few heavy.
"""
import argparse
import datetime
import math
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=16000)
    ap.add_argument("--gpus", type=int, default=128, help="cluster size the load is relative to")
    ap.add_argument("--load", type=float, default=1.3, help="offered load / capacity")
    ap.add_argument("--max-gpus", type=int, default=32)
    ap.add_argument("--users", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.jobs < 1 or a.gpus < 1 or a.load <= 0 or a.max_gpus < 1 or a.users < 1:
        sys.exit("synthetic_trace.py: --jobs, --gpus, --load, --max-gpus and --users must be positive")
    rng = random.Random(a.seed)
    sizes, weights, w, g = [], [], 1.0, 1
    while g <= a.max_gpus:
        sizes.append(g)
        weights.append(w)
        w /= 3.0
        g *= 2
    weights[0] *= 2  # single cards dominate, as in every real trace we have
    jobs = []
    for _ in range(a.jobs):
        gpus = rng.choices(sizes, weights)[0]
        duration = min(3 * 86400, max(60, int(rng.lognormvariate(math.log(2400), 1.6))))
        # Heavy users: user k is picked with weight 1/(k+1).
        user = rng.choices(range(a.users), [1.0 / (k + 1) for k in range(a.users)])[0]
        jobs.append((gpus, duration, f"u{user:02d}"))
    mean_work = sum(g * d for g, d, _ in jobs) / len(jobs)
    rate = a.load * a.gpus / mean_work  # arrivals per second
    t = 0.0
    start = datetime.datetime(2026, 1, 5)
    out = sys.stdout
    out.write("timestamp,duration,num_gpus,gpu_time,cluster\n")
    for gpus, duration, user in jobs:
        t += rng.expovariate(rate)
        ts = start + datetime.timedelta(seconds=int(t))
        out.write(f"{ts:%Y-%m-%d %H:%M:%S},{duration}.0,{gpus},{gpus * duration}.0,{user}\n")


if __name__ == "__main__":
    main()
