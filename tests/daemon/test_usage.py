"""The usage report (`rota usage`, op "usage") with a real rotad on simulated GPUs: GPU-hours of
finished and running jobs, the utilisation and idle hours measured from the GPU samples (jobs
declare their load with ROTA_SIM_GPU_UTIL), measures kept across a restart, and who sees what."""
import json
import time
import unittest

from harness import DEFAULT_USER, IS_ROOT, DaemonTest, ensure_user, wait_for

BUSY = {"ROTA_SIM_GPU_UTIL": "80", "ROTA_SIM_GPU_MEM": "2G"}
IDLE = {"ROTA_SIM_GPU_UTIL": "0", "ROTA_SIM_GPU_MEM": "2G"}
ME = DEFAULT_USER or __import__("getpass").getuser()


class UsageTest(DaemonTest):
    def usage(self, *args, user=None):
        return json.loads(self.d.rota("usage", "--json", *args, user=user).stdout)

    def row(self, reply, name):
        rows = [u for u in reply["users"] if u["name"] == name]
        return rows[0] if rows else None

    def test_finished_jobs_hours_utilisation_and_idle_time(self):
        busy = self.d.submit("--gpus", "1", "--", "sleep", "4", env=BUSY)
        idle = self.d.submit("--gpus", "1", "--", "sleep", "4", env=IDLE)
        for job in (busy, idle):
            self.d.wait_state(job, "completed", timeout=30)
        r = self.usage()
        me = self.row(r, ME)
        self.assertIsNotNone(me, r)
        self.assertEqual(me["jobs"], 2)
        # Two one-GPU runs of about 4 s each.
        self.assertGreater(me["week_gpu_hours"], 6 / 3600)
        self.assertLess(me["week_gpu_hours"], 12 / 3600)
        # Measured: one at 80 %, one at 0 %, for about as long: about 40 % together.
        self.assertIsNotNone(me["allocated_util"], me)
        self.assertGreater(me["allocated_util"], 25)
        self.assertLess(me["allocated_util"], 55)
        self.assertGreater(me["idle_gpu_hours"], 1.5 / 3600)
        self.assertLess(me["idle_gpu_hours"], 5 / 3600)
        self.assertEqual((me["no_shows"], me["overruns"]), (0, 0))
        today = r["days"][-1]
        self.assertEqual(r["days_covered"], 28)
        self.assertEqual(len(r["days"]), 28)
        self.assertAlmostEqual(today["total_gpu_hours"], me["week_gpu_hours"], delta=1 / 3600)
        self.assertIn(ME, today["gpu_hours"])
        self.assertGreaterEqual(r["totals"]["avg_wait_seconds"], 0)
        self.assertEqual(r["totals"]["allocated_util"], me["allocated_util"])
        text = self.d.rota("usage").stdout
        self.assertIn("This week (since", text)
        self.assertIn(ME, text)
        self.assertIn("Lab, last 28 days:", text)

    def test_running_jobs_count_and_their_measures_survive_a_restart(self):
        job = self.d.submit("--gpus", "1", "--", "sleep", "300", env=IDLE)
        self.d.wait_state(job, "running")
        first = wait_for(lambda: (lambda m: m if m and m["idle_gpu_hours"] > 2 / 3600 else None)(
            self.row(self.usage(), ME)), what="the idle job's idle time to be measured")
        self.assertGreater(first["week_gpu_hours"], 0)  # running: counted up to now
        self.d.stop()
        self.d.start()
        self.d.wait_state(job, "running")
        after = self.row(self.usage(), ME)
        # What was measured before the restart is still there (written when rotad stopped).
        self.assertGreaterEqual(after["idle_gpu_hours"], first["idle_gpu_hours"])
        self.assertGreaterEqual(after["week_gpu_hours"], first["week_gpu_hours"])
        self.assertEqual(after["allocated_util"], 0)

    def test_bad_requests_are_refused(self):
        for days in (0, 367, "7", 1.5):
            r = self.d.api({"op": "usage", "days": days})
            self.assertFalse(r["ok"], days)
            self.assertEqual(r["error"]["code"], "invalid_argument")
        r = self.d.rota("usage", "--days", "0", check=False)
        self.assertNotEqual(r.returncode, 0)
        r = self.d.api({"op": "usage", "days": 3})
        self.assertTrue(r["ok"], r)
        self.assertEqual(len(r["days"]), 3)


@unittest.skipUnless(IS_ROOT, "needs root to create a second real user")
class UsageVisibilityTest(DaemonTest):
    def test_users_see_their_own_rows_and_admins_everyones(self):
        other = "rota-it-usage"
        ensure_user(other)
        mine = self.d.submit("--gpus", "1", "--", "sleep", "2", env=BUSY)
        theirs = self.d.submit("--gpus", "1", "--", "sleep", "2", user=other, env=BUSY)
        for job in (mine, theirs):
            self.d.wait_state(job, "completed", timeout=30)
        as_me = json.loads(self.d.rota("usage", "--json").stdout)
        self.assertEqual([u["name"] for u in as_me["users"]], [ME])
        self.assertEqual(list(as_me["days"][-1]["gpu_hours"]), [ME])
        # The lab's totals still count both jobs.
        self.assertGreater(as_me["days"][-1]["total_gpu_hours"], sum(as_me["days"][-1]["gpu_hours"].values()))
        as_admin = json.loads(self.d.rota("usage", "--json", user="root").stdout)
        self.assertEqual(sorted(u["name"] for u in as_admin["users"]), sorted([ME, other]))


if __name__ == "__main__":
    unittest.main()
