#!/usr/bin/env python3
"""Prints, after a failed ctest run, what each failed test said about its failure, so that it is
the last thing in the output. ctest --output-on-failure prints a failed test's whole output when
it ends, which with -j puts it in the middle of a long log; a CI page that keeps only the head and
the tail of the log then shows that a test failed but not why.

Usage: ctest-digest.py BUILD_DIR   (reads BUILD_DIR/Testing/Temporary/LastTest.log)"""
import re
import sys
from pathlib import Path

# Lines that say what went wrong, in GoogleTest, Python's unittest, the sanitizers and run_shard.py.
KEY = re.compile(r"Failure$|^\[  FAILED  \]|^run_shard:|^  (crashed|failed): |ERROR: \w+Sanitizer|"
                 r"runtime error:|^SUMMARY: |^(FAIL|ERROR): |^Traceback|^\w*(Error|Exception)\b|"
                 r"^AssertionError|^  File \"")
AFTER = 6             # lines kept after each key line (the expected and actual values, the message)
TAIL = 15             # the output's last lines, always kept
MAX_LINES = 120       # per test, so that one noisy test leaves room for the others
SHORT_LINES = 10      # per test in the closing summary
TEST = re.compile(r"^\d+/\d+ Test: (.+)$")


def failed_outputs(log):
    """(name, output lines, verdict) of each test the log records as not passed."""
    name, out, in_output, took = None, [], False, ""
    for line in log.splitlines():
        if m := TEST.match(line):
            name, out, in_output, took = m.group(1), [], False, ""
        elif line == "Output:":
            in_output = True
        elif line == "<end of output>":
            in_output = False
        elif in_output:
            if not (line.startswith("-----") and not out):
                out.append(line)
        elif line.startswith("Test time ="):
            took = " ".join(line.split()[3:])
        elif name and line.startswith("Test ") and line.endswith("."):
            if line != "Test Passed.":
                yield name, out, f"{line} (after {took})"
            name = None


def digest(out):
    keep = set(range(max(0, len(out) - TAIL), len(out)))
    for i, line in enumerate(out):
        if KEY.search(line):
            keep.update(range(i, min(len(out), i + AFTER + 1)))
    lines, last = [], -1
    for i in sorted(keep):
        if i != last + 1:
            lines.append("    ...")
        lines.append("    " + out[i])
        last = i
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES // 2] + ["    ... (cut)"] + lines[-MAX_LINES // 2:]
    return lines


def in_short(out, most=SHORT_LINES, width=160):
    """The key lines alone, and the three after each GoogleTest "Failure" (what was expected)."""
    picked = []
    for i, line in enumerate(out):
        if KEY.search(line) and not line.startswith(("  File \"", "Traceback")):
            picked.append(line)
            if line.endswith("Failure"):
                picked += [x for x in out[i + 1:i + 4] if not x.startswith("[")]
    if not picked:
        picked = out[-3:]
    picked = list(dict.fromkeys(picked))  # a summary repeats gtest's failure lines
    if len(picked) > most:
        picked = picked[:most - 1] + [f"... and {len(picked) - most + 1} more"]
    return ["  " + (p if len(p) <= width else p[:width] + "...") for p in picked]


def main():
    log_path = Path(sys.argv[1]) / "Testing" / "Temporary" / "LastTest.log"
    try:
        log = log_path.read_text(errors="replace")
    except OSError as e:
        print(f"ctest-digest: cannot read {log_path}: {e.strerror}")
        return 1
    failed = list(failed_outputs(log))
    print(f"\n==== Why the {len(failed)} failed test(s) in {sys.argv[1]} failed ====")
    for name, out, verdict in failed:
        print(f"\n--- {name}: {verdict}")
        print("\n".join(digest(out)))
    # Last, the shortest account: the log's very end is what survives the most cutting.
    print(f"\n==== In short ({sys.argv[1]}) ====")
    for name, out, verdict in failed:
        print(f"{name}: {verdict}")
        print("\n".join(in_short(out)))
    if not failed:
        print("no failed test recorded in LastTest.log")
    return 0


if __name__ == "__main__":
    sys.exit(main())
