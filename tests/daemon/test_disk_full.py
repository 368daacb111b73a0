"""A full disk under the daemon's state: the request fails with a clear message, nothing that
was acknowledged is lost, and the daemon serves on (root only: it mounts a small tmpfs)."""
import os
import subprocess
import unittest

from harness import IS_ROOT, DaemonTest, Rotad, SMALL_CLUSTER


def can_mount():
    if not IS_ROOT:
        return False
    d = "/tmp/rota-mount-probe-%d" % os.getpid()
    os.makedirs(d, exist_ok=True)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", d], check=False)
    os.rmdir(d)
    return ok


@unittest.skipUnless(can_mount(), "needs root and permission to mount a tmpfs")
class DiskFullTest(unittest.TestCase):
    def setUp(self):
        self.d = Rotad(SMALL_CLUSTER)
        self.addCleanup(self.d.cleanup)
        os.makedirs(self.d.state)
        # Room for the empty database (every table of the schema) and a few dozen submissions.
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=800k", "tmpfs", self.d.state], check=True)
        self.addCleanup(lambda: subprocess.run(["umount", "-l", self.d.state], check=False))
        self.d.start()

    def test_full_disk_refuses_submissions_and_keeps_acknowledged_ones(self):
        big = {"ROTA_TEST_PADDING": "x" * 20000}  # every job carries its environment to disk
        acknowledged = []
        failure = None
        for _ in range(200):
            r = self.d.rota("submit", "--parsable", "--gpus", "2", "--", "sleep", "60", env=big, check=False)
            if r.returncode != 0:
                failure = r
                break
            acknowledged.append(int(r.stdout))
        self.assertIsNotNone(failure, "the tmpfs never filled up")
        self.assertGreater(len(acknowledged), 2)
        self.assertEqual(failure.returncode, 1, failure.stderr)
        self.assertIn("full", failure.stderr.lower())
        self.assertEqual(len(failure.stderr.strip().splitlines()), 1, failure.stderr)
        # The daemon still serves, and every acknowledged job is there exactly once.
        jobs = self.d.api({"op": "queue", "all": True})["jobs"]
        self.assertEqual(sorted(j["id"] for j in jobs), acknowledged)
        # Room again: submissions work, ids continue.
        subprocess.run(["mount", "-o", "remount,size=20m", self.d.state], check=True)
        job = self.d.submit("--gpus", "2", "--", "true")
        self.assertGreater(job, acknowledged[-1])
        self.d.rota("cancel", *[str(j) for j in acknowledged + [job]], check=False)
        # And after a restart the same jobs are still recorded.
        self.d.kill9()
        self.d.start()
        after = {j["id"] for j in self.d.api({"op": "history", "since": 0, "all": True})["jobs"]}
        after |= {j["id"] for j in self.d.api({"op": "queue", "all": True})["jobs"]}
        self.assertTrue(set(acknowledged) <= after)


if __name__ == "__main__":
    unittest.main()
