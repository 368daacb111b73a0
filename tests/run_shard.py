#!/usr/bin/env python3
"""Runs one shard of a GoogleTest binary in one process, as the sanitized build does
(CMakeLists.txt), and goes on past a crash: when a test kills the process (an ASan report ends
it with abort), or the process dies between two tests (a thread an earlier test left), the
shard's tests that had not run yet run in a new process, so one crash does not hide the results
of the rest; the summary names where each death happened. Exit status 0 only when every test of
the shard passed and the process ended cleanly.

Usage: GTEST_TOTAL_SHARDS=N GTEST_SHARD_INDEX=I run_shard.py BINARY [GTEST ARGS...]"""
import os
import re
import signal
import subprocess
import sys

RUN = re.compile(r"^\[ RUN      \] (\S+)")
DONE = re.compile(r"^\[ +(OK|FAILED|SKIPPED) +\] (\S+)")
# The environment without the shard variables: the listing must see every test, and a run names
# its tests in a filter, which GoogleTest would shard again.
UNSHARDED = {k: v for k, v in os.environ.items() if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX")}


def shard_tests(binary, total, index):
    """The full names of the tests of shard `index` of `total`, chosen as GoogleTest chooses them:
    the i-th runnable test (in listed order, DISABLED_ ones left out) belongs to shard i % total.
    (--gtest_list_tests lists every test, whatever the shard variables say.)"""
    out = subprocess.run([binary, "--gtest_list_tests"], capture_output=True, text=True, check=True,
                         env=UNSHARDED).stdout
    names, suite = [], ""
    for line in out.splitlines():
        name = line.split("#", 1)[0].rstrip()
        if not name:
            continue
        if line.startswith(" "):
            name = name.strip()
            if not suite.startswith("DISABLED_") and not name.startswith("DISABLED_"):
                names.append(suite + name)
        else:
            suite = name
    return [n for i, n in enumerate(names) if i % total == index]


def how(rc):
    """An exit status as words: a negative one is the signal that ended the process."""
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit {rc}"


def main():
    binary, extra = sys.argv[1], sys.argv[2:]
    remaining = shard_tests(binary, int(os.environ.get("GTEST_TOTAL_SHARDS", "1")),
                            int(os.environ.get("GTEST_SHARD_INDEX", "0")))
    total = len(remaining)
    failed, crashed, other = [], [], []
    while remaining:
        proc = subprocess.Popen([binary, "--gtest_filter=" + ":".join(remaining)] + extra, env=UNSHARDED,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        started, running, last_done = set(), None, None
        for line in proc.stdout:
            sys.stdout.write(line)
            if m := RUN.match(line):
                running = m.group(1)
                started.add(running)
            elif (m := DONE.match(line)) and m.group(2) == running:
                if m.group(1) == "FAILED":
                    failed.append(running)
                running, last_done = None, running
        rc = proc.wait()
        sys.stdout.flush()
        remaining = [t for t in remaining if t not in started]
        if running is not None:
            crashed.append(running)
            print(f"run_shard: {running} ended the process ({how(rc)}); going on with the shard's other tests",
                  flush=True)
        elif rc != 0 and remaining:
            # Died between two tests (a thread or a child a test left behind, a signal).
            other.append(f"the process ended ({how(rc)}) after {last_done or 'no test'}, before its next test")
            print(f"run_shard: {other[-1]}; going on with the shard's other tests", flush=True)
        elif rc != 0 and not failed:
            # Every test ran: it ended badly at exit (the leak check) or in a global's constructor.
            other.append(f"{binary} ended with {how(rc)} outside any test, after {last_done or 'no test'}")
            print(f"run_shard: {other[-1]}", flush=True)
        if remaining and (rc == 0 or not started):
            # The binary ran no more of them: do not ask again.
            other.append("never ran: " + ", ".join(remaining))
            break
    print(f"run_shard: {total} tests, {len(failed)} failed, {len(crashed)} crashed"
          + "".join(f"\n  crashed: {t}" for t in crashed) + "".join(f"\n  failed: {t}" for t in failed)
          + "".join(f"\n  also: {t}" for t in other), flush=True)
    return 1 if failed or crashed or other else 0


if __name__ == "__main__":
    sys.exit(main())
