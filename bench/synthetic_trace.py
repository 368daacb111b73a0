#!/usr/bin/env python3
"""Writes a synthetic GPU job trace in the Philly CSV layout, for replays where big jobs are rare
but present (issue 28). Deterministic for a seed.

  bench/synthetic_trace.py --jobs 16000 --gpus 128 --load 1.3 --max-gpus 32 --seed 1 > trace.csv
  rota simulate --trace trace.csv --format philly --columns user=cluster --gpus 128

Sizes: 1 GPU for most jobs, then 2, 4, 8, 16, 32, 64 cards, each power of two about a third as
frequent as the one before (up to --max-gpus). Run times: log-normal, median 40 minutes, from one
minute to three days. Arrivals: a Poisson process whose rate makes the offered load (GPU-seconds
asked for per second) --load times the cluster's --gpus. Users: --users of them, a few heavy.

With --experiments, each user runs a few named experiments (columns `name` and `limit` added):
each has its size and a median run time drawn as above, and each job of it runs log-normally
around that median (sigma 0.6). Limits are written as people write them (Tsafrir, Etsion and
Feitelson 2005, as the simulator's `--estimates modal`): a round value that covers the run,
half the time the user's habit (4 h, 1 d or 3 d) where that is longer. Replay it with
  rota simulate --trace trace.csv --format philly --columns user=cluster,name=name,limit=limit \
      --estimates recorded --gpus 128
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
    ap.add_argument("--experiments", type=int, default=0,
                    help="named experiments per user, with recorded limits (0: the plain layout)")
    a = ap.parse_args()
    if a.jobs < 1 or a.gpus < 1 or a.load <= 0 or a.max_gpus < 1 or a.users < 1 or a.experiments < 0:
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
    if a.experiments:
        jobs = experiment_jobs(a, rng, sizes, weights)
    for _ in range(a.jobs if not a.experiments else 0):
        gpus = rng.choices(sizes, weights)[0]
        duration = min(3 * 86400, max(60, int(rng.lognormvariate(math.log(2400), 1.6))))
        # Heavy users: user k is picked with weight 1/(k+1).
        user = rng.choices(range(a.users), [1.0 / (k + 1) for k in range(a.users)])[0]
        jobs.append((gpus, duration, f"u{user:02d}"))
    mean_work = sum(j[0] * j[1] for j in jobs) / len(jobs)
    rate = a.load * a.gpus / mean_work  # arrivals per second
    t = 0.0
    start = datetime.datetime(2026, 1, 5)
    out = sys.stdout
    out.write("timestamp,duration,num_gpus,gpu_time,cluster" + (",name,limit" if a.experiments else "") + "\n")
    for job in jobs:
        gpus, duration, user = job[:3]
        t += rng.expovariate(rate)
        ts = start + datetime.timedelta(seconds=int(t))
        extra = f",{job[3]},{job[4]}" if a.experiments else ""
        out.write(f"{ts:%Y-%m-%d %H:%M:%S},{duration}.0,{gpus},{gpus * duration}.0,{user}{extra}\n")


ROUND = [m * 60 for m in (5, 10, 15, 30)] + [h * 3600 for h in (1, 2, 4, 8, 12, 24, 48, 72, 168)]


def round_limit(seconds):
    """The smallest round limit that covers `seconds`; past a week, whole days."""
    for r in ROUND:
        if seconds <= r:
            return r
    return -(-seconds // 86400) * 86400


def experiment_jobs(a, rng, sizes, weights):
    """(gpus, duration, user, name, limit) for --experiments: each user's named experiments, each
    with its own size and median run time; limits rounded, half of them the user's habit."""
    users = []
    for k in range(a.users):
        habit = rng.choice([4 * 3600, 86400, 3 * 86400])
        experiments = [(f"exp{e}", rng.choices(sizes, weights)[0],
                        min(3 * 86400, max(60, rng.lognormvariate(math.log(2400), 1.6))))
                       for e in range(a.experiments)]
        users.append((f"u{k:02d}", habit, experiments))
    jobs = []
    for _ in range(a.jobs):
        user, habit, experiments = rng.choices(users, [1.0 / (k + 1) for k in range(a.users)])[0]
        name, gpus, median = rng.choice(experiments)
        duration = min(3 * 86400, max(60, int(rng.lognormvariate(math.log(median), 0.6))))
        if rng.random() < 0.5:
            limit = round_limit(max(duration, habit))
        else:
            limit = round_limit(math.ceil(duration * (1 + rng.random())))
        jobs.append((gpus, duration, user, name, limit))
    return jobs


if __name__ == "__main__":
    main()
