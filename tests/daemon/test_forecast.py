"""Start forecasts (issue 29) with a real rotad: run times learnt from the jobs that ended (the
user's jobs of the same name first), the scheduler played forward on them, so a job waiting behind
work that usually ends early is foreseen to start long before the plan on time limits says; the
running jobs' likely ends; every job's first forecast kept in the store; p90s calibrated on past
forecasts once twenty jobs have started (a later start on later ones), also after a restart;
`rota show`, `rota queue --start` and `rota advise` say it."""
import json
import time
import unittest

from harness import IS_ROOT, SMALL_CLUSTER, DaemonTest, ensure_user

OTHER = "rota-it-forecast2"


class ForecastTest(DaemonTest):
    def history(self, n, name="quick"):
        """`n` jobs of `name` that end at once against a 1-hour limit: that name runs a minute."""
        jobs = [self.d.submit("--gpus", "1", "--time", "1h", "--name", name, "--", "true") for _ in range(n)]
        for job in jobs:
            self.d.wait_state(job, "completed")
        return jobs

    def waited_history(self, n):
        """`n` jobs foreseen to wait behind two busy cards (each first forecast kept), started once
        the cards are freed, then ended: most were foreseen a minute or more ahead (later starts,
        which calibrate later forecasts; starts at once calibrate only those)."""
        self.history(3)  # the name runs a minute
        busy = self.busy()
        jobs = [self.d.submit("--gpus", "1", "--time", "1h", "--name", "quick", "--", "true") for _ in range(n)]
        # Each first forecast is kept by the pass that first sees its job; the cards are freed once
        # all are in the store.
        deadline = time.time() + 30
        while not all(self.stored(j)[0] > 0 for j in jobs):
            self.assertLess(time.time(), deadline, [(j, self.stored(j)) for j in jobs])
            time.sleep(0.05)
        for b in busy:
            self.d.rota("cancel", str(b))
        for job in jobs:
            self.d.wait_state(job, "completed")
        return jobs

    def busy(self, name="quick"):
        jobs = [self.d.submit("--gpus", "1", "--time", "2h", "--name", name, "--", "sleep", "300") for _ in range(2)]
        for job in jobs:
            self.d.wait_state(job, "running")
        return jobs

    def stored(self, job):
        [row] = self.d.query("SELECT forecast_at, forecast_start FROM jobs WHERE id = ?", (job,))
        return row

    def test_history_brings_the_forecast_far_before_the_plan_on_limits(self):
        self.history(3)
        busy = self.busy()
        began = time.time()
        job = self.d.submit("--gpus", "1", "--time", "1h", "--name", "quick", "--", "true")
        pending = self.d.job(job)["pending"]
        # The plan on limits: when a busy card's 2 hours end. The forecast: a minute after they
        # started (the least a prediction gives), or a few minutes on once they outrun it.
        self.assertGreater(pending["expected_start"], began + 2 * 3600 - 120)
        f = pending["forecast"]
        self.assertLess(f["p50"], began + 10 * 60, f)
        self.assertGreaterEqual(f["p50"], int(began) - 1)
        self.assertEqual(f["start"], f["p50"])
        self.assertEqual((f["runtime"], f["runtime_basis"], f["runtime_samples"]), (60, "user and name", 3))
        # Not calibrated yet: the p90 is the plan on time limits.
        self.assertEqual(f["calibrated_on"], 0)
        # Under the rota policy the play foresees the week's jobs again (the history's three, the
        # two running, this one), a week on: none comes before this job starts.
        self.assertEqual(f["arrivals"], 6)
        self.assertEqual(f["p90"], pending["expected_start"])
        # The running jobs' likely ends: a minute after their starts.
        for b in busy:
            rec = self.d.job(b)
            end = rec["predicted_end"]
            self.assertIn("gpu_hours", rec)
            self.assertEqual((end["basis"], end["samples"]), ("user and name", 3))
            self.assertLessEqual(end["time"], max(rec["start_time"] + 60, int(time.time()) + 300))
        # The job's first forecast is kept: when it was made, and what it foresaw.
        at, start = self.stored(job)
        self.assertGreaterEqual(at, int(began) - 1)
        self.assertGreater(start, 0)
        self.assertLess(start, began + 10 * 60)
        text = self.d.rota("show", str(job)).stdout
        self.assertRegex(text, r"\nExpectedStart: \S+ \S+ \(likely, foreseeing the last week's 6 jobs coming again; "
                               r"by \S+ \S+ if the jobs ahead run to their limits\)\n")
        self.assertRegex(text, r"\nPlannedStart: \S+ \S+ \(reserved: if every job ahead runs to its limit\)\n")
        self.assertIn(" limit (from the last 3 jobs of ", text)
        self.assertIn(" named quick)\n", text)
        running = self.d.rota("show", str(busy[0])).stdout
        self.assertRegex(running, r"\nLikelyEnd: \S+ \S+ \(from the last 3 jobs of \S+ named quick\)\n")
        # The calendar of the time ahead: running jobs with their likely ends, the waiting one at
        # its likely start for its likely run (when that is still this week).
        week = json.loads(self.d.rota("bookings", "--week", "--json").stdout)
        by_id = {a["job_id"]: a for a in week["ahead"]}
        self.assertLessEqual(by_id[busy[0]]["likely_end"], by_id[busy[0]]["end"])
        if f["p50"] + 60 < week["to"]:
            a = by_id[job]
            self.assertEqual((a["likely"], a["start"], a["end"] - a["start"]), (True, max(f["p50"], a["start"]), 60))
            self.assertEqual(a["limit_end"] - a["start"], 3600)
        grid = self.d.rota("bookings", "--week").stdout
        self.assertIn("running, likely to end ", grid)
        queue = self.d.rota("queue", "--start").stdout.splitlines()
        self.assertRegex(queue[0].rstrip(), r"START +P90$")
        [line] = [l for l in queue if l.split()[0] == str(job)]
        self.assertIn("~", line)

    def test_another_name_learns_from_the_user_and_someone_new_from_the_lab(self):
        self.history(3)
        self.busy(name="long")
        job = self.d.submit("--gpus", "1", "--time", "1h", "--name", "other", "--", "true")
        f = self.d.job(job)["pending"]["forecast"]
        self.assertEqual((f["runtime_basis"], f["runtime_samples"]), ("user", 3))

    def test_without_history_there_is_only_the_plan_on_limits(self):
        busy = self.busy()
        job = self.d.submit("--gpus", "1", "--time", "1h", "--", "true")
        pending = self.d.job(job)["pending"]
        self.assertGreater(pending["expected_start"], 0)
        # A forecast would be the plan again: none is given, nor passed off as the lab's history.
        self.assertNotIn("forecast", pending)
        running = self.d.job(busy[0])
        self.assertNotIn("predicted_end", running)
        self.assertIn("gpu_hours", running)
        advice = json.loads(self.d.rota("advise", "--json", str(job)).stdout)["jobs"][0]
        self.assertNotIn("forecast", advice)
        self.assertNotIn("PredictedRun", self.d.rota("show", str(job)).stdout)

    def test_ranges_are_calibrated_on_past_forecasts_and_survive_a_restart(self):
        # Twenty-four jobs foreseen to wait and then started (each first forecast kept), ended.
        jobs = self.waited_history(24)
        ahead = [start - at for at, start in map(self.stored, jobs)]
        self.assertGreaterEqual(sum(1 for a in ahead if a >= 60), 20, ahead)
        self.d.kill9()
        self.d.start()
        self.busy()
        job = self.d.submit("--gpus", "1", "--time", "1h", "--name", "quick", "--", "true")
        f = self.d.job(job)["pending"]["forecast"]
        self.assertGreaterEqual(f["calibrated_on"], 20)
        self.assertGreaterEqual(f["p90"], f["p50"])
        self.assertIn("90% by ", self.d.rota("show", str(job)).stdout)
        # The advice weighs the p90 and says the forecast.
        advice = json.loads(self.d.rota("advise", "--json", str(job)).stdout)["jobs"][0]
        self.assertEqual(advice["forecast"]["p50"], f["p50"])
        self.assertIn("Likely to start in about ", self.d.rota("advise", str(job)).stdout)

    def test_a_requeue_clears_the_first_forecast(self):
        # Covered in the store's unit test (store_test.cc); here: a cancelled waiting job keeps the
        # forecast it had, and a new job gets its own.
        self.busy()
        a = self.d.submit("--gpus", "1", "--time", "1h", "--", "true")
        self.d.job(a)
        at, _ = self.stored(a)
        self.assertGreater(at, 0)
        self.d.rota("cancel", str(a))
        self.d.wait_state(a, "cancelled")
        self.assertEqual(self.stored(a)[0], at)


class SizeByPredictionTest(ForecastTest):
    """`[policy] size_by = "prediction"`: the size factor on what the owner's history predicts,
    so a 10-hour request that always ends at once ranks before someone else's 2-hour request; the
    plan stays on limits."""
    CONFIG = SMALL_CLUSTER + """
[policy]
size_by = "prediction"
time_of_day = []
[policy.weights]
fairshare = 0
age = 0
"""

    # The tests of the base class run here too: forecasts are the same whatever sizes the jobs.

    def test_a_long_request_that_history_says_is_short_goes_first(self):
        for job in [self.d.submit("--gpus", "1", "--time", "10h", "--name", "quick", "--", "true") for _ in range(3)]:
            self.d.wait_state(job, "completed")
        busy = self.busy(name="busy")
        other = None
        if IS_ROOT:
            ensure_user(OTHER)
            other = self.d.submit("--gpus", "1", "--time", "2h", "--name", "eval", "--", "sleep", "300", user=OTHER)
        quick = self.d.submit("--gpus", "1", "--time", "10h", "--name", "quick", "--", "sleep", "300")
        p = self.d.job(quick)["pending"]
        self.assertEqual(p["size_on"], "prediction")
        self.assertEqual(p["forecast"]["runtime"], 60)
        # 1 GPU for a minute against the 256 GPU-hour scale: nearly 1; on its 10-hour limit 0.57.
        self.assertGreater(p["factors"]["size"], 0.99)
        # The plan is on limits: it starts when a busy card's 2-hour limit ends, not a minute after.
        self.assertGreater(p["expected_start"], int(time.time()) + 3600)
        self.assertIn("\nSize: on the run the owner's history predicts", self.d.rota("show", str(quick)).stdout)
        if other is None:
            return
        o = self.d.job(other)["pending"]
        self.assertEqual(o["size_on"], "limit")  # someone new: the lab's history tells nothing apart
        self.assertGreater(p["priority"], o["priority"])
        # A card comes free: the longer request goes first, though the other came earlier.
        self.d.rota("cancel", str(busy[0]))
        self.d.wait_state(quick, "running")
        self.assertEqual(self.d.job(other)["state"], "pending")


if __name__ == "__main__":
    unittest.main()
