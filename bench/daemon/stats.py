#!/usr/bin/env python3
"""Statistics helper shared by bench/daemon/*.sh (python3 stdlib only).

Subcommands (all print one JSON object, or a table for `table`):
  submit N T0_NS T1_NS             submission loop: N invocations between T0 and T1 (ns)
  handoff FILE SLOTS               exit -> next-start latency from a log of "S <t>" / "E <t>" lines
  makespan FILE T0_S N             first submit (T0, s) -> last completion (max t in FILE)
  assemble SYSTEM DIR [k=v ...]    merge DIR/{submit,handoff,jobs}.json into the flat summary
  table FILE.json ...              print a Markdown comparison table (ratios vs rota if present)
"""
import json
import math
import sys


def pct(sorted_xs, p):
    """Percentile with linear interpolation between closest ranks (numpy's default,
    statistics.quantiles(method='inclusive')). p in [0, 100]."""
    if not sorted_xs:
        return None
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    k = (len(sorted_xs) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (k - lo)


def r(x, nd=3):
    return None if x is None else round(x, nd)


def cmd_submit(n, t0, t1):
    n, secs = int(n), (int(t1) - int(t0)) / 1e9
    return {"submit_n": n, "submit_total_s": r(secs), "submit_per_s": r(n / secs, 1),
            "submit_ms": r(secs * 1000 / n)}


def read_events(path):
    starts, ends = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 2:
                continue
            (starts if parts[0] == "S" else ends).append(float(parts[1]))
    return sorted(starts), sorted(ends)


def cmd_handoff(path, slots):
    """Jobs append "S <epoch>" when they start and "E <epoch>" just before they exit.
    With SLOTS slots (GPUs) all busy, the first SLOTS starts fill the machine; every later
    start needed one slot to be freed. Freed slots are matched to waiting starts in time
    order (k-th end <-> k-th waiting start), latency = start - end."""
    slots = int(slots)
    starts, ends = read_events(path)
    waiting = starts[slots:]
    lat = sorted((s - e) * 1000 for s, e in zip(waiting, ends))
    out = {"next_start_n": len(lat), "next_start_p50_ms": r(pct(lat, 50), 1),
           "next_start_p99_ms": r(pct(lat, 99), 1),
           "next_start_mean_ms": r(sum(lat) / len(lat), 1) if lat else None,
           "next_start_min_ms": r(lat[0], 1) if lat else None,
           "next_start_max_ms": r(lat[-1], 1) if lat else None}
    if lat and lat[0] < 0:
        out["warning"] = "negative latency: more jobs ran at once than SLOTS"
    return out


def cmd_makespan(path, t0, n):
    n = int(n)
    with open(path) as f:
        ts = [float(x) for x in f.read().split()]
    secs = max(ts) - float(t0)
    out = {"jobs_n": n, "jobs_done": len(ts), "jobs_s": r(secs, 2),
           "jobs_per_s": r(len(ts) / secs, 2)}
    if n == 1000:
        out["jobs1000_s"] = r(secs, 2)
    else:
        out["jobs1000_s"] = None
        out["jobs1000_s_extrapolated"] = r(secs * 1000 / n, 1)
    return out


def cmd_assemble(system, d, *kv):
    out = {"system": system}
    for name in ("submit", "handoff", "jobs"):
        try:
            with open(f"{d}/{name}.json") as f:
                out.update(json.load(f))
        except FileNotFoundError:
            pass
    for item in kv:
        k, _, v = item.partition("=")
        try:
            out[k] = json.loads(v)
        except ValueError:
            out[k] = v
    return out


ROWS = [  # (key, label, lower_is_better)
    ("submit_per_s", "submissions/s (serial CLI loop)", False),
    ("submit_ms", "ms per submission", True),
    ("next_start_p50_ms", "exit -> next start p50 (ms)", True),
    ("next_start_p99_ms", "exit -> next start p99 (ms)", True),
    ("next_start_n", "  samples", None),
    ("jobs1000_s", "1,000 x 1-GPU jobs on 4 GPUs (s)", True),
    ("jobs1000_s_extrapolated", "1,000 jobs EXTRAPOLATED from jobs_n (s)", True),
    ("jobs_n", "  jobs actually run", None),
    ("load1_start", "1-min load average at start", None),
]


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"
    return str(v)


def cmd_table(*files):
    res = []
    for p in files:
        with open(p) as f:
            res.append(json.load(f))
    for x in res:
        if isinstance(x.get("loadavg_start"), str):
            x["load1_start"] = float(x["loadavg_start"].split()[0])
    names = [x["system"] for x in res]
    ref = names.index("rota") if "rota" in names else None
    hdr = ["metric"] + names
    if ref is not None:
        hdr += [f"{n}/rota" for i, n in enumerate(names) if i != ref]
    lines = ["| " + " | ".join(hdr) + " |", "|---" + "|---:" * (len(hdr) - 1) + "|"]
    for key, label, lower in ROWS:
        vals = [x.get(key) for x in res]
        if all(v is None for v in vals):
            continue
        row = [label] + [fmt(v) for v in vals]
        if ref is not None:
            for i, v in enumerate(vals):
                if i == ref:
                    continue
                rv = vals[ref]
                row.append("-" if lower is None or v is None or not rv else f"{v / rv:,.2f}x")
        lines.append("| " + " | ".join(row) + " |")
    print("\n".join(lines))
    if ref is not None:
        print("\nRatios are other/rota: for submissions/s, <1 means rota is faster; for times, >1 means rota is faster.")
    return None


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    fn = {"submit": cmd_submit, "handoff": cmd_handoff, "makespan": cmd_makespan,
          "assemble": cmd_assemble, "table": cmd_table}.get(argv[1])
    if fn is None:
        print(__doc__, file=sys.stderr)
        return 2
    out = fn(*argv[2:])
    if out is not None:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
