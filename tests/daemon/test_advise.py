"""`rota advise` (op "advise") with a real rotad: for a job that waits behind running work, the
expected start from the scheduler's plan, the backlog ahead of it, and the cheapest ways to rent
its cards for its time limit from the lab's price table (a bad row named with its line, the rest
used); no advice to rent when the wait is short; only one's own jobs unless one is an admin.
Deadlines (`rota submit --deadline`): read in the lab's zone, refused when past or unreadable,
kept with the job, and said to be at risk in `rota advise` and `rota show` when the job's time
limit could carry it past them."""
import json
import os
import time
import unittest

from harness import IS_ROOT, SMALL_CLUSTER, DaemonTest, ensure_user

PRICES = """provider,region,instance_type,gpu_model,gpu_count,price_per_hour,spot_price,currency,date
aws,us-east-1,p4de.24xlarge,A100 80GB,8,40.0,,USD,2024-01-01
gcp,us-central1,a2-ultragpu-1g,A100 80GB,1,5.0,1.5,USD,2024-02-01
gcp,us-central1,a2-highgpu-1g,A100 40GB,1,3.0,,USD,2024-02-01
broken,row,with,too,few
aliyun,cn-beijing,gn7e,A100 80GB,1,30,,CNY,2024-03-01
"""


class AdviseTest(DaemonTest):
    def setUp(self):
        self.prices = None
        super().setUp()

    @classmethod
    def config(cls, prices, threshold):
        return SMALL_CLUSTER + f'\n[advice]\nprices = "{prices}"\nwait_threshold = "{threshold}"\n'

    def start_with(self, threshold="30m", prices_text=PRICES):
        path = self.path("gpu-prices.csv")
        if prices_text is not None:
            with open(path, "w") as f:
                f.write(prices_text)
            os.chmod(path, 0o644)
        self.d.stop()
        self.d.write_config(self.config(path, threshold))
        self.d.start()
        # Both whole cards busy for up to 2 hours: the next whole-GPU job waits about that long.
        self.busy = [self.d.submit("--gpus", "1", "--time", "2h", "--", "sleep", "300") for _ in range(2)]
        for job in self.busy:
            self.d.wait_state(job, "running")
        return path

    def advise(self, *args, user=None):
        return json.loads(self.d.rota("advise", "--json", *args, user=user).stdout)

    def test_a_waiting_job_gets_its_start_backlog_and_what_renting_would_cost(self):
        path = self.start_with()
        job = self.d.submit("--gpus", "2", "--time", "6h", "--name", "train", "--", "true")
        r = self.advise()
        self.assertEqual(r["prices"], path)
        self.assertEqual(len(r["prices_problems"]), 1)
        self.assertTrue(r["prices_problems"][0].startswith(path + ":5: expected 9 fields"), r["prices_problems"])
        [a] = r["jobs"]
        self.assertEqual((a["job_id"], a["state"], a["name"], a["cards"]), (job, "pending", "train", 2))
        self.assertTrue(a["advise"])
        wait = a["wait_seconds"]
        self.assertGreater(wait, 2 * 3600 - 60)
        self.assertLessEqual(wait, 2 * 3600)
        self.assertAlmostEqual(a["backlog_gpu_hours"], 4.0, delta=0.1)  # two cards up to 2 hours each
        self.assertEqual(a["hours"], 6)
        # Cheapest first within each currency, one row per provider, the 40GB row not matching.
        got = [(o["currency"], o["provider"], o["instances"], o["cost"]) for o in a["options"]]
        self.assertEqual(got, [("CNY", "aliyun", 2, 360.0), ("USD", "gcp", 2, 60.0), ("USD", "aws", 1, 240.0)])
        self.assertEqual(a["options"][1]["spot_cost"], 18.0)
        self.assertEqual(a["options"][1]["date"], "2024-02-01")
        text = self.d.rota("advise", str(job)).stdout
        self.assertIn(f"Job {job} (train)", text)
        self.assertRegex(text, r"expected to start in about (1h59m|2h00m) \(.*, reserved\)")
        self.assertIn("The lab's backlog ahead of it: 4 GPU-hours.", text)
        self.assertIn("60.00 USD  gcp us-central1 2 x a2-ultragpu-1g (1 x A100 80GB), spot about 18.00; prices of "
                      "2024-02-01", text)
        self.assertIn("1 row(s) of the price table left out", text)

    def test_a_short_wait_is_worth_waiting_for_and_a_missing_table_still_answers(self):
        self.start_with(threshold="1d", prices_text=None)
        job = self.d.submit("--gpus", "1", "--time", "1h", "--", "true")
        r = self.advise(str(job))
        self.assertIn("prices_error", r)
        [a] = r["jobs"]
        self.assertFalse(a["advise"])
        self.assertEqual(a["options"], [])
        self.assertIn("waiting is the better deal", self.d.rota("advise", str(job)).stdout)
        # A running job is not waiting; an unknown one is refused.
        self.assertEqual(self.advise(str(self.busy[0]))["jobs"][0]["state"], "running")
        r = self.d.rota("advise", "999", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no job 999", r.stderr)
        for bad in ({"job_id": "1"}, {"job_id": 1.5}):
            reply = self.d.api(dict({"op": "advise"}, **bad))
            self.assertEqual(reply["error"]["code"], "invalid_argument", bad)

    def test_a_deadline_the_wait_puts_at_risk_is_said_and_advised_on(self):
        self.start_with(threshold="1d")  # the wait (about 2 h) alone would not be worth renting for
        deadline = int(time.time()) + 3 * 3600  # 2 h of wait + 2 h of limit: it could end an hour late
        late = self.d.submit("--gpus", "2", "--time", "2h", "--deadline", str(deadline), "--", "true")
        safe = self.d.submit("--gpus", "1", "--time", "1h", "--deadline", "2099-01-01", "--", "true")
        r = {a["job_id"]: a for a in self.advise()["jobs"]}
        self.assertEqual((r[late]["deadline"], r[late]["deadline_at_risk"], r[late]["advise"]), (deadline, True, True))
        self.assertEqual((r[safe]["deadline_at_risk"], r[safe]["advise"]), (False, False))
        text = self.d.rota("advise", str(late)).stdout
        self.assertIn("is at risk: started then, it may run until", text)
        self.assertIn("Renting 2 x", text)
        show = self.d.rota("show", str(late)).stdout
        self.assertRegex(show, r"\nDeadline: .* \(at risk: if it starts when expected it may run until .*, its time limit\)\n")
        # rota show gives the advice too, before the history; none for a job on track.
        self.assertRegex(show, r"\nAdvice:\n  Job \d+ .*\n    The lab's backlog .*\n    Its deadline, .*, is at risk(.|\n)*\nHistory:")
        self.assertNotIn("Advice:", self.d.rota("show", str(safe)).stdout)
        # A date alone is the end of that day, in the lab's zone (UTC here).
        self.assertEqual(self.d.job(safe)["deadline"], 4070908800 + 86400)

    def test_deadlines_that_cannot_be_met_or_read_are_refused(self):
        for when, says in (("2020-01-01", "the deadline 2020-01-02 00:00 has passed"),
                           ("next week", 'cannot read "next week"'),
                           ("2026-02-30", "2026-02 has 28 days")):
            r = self.d.rota("submit", "--deadline", when, "--", "true", check=False)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(says, r.stderr)
        self.assertEqual(self.d.api({"op": "queue", "all": True})["jobs"], [])  # nothing was queued
        reply = self.d.api({"op": "submit", "job": {"command": ["true"], "cwd": "/tmp", "deadline": -5}})
        self.assertEqual(reply["error"]["code"], "invalid_argument")
        script = self.write_script("due.sh", "#!/bin/sh\n#ROTA --deadline 2099-06-30T12:00\ntrue\n")
        job = self.d.submit("--", script)
        self.assertEqual(self.d.job(job)["deadline"], 4086460800 + 12 * 3600)

    @unittest.skipUnless(IS_ROOT, "needs root to create a second real user")
    def test_one_sees_advice_on_ones_own_jobs_and_admins_on_everyones(self):
        self.start_with()
        other = "rota-it-advise"
        ensure_user(other)
        mine = self.d.submit("--gpus", "1", "--", "true")
        theirs = self.d.submit("--gpus", "1", "--", "true", user=other)
        self.assertEqual([a["job_id"] for a in self.advise()["jobs"]], [mine])
        self.assertEqual([a["job_id"] for a in self.advise(user=other)["jobs"]], [theirs])
        r = self.d.rota("advise", str(mine), user=other, check=False)
        self.assertNotEqual(r.returncode, 0)
        r = self.d.rota("advise", "--all", check=False)
        self.assertIn("for admins", r.stderr)
        self.assertEqual(sorted(a["job_id"] for a in self.advise("--all", user="root")["jobs"]), [mine, theirs])


if __name__ == "__main__":
    unittest.main()
