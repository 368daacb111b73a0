#!/usr/bin/env python3
"""Runs one fuzz target (fuzz/README.md): its corpus once, then, under libFuzzer, fuzzing for a
set time. This is what each ctest entry fuzz_NAME runs, and what `make fuzz` runs for longer.

    run.py BINARY --libfuzzer=ON|OFF --work DIR [--seconds N] [--keep]

BINARY is fuzz_NAME; its seeds are fuzz/corpus/NAME, its dictionary fuzz/NAME.dict and its own
libFuzzer options fuzz/NAME.options, if any.
--seconds defaults to $ROTA_FUZZ_SECONDS, else 3; 0 replays the corpus only. New inputs go to
DIR/NAME (emptied first unless --keep or $ROTA_FUZZ_KEEP, so that a ctest run starts from the
tree's corpus alone), findings to DIR/findings/, the output also to DIR/NAME.log. On a finding
the exit status is non-zero and the last lines say how to replay it.
"""
import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--libfuzzer", default="OFF")
    p.add_argument("--work", required=True)
    p.add_argument("--seconds", type=int, default=int(os.environ.get("ROTA_FUZZ_SECONDS", "3")))
    p.add_argument("--keep", action="store_true")
    args = p.parse_args()

    name = os.path.basename(args.binary)
    name = name[len("fuzz_"):] if name.startswith("fuzz_") else name
    corpus = os.path.join(ROOT, "fuzz", "corpus", name)
    if not os.path.isdir(corpus) or not os.listdir(corpus):
        print(f"fuzz/corpus/{name} is missing or empty: every target has seeds", file=sys.stderr)
        return 1
    if args.libfuzzer not in ("ON", "1", "TRUE", "YES"):
        # The replay driver (fuzz/replay_main.cc): each seed once.
        return subprocess.call([args.binary, corpus])

    work = os.path.join(args.work, name)
    findings = os.path.join(args.work, "findings")
    if not (args.keep or os.environ.get("ROTA_FUZZ_KEEP")):
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    os.makedirs(findings, exist_ok=True)
    cmd = [args.binary, f"-artifact_prefix={findings}/{name}-", "-timeout=20", "-rss_limit_mb=2560",
           "-print_final_stats=1"]
    dictionary = os.path.join(ROOT, "fuzz", name + ".dict")
    if os.path.exists(dictionary):
        cmd.append(f"-dict={dictionary}")
    # A target's own libFuzzer options, one a line (as OSS-Fuzz's NAME.options files).
    options = os.path.join(ROOT, "fuzz", name + ".options")
    if os.path.exists(options):
        with open(options) as f:
            cmd += [line.strip() for line in f if line.strip() and not line.startswith("#")]
    if args.seconds > 0:
        cmd += [f"-max_total_time={args.seconds}", work, corpus]
    else:
        cmd += ["-runs=0", corpus]
    print("running:", " ".join(cmd), flush=True)
    env = dict(os.environ)
    # Leaks are findings too; a report names the input that made them.
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    before = set(os.listdir(findings))
    # The run's output goes to the terminal (or ctest's log) and to DIR/NAME.log, whose last
    # lines (libFuzzer's final stats) docs/reliability.md quotes.
    with open(os.path.join(args.work, name + ".log"), "wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):
            log.write(chunk)
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        rc = proc.wait()
    if rc != 0:
        found = sorted(f for f in os.listdir(findings) if f.startswith(name + "-") and f not in before)
        print(f"\nfuzz_{name} found a fault (exit {rc}). Replay it with:", file=sys.stderr)
        for f in found:
            print(f"  {args.binary} {os.path.join(findings, f)}", file=sys.stderr)
        print(f"Once fixed, add the input to fuzz/corpus/{name}/ (a regression seed).", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
