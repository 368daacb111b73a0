"""How a job ended that Slurm no longer lists (slurmctld forgets an ended job after MinJobAge: 2 s
here, 300 s by default), through real rotad and rota processes on a real Slurm: with Slurm's
accounting (slurmdbd on MariaDB, started by slurm_cluster.py), rotad asks sacct and the job ends
as it did in Slurm; without it, the end is said to be unknown. Both when rotad was away (killed,
restarted) and when it did not read Slurm's queue meanwhile (stopped with SIGSTOP)."""
import datetime
import json
import os
import signal
import time
import unittest

from harness import DEFAULT_USER, DaemonTest, wait_for
from slurm_cluster import SlurmCluster, accounting_missing, slurm_config, slurm_missing


class ForgottenEndsTest(DaemonTest):
    ACCOUNTING = True

    def setUp(self):
        self.cluster = SlurmCluster(accounting=self.ACCOUNTING, min_job_age=2).start()
        self.addCleanup(self.cluster.stop)
        self.CONFIG = slurm_config(self.cluster)
        super().setUp()

    def context(self, job, e):
        """An AssertionError that says what rotad and Slurm held when waiting for `job` failed."""
        return AssertionError(f"{e}: job {self.d.job(job)}; Slurm {self.cluster.jobs()}; rotad:\n"
                              + self.d.read_log()[-3000:])

    def ended(self, job, state):
        try:
            return self.d.wait_state(job, state, timeout=30)
        except AssertionError as e:
            raise self.context(job, e)

    def forgotten(self, job):
        """Waits until slurmctld no longer lists Rota job `job` (it purges ended jobs about every 10 s)."""
        wait_for(lambda: f"rota-{job}" not in self.cluster.jobs(), timeout=90, interval=0.5,
                 what=f"slurmctld to forget rota-{job}")

    def running(self, *jobs):
        for job in jobs:
            try:
                wait_for(lambda: any(s == "RUNNING" for s, _, _ in self.cluster.jobs().get(f"rota-{job}", [])),
                         timeout=30, what=f"rota-{job} to run in Slurm")
                self.d.wait_state(job, "running")
            except AssertionError as e:
                raise self.context(job, e)

    def ended_while_rotad_was_away(self):
        """A job that exits 3 and one that root cancels with scancel, both while rotad is dead and
        long enough before it comes back that Slurm forgot them."""
        gate = os.path.join(self.d.dir, "go-away")
        mark = f"echo ran >> {self.d.dir}/ran-$ROTA_JOB_ID; "
        three = self.d.submit("--", "sh", "-c", mark + f"until [ -e {gate} ]; do sleep 0.1; done; exit 3")
        cancelled = self.d.submit("--", "sh", "-c", mark + "sleep 300")
        self.running(three, cancelled)
        # RUNNING in Slurm is the allocation, not yet the script: a cancel before the script began
        # would leave nothing to check that it ran once.
        for job in (three, cancelled):
            wait_for(lambda: os.path.exists(self.path(f"ran-{job}")), timeout=30,
                     what=f"rota-{job}'s script to start")
        self.d.kill9()
        open(gate, "w").close()
        self.cluster.run("scancel", "-n", f"rota-{cancelled}")
        self.forgotten(three)
        self.forgotten(cancelled)
        self.d.start()
        return three, cancelled

    def ran_once(self, *jobs):
        for job in jobs:
            self.assertEqual(self.read(f"ran-{job}"), "ran\n", f"job {job}")

    def ended_while_rotad_did_not_read(self):
        """A job that exits 3 while rotad is stopped (SIGSTOP) until Slurm forgot it."""
        gate = os.path.join(self.d.dir, "go-stopped")
        job = self.d.submit("--", "sh", "-c", f"until [ -e {gate} ]; do sleep 0.1; done; exit 3")
        self.running(job)
        os.kill(self.d.proc.pid, signal.SIGSTOP)
        try:
            open(gate, "w").close()
            self.forgotten(job)
        finally:
            os.kill(self.d.proc.pid, signal.SIGCONT)
        return job


@unittest.skipIf(accounting_missing(), accounting_missing())
class WithAccountingTest(ForgottenEndsTest):
    def test_jobs_that_ended_while_rotad_was_away_end_as_slurm_recorded_them(self):
        three, cancelled = self.ended_while_rotad_was_away()
        done = self.ended(three, "failed")
        self.assertEqual(done["end_reason"], "Failed(exit 3)")
        self.assertEqual(done["exit_code"], 3)
        gone = self.ended(cancelled, "failed")
        self.assertEqual(gone["end_reason"], "Failed(signal 15: cancelled in Slurm by uid 0, not through Rota)")
        self.assertIn("(from Slurm's accounting)", self.d.read_log())
        self.assertIn("Slurm's accounting asked at once for the 2 jobs launched before the restart", self.d.read_log())
        self.ran_once(three, cancelled)
        # Slurm's end time, not rotad's restart: the run was shorter than rotad's absence.
        self.assertLess(done["end_time"], done["start_time"] + 60)

    def test_a_job_slurm_forgot_while_rotad_did_not_read_ends_as_slurm_recorded_it(self):
        job = self.ended_while_rotad_did_not_read()
        done = self.ended(job, "failed")
        self.assertEqual(done["end_reason"], "Failed(exit 3)")
        # A later run of the same Rota job is told from this one: a requeue submits a new Slurm job.
        again = self.d.submit("--", "sh", "-c", "exit 0")
        self.assertEqual(self.d.wait_state(again, "completed")["end_reason"], "Completed")

    def test_accounting_that_does_not_answer_is_asked_again_then_the_end_is_unknown(self):
        self.cluster.stop_accounting()
        job = self.ended_while_rotad_did_not_read()
        done = self.ended(job, "node_fail")
        self.assertIn("how it ended is not known", done["end_reason"])
        self.assertIn("Slurm's accounting does not answer", done["end_reason"])
        self.assertIn("asked again", self.d.read_log())

    def usage(self):
        """DEFAULT_USER's row of `rota usage` (None: none yet)."""
        return next((u for u in json.loads(self.d.rota("usage", "--json").stdout)["users"]
                     if u["name"] == DEFAULT_USER), None)

    def outside_charged(self, outside):
        """DEFAULT_USER's usage row once Slurm job `outside` (outside Rota) is charged."""
        return wait_for(lambda: (lambda u: u if u and u["outside_gpu_hours"] > 0 else None)(self.usage()),
                        timeout=30, what=f"Slurm job {outside} charged")

    def test_a_job_outside_rota_that_ran_while_rotad_was_away_is_charged_once(self):
        # A plain sbatch on 2 GPUs that starts and ends while rotad is dead: found in Slurm's
        # accounting at the restart and charged to its owner, once (not again after another
        # restart). Rota's own job that ended meanwhile is Rota's, not outside Rota.
        ours = self.d.submit("--", "sh", "-c", "sleep 2")
        self.running(ours)
        self.d.kill9()
        start = time.time()
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:2", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 3", user=DEFAULT_USER).stdout.strip()
        active = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING")
        wait_for(lambda: self.cluster.run("squeue", "-h", "-j", outside, "-o", "%T", check=False).stdout.strip()
                 not in active, timeout=60, interval=0.5, what=f"Slurm job {outside} to end")
        wait_for(lambda: "COMPLETED" in self.cluster.run("sacct", "-n", "-X", "-j", outside, "-o", "State").stdout,
                 timeout=30, interval=0.5, what=f"Slurm's accounting of job {outside}")
        self.d.start()

        row = self.outside_charged(outside)
        seconds = row["outside_gpu_hours"] * 3600
        self.assertGreaterEqual(seconds, 2 * 2, row)  # 3 s on 2 GPUs (Slurm's seconds are whole)
        self.assertLessEqual(seconds, 2 * (time.time() - start + 1), row)
        self.assertIn("1 run(s) of jobs outside Rota ended while rotad was away", self.d.read_log())
        self.assertNotIn("keeps no", self.d.rota("status").stdout)  # gres/gpu accounted
        self.ended(ours, "completed")
        self.d.kill9()
        self.d.start()
        time.sleep(3)
        self.assertAlmostEqual(self.usage()["outside_gpu_hours"], row["outside_gpu_hours"], places=9)


    def test_each_run_of_a_job_outside_rota_that_slurm_requeued_while_rotad_was_away_is_charged(self):
        # A plain sbatch --requeue on one GPU that Slurm requeues after a second or more and that
        # then runs again to its end, all while rotad is dead: both runs are charged at the restart
        # (sacct without --duplicates lists the latest alone).
        self.d.kill9()
        start = time.time()
        outside = self.cluster.run("sbatch", "--parsable", "--requeue", "--gres=gpu:1", "-o", "/dev/null",
                                   "-D", "/tmp", "--wrap", "sleep 3", user=DEFAULT_USER).stdout.strip()

        def state():
            return self.cluster.run("squeue", "-h", "-j", outside, "-o", "%T", check=False).stdout.strip()
        wait_for(lambda: state() == "RUNNING", timeout=30, interval=0.2, what=f"Slurm job {outside} to run")
        time.sleep(1.5)
        self.cluster.run("scontrol", "requeue", outside, user=DEFAULT_USER)
        # Slurm holds a requeued job back a while (BeginTime); an admin may let it go at once. (Its
        # second run may then fail at once on this test node, the job's credential revoked: a run
        # all the same.)
        wait_for(lambda: state() == "PENDING", timeout=30, interval=0.2, what=f"Slurm job {outside} requeued")
        self.cluster.run("scontrol", "update", f"JobId={outside}", "StartTime=now", user=DEFAULT_USER)

        def runs():
            return self.cluster.run("sacct", "-n", "-X", "-D", "-j", outside, "-o", "State").stdout.split()
        wait_for(lambda: len(runs()) == 2 and runs()[1] in ("COMPLETED", "FAILED"), timeout=60, interval=0.5,
                 what=f"Slurm job {outside} run again to its end")
        self.assertEqual(runs()[0], "REQUEUED")
        self.d.start()

        row = self.outside_charged(outside)
        seconds = row["outside_gpu_hours"] * 3600
        # Each run as Slurm's accounting has it (the later one recorded under uid 0: charged to the
        # job's owner all the same).
        times = [line.split("|") for line in self.cluster.run(
            "sacct", "-n", "-X", "-D", "-P", "-j", outside, "-o", "Start,End").stdout.split()]
        self.assertEqual(len(times), 2, times)
        ran = sum(datetime.datetime.fromisoformat(e).timestamp() - datetime.datetime.fromisoformat(b).timestamp()
                  for b, e in times)
        self.assertGreaterEqual(ran, 1)
        self.assertAlmostEqual(seconds, ran, places=3)
        self.assertLessEqual(seconds, time.time() - start + 1, row)
        self.assertIn("2 run(s) of jobs outside Rota ended while rotad was away", self.d.read_log())
        users = json.loads(self.d.rota("usage", "--json").stdout)["users"]
        self.assertFalse(any(u["name"] == "root" and u["outside_gpu_hours"] > 0 for u in users), users)


@unittest.skipIf(slurm_missing() or accounting_missing(), slurm_missing() or accounting_missing())
class AccountingWithoutGpusTest(DaemonTest):
    """slurmdbd without gres/gpu among the accounted TRES: AllocTRES names no GPUs."""

    def setUp(self):
        self.cluster = SlurmCluster(accounting=True, min_job_age=2, accounting_tres="").start()
        self.addCleanup(self.cluster.stop)
        self.CONFIG = slurm_config(self.cluster)
        super().setUp()

    def test_rota_status_says_that_runs_outside_rota_while_rotad_is_away_cannot_be_charged(self):
        why = "Slurm's accounting keeps no GPUs (AccountingStorageTRES has no gres/gpu)"
        wait_for(lambda: why in self.d.rota("status").stdout, what="the accounting's gap in rota status")
        self.assertIn(why, self.d.read_log())
        # What it means: a plain sbatch that runs and ends while rotad is dead is not charged.
        self.d.kill9()
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:2", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 1", user=DEFAULT_USER).stdout.strip()
        wait_for(lambda: "COMPLETED" in self.cluster.run("sacct", "-n", "-X", "-j", outside, "-o", "State").stdout,
                 timeout=60, interval=0.5, what=f"Slurm's accounting of job {outside}")
        self.d.start()
        wait_for(lambda: why in self.d.rota("status").stdout, what="the gap said again after the restart")
        users = json.loads(self.d.rota("usage", "--json").stdout)["users"]
        self.assertFalse(any(u["outside_gpu_hours"] > 0 for u in users), users)


@unittest.skipIf(slurm_missing(), slurm_missing())
class WithoutAccountingTest(ForgottenEndsTest):
    ACCOUNTING = False

    def test_rota_status_says_that_slurm_keeps_no_accounting(self):
        wait_for(lambda: "Slurm keeps no accounting" in self.d.rota("status").stdout,
                 what="no accounting said in rota status")

    def test_without_accounting_an_end_slurm_forgot_is_said_to_be_unknown(self):
        three, cancelled = self.ended_while_rotad_was_away()
        for job in (three, cancelled):
            done = self.ended(job, "node_fail")
            self.assertIn("Slurm no longer lists it", done["end_reason"])
        # Not taken for submissions that never reached Slurm (which would run them again): their
        # launch files say Slurm listed them.
        self.ran_once(three, cancelled)
        job = self.ended_while_rotad_did_not_read()
        done = self.ended(job, "node_fail")
        self.assertIn("how it ended is not known", done["end_reason"])
        self.assertNotIn("accounting", done["end_reason"])  # nothing to ask: not a failure to say

    def test_a_launch_rotad_died_before_noting_is_not_sent_again_once_slurm_forgot_it(self):
        # rotad killed between sbatch's reply and noting it in the launch file (made here by
        # taking the note out of the file): the launch file says only that a launch began. Older
        # than Slurm's MinJobAge (2 s here, read from Slurm; rotad would otherwise assume 300 s),
        # a job Slurm does not list reached Slurm and ended: never sent again.
        gate = os.path.join(self.d.dir, "go-unnoted")
        job = self.d.submit("--", "sh", "-c", f"echo ran >> {self.d.dir}/ran-$ROTA_JOB_ID; "
                                              f"until [ -e {gate} ]; do sleep 0.1; done; exit 3")
        self.running(job)
        self.d.kill9()
        launch = os.path.join(self.d.state, "slurm", f"{job}.launch")
        with open(launch) as f:
            note = json.load(f)
        self.assertTrue(note["submitted"])
        self.assertTrue(note["slurm_id"])
        with open(launch, "w") as f:
            json.dump({k: note[k] for k in ("uid", "note", "written")}, f)
        open(gate, "w").close()
        self.forgotten(job)
        self.d.start()
        done = self.ended(job, "node_fail")
        self.assertIn("Slurm no longer lists it", done["end_reason"])
        time.sleep(2)
        self.ran_once(job)
        self.assertNotIn("did not go through", self.d.read_log())


if __name__ == "__main__":
    unittest.main()
