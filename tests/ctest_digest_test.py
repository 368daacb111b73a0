#!/usr/bin/env python3
"""Tests of scripts/ctest-digest.py against a LastTest.log written by a real ctest run of a small
project: one test passes, one fails as a GoogleTest shard does, one fails as Python's unittest
does, and the digest must end with why each failed one failed."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DIGEST = os.path.join(HERE, "..", "scripts", "ctest-digest.py")

GTEST_FAILURE = r'''
for i in $(seq 1 80); do echo "[       OK ] Filler.Test$i (0 ms)"; done
echo "[ RUN      ] Suite.Breaks"
echo "/src/core/thing_test.cc:42: Failure"
echo "Expected equality of these values:"
echo "  Answer()"
echo "    Which is: 41"
echo "[  FAILED  ] Suite.Breaks (3 ms)"
for i in $(seq 1 40); do echo "[       OK ] More.Test$i (0 ms)"; done
echo "run_shard: 121 tests, 1 failed, 0 crashed"
echo "  failed: Suite.Breaks"
exit 1
'''

UNITTEST_FAILURE = r'''
echo "test_fine (test_x.X.test_fine) ... ok"
echo "======================================================================"
echo "FAIL: test_waits (test_x.X.test_waits)"
echo "----------------------------------------------------------------------"
echo "Traceback (most recent call last):"
echo '  File "/t/test_x.py", line 9, in test_waits'
echo "    self.assertEqual(state, 'running')"
echo "AssertionError: 'pending' != 'running'"
echo "FAILED (failures=1)"
exit 1
'''


class CtestDigestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ctest-digest-")
        src, build = os.path.join(cls.dir, "src"), os.path.join(cls.dir, "build")
        os.makedirs(src)
        for name, body in (("gtest_shard", GTEST_FAILURE), ("unittest", UNITTEST_FAILURE),
                           ("passes", "echo all good\n")):
            with open(os.path.join(src, name + ".sh"), "w") as f:
                f.write(body)
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.20)\nproject(digest NONE)\nenable_testing()\n"
                    + "".join(f"add_test(NAME {n} COMMAND sh ${{CMAKE_SOURCE_DIR}}/{n}.sh)\n"
                              for n in ("gtest_shard", "unittest", "passes")))
        subprocess.run(["cmake", "-S", src, "-B", build], check=True, capture_output=True)
        r = subprocess.run(["ctest", "-j", "2"], cwd=build, capture_output=True, text=True)
        assert r.returncode != 0, r.stdout
        cls.out = subprocess.run([sys.executable, DIGEST, build], capture_output=True, text=True, check=True).stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def test_the_end_says_which_tests_failed_and_why(self):
        short = self.out[self.out.index("==== In short"):]
        self.assertNotIn("passes", short)
        self.assertIn("gtest_shard: Test Failed. (after", short)
        self.assertIn("  /src/core/thing_test.cc:42: Failure\n  Expected equality of these values:\n    Answer()\n"
                      "      Which is: 41\n", short)
        self.assertIn("  failed: Suite.Breaks", short)
        self.assertIn("unittest: Test Failed.", short)
        self.assertIn("  FAIL: test_waits (test_x.X.test_waits)", short)
        self.assertIn("  AssertionError: 'pending' != 'running'", short)
        # Short enough for the tail of a CI log.
        self.assertLess(len(short), 1200, short)

    def test_the_detail_keeps_the_values_and_skips_the_passing_lines(self):
        detail = self.out[:self.out.index("==== In short")]
        self.assertIn("    Which is: 41", detail)
        self.assertIn('    self.assertEqual(state, \'running\')', detail)
        self.assertNotIn("Filler.Test3 ", detail)
        self.assertNotIn("all good", detail)


if __name__ == "__main__":
    unittest.main()
