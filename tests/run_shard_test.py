#!/usr/bin/env python3
"""Tests of run_shard.py against a stand-in for a GoogleTest binary: a script that lists its
tests, honours the shard variables and --gtest_filter like GoogleTest, and aborts in the test
named by $CRASH (as an ASan report does)."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

FAKE = r'''#!/usr/bin/env python3
import os, sys
tests = [("Suite.", ["A", "B", "C"]), ("Param/Other.", ["D/0  # GetParam() = 1", "E/1  # GetParam() = 2"])]
names = [s + t.split("#")[0].strip() for s, ts in tests for t in ts]
if "--gtest_list_tests" in sys.argv:  # every test, as GoogleTest lists them whatever the shard
    for s, ts in tests:
        print(s)
        for t in ts:
            print("  " + t)
    sys.exit(0)
flt = [a.split("=", 1)[1].split(":") for a in sys.argv if a.startswith("--gtest_filter=")]
selected = [n for n in names if not flt or n in flt[0]]
total, index = int(os.environ.get("GTEST_TOTAL_SHARDS", 1)), int(os.environ.get("GTEST_SHARD_INDEX", 0))
run = [n for i, n in enumerate(selected) if i % total == index]
with open(os.environ["LOG"], "a") as log:
    log.write(" ".join(run) + "\n")
failed = False
for n in run:
    print("[ RUN      ] " + n, flush=True)
    if n == os.environ.get("CRASH"):
        print("==1==ERROR: AddressSanitizer: heap-use-after-free", flush=True)
        os.abort()
    if n == os.environ.get("FAIL"):
        print("[  FAILED  ] " + n + " (0 ms)")
        failed = True
    else:
        print("[       OK ] " + n + " (0 ms)", flush=True)
    if n == os.environ.get("DIE_AFTER"):  # a thread a test left behind crashes between tests
        os.kill(os.getpid(), 11)
if os.environ.get("LEAK"):  # LeakSanitizer's check at exit
    print("ERROR: LeakSanitizer: detected memory leaks", flush=True)
    sys.exit(23)
sys.exit(1 if failed else 0)
'''


class RunShardTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="run-shard-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.fake = os.path.join(self.dir, "fake_tests")
        with open(self.fake, "w") as f:
            f.write(FAKE)
        os.chmod(self.fake, stat.S_IRWXU)
        self.log = os.path.join(self.dir, "log")

    def run_shard(self, shards=1, index=0, **env):
        e = dict(os.environ, LOG=self.log, GTEST_TOTAL_SHARDS=str(shards), GTEST_SHARD_INDEX=str(index), **env)
        r = subprocess.run([sys.executable, os.path.join(HERE, "run_shard.py"), self.fake], env=e,
                           capture_output=True, text=True, timeout=60)
        with open(self.log) as f:
            runs = [line.split() for line in f]
        return r, runs

    def test_a_crash_does_not_hide_the_rest_of_the_shard(self):
        r, runs = self.run_shard(CRASH="Suite.B")
        self.assertEqual(r.returncode, 1, r.stdout)
        # The first process crashed in B; the second ran what had not started, without B.
        self.assertEqual(runs, [["Suite.A", "Suite.B", "Suite.C", "Param/Other.D/0", "Param/Other.E/1"],
                                ["Suite.C", "Param/Other.D/0", "Param/Other.E/1"]])
        self.assertIn("[       OK ] Param/Other.E/1", r.stdout)
        self.assertIn("5 tests, 0 failed, 1 crashed\n  crashed: Suite.B", r.stdout)

    def test_only_the_shards_tests_run_and_a_clean_shard_passes(self):
        r, runs = self.run_shard(shards=2, index=1)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(runs, [["Suite.B", "Param/Other.D/0"]])
        self.assertIn("2 tests, 0 failed, 0 crashed", r.stdout)

    def test_a_failure_fails_the_shard(self):
        r, runs = self.run_shard(FAIL="Suite.C")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(runs), 1)
        self.assertIn("failed: Suite.C", r.stdout)

    def test_a_death_between_tests_is_reported_and_the_rest_still_run(self):
        r, runs = self.run_shard(DIE_AFTER="Suite.B")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertEqual(runs[1], ["Suite.C", "Param/Other.D/0", "Param/Other.E/1"])
        self.assertIn("5 tests, 0 failed, 0 crashed\n  also: the process ended (killed by SIGSEGV) after Suite.B, "
                      "before its next test", r.stdout)

    def test_a_leak_reported_at_exit_fails_the_shard(self):
        r, runs = self.run_shard(LEAK="1")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertEqual(len(runs), 1)
        self.assertIn("ended with exit 23 outside any test, after Param/Other.E/1", r.stdout)


if __name__ == "__main__":
    unittest.main()
