"""Restarts and reloads: kill -9 of rotad with jobs running and waiting, jobs that end or vanish
while it is down, another process reading and backing up the store beside rotad, SIGHUP with a
good and a bad configuration."""
import os
import signal
import sqlite3
import subprocess
import time
import unittest

from harness import ROTAD, DaemonTest, SMALL_CLUSTER, strace_attached, strace_injects, until, wait_for


class RestartTest(DaemonTest):
    def test_kill9_while_jobs_run_and_wait_loses_and_duplicates_nothing(self):
        running = [self.d.submit("--", "sh", "-c", "echo ran; " + until("go")) for _ in range(2)]
        for j in running:
            self.d.wait_state(j, "running")
        waiting = [self.d.submit("--gpus", "2", "--", "sh", "-c", "echo ran") for _ in range(3)]
        before_recs = {j: self.d.job(j) for j in running + waiting}
        self.assertEqual(set(before_recs[j]["state"] for j in waiting), {"pending"})
        self.d.kill9()
        time.sleep(0.5)
        self.d.start()
        for j in running:
            self.assertEqual(self.d.job(j)["state"], "running")
        for j in waiting:  # the running jobs hold both cards: each still waits, with its old submit time
            rec = self.d.job(j)
            self.assertEqual(rec["state"], "pending")
            self.assertEqual(rec["submit_time"], before_recs[j]["submit_time"])
        self.open_gate("go")
        for j in running + waiting:
            self.d.wait_state(j, "completed", timeout=40)
        for j in running + waiting:
            self.assertEqual(self.read(f"rota-{j}.out").split(), ["ran"], f"job {j} ran more than once")
            starts = [e for e in self.d.show(j)["events"] if e["to"] == "running"]
            self.assertEqual(len(starts), 1, f"job {j} started {len(starts)} times")
        all_jobs = self.d.api({"op": "history", "since": 0, "all": True})["jobs"]
        self.assertEqual(sorted(j["id"] for j in all_jobs), sorted(running + waiting))
        self.assertIn("re-adopted", self.d.read_log())

    def test_another_process_reading_the_store_loses_none_of_rotads_writes(self):
        # An admin's sqlite3 or a backup opens the database beside rotad and closes it. Before the
        # fix, rotad's second connection (the notifier's) had dropped the POSIX locks SQLite holds
        # on the file: that other connection took itself for the last, deleted the -wal, and what
        # rotad wrote next went to the deleted file, unseen by others and gone at a restart.
        first = self.d.submit("--gpus", "2", "--", "true")
        self.d.wait_state(first, "completed")
        path = os.path.join(self.d.state, "rota.db")

        def peek():
            return dict(self.d.query("SELECT id, state FROM jobs"))

        self.assertEqual(peek().get(first), "completed")
        later = self.d.submit("--gpus", "2", "--", "true")
        self.d.wait_state(later, "completed")
        self.assertEqual(peek().get(later), "completed", "another process does not see rotad's later writes")
        # A backup made beside the running rotad (what sqlite3's .backup does, README) has both.
        copy = os.path.join(self.d.state, "..", "backup.db")
        src, dst = sqlite3.connect(path), sqlite3.connect(copy)
        try:
            src.backup(dst)
            self.assertEqual(dict(dst.execute("SELECT id, state FROM jobs").fetchall()),
                             {first: "completed", later: "completed"})
        finally:
            src.close()
            dst.close()
        self.d.kill9()
        self.d.start()
        self.assertEqual(self.d.job(later)["state"], "completed")
        self.assertEqual(peek().get(later), "completed")

    def test_job_that_ends_while_rotad_is_down_is_recorded(self):
        job = self.d.submit("--", "sh", "-c", "sleep 1; exit 4")
        self.d.wait_state(job, "running")
        base = self.d.cgroup_base()
        self.d.kill9()
        time.sleep(2.5)
        if base:  # its shepherd, whose daemon is gone, removed the job's cgroup itself
            self.assertFalse(os.path.exists(f"{base}/job-{job}"), "the ended job's cgroup was left")
        self.d.start()
        rec = self.d.job(job)
        self.assertEqual(rec["state"], "failed")
        self.assertEqual(rec["exit_code"], 4)
        self.assertLess(rec["end_time"] - rec["start_time"], 3)

    def test_job_whose_processes_vanish_is_node_fail_or_requeued(self):
        keep = self.d.submit("--requeue", "--", "sh", "-c",
                             "echo run >> runs-a; [ $(wc -l < runs-a) -ge 2 ] || { echo $$ > keep.pid; exec sleep 60; }")
        lose = self.d.submit("--", "sh", "-c", "echo $$ > lose.pid; exec sleep 60")
        for j in (keep, lose):
            self.d.wait_state(j, "running")
        wait_for(lambda: os.path.exists(self.path("keep.pid")) and os.path.exists(self.path("lose.pid")),
                 what="the jobs to start")
        self.d.kill9()
        # The machine "loses" the jobs: shepherds and jobs killed outright.
        # (Started for its job, or as a standby that was then handed it.)
        subprocess.run(["pkill", "-9", "-f", "rota-shepherd --(job [0-9]+ --spec|standby --run-dir) " + self.d.state],
                       check=False)
        for name in ("keep.pid", "lose.pid"):  # only this test's jobs: other tests run beside it
            try:
                os.kill(int(self.read(name)), signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.5)
        self.d.start()
        rec = self.d.wait_state(lose, "node_fail")
        self.assertIn("NodeFail", rec["end_reason"])
        rec = self.d.wait_state(keep, "completed", timeout=30)
        reasons = [e["reason"] for e in self.d.show(keep)["events"]]
        self.assertTrue(any("requeued" in r for r in reasons), reasons)


class LeftoverCgroupTest(DaemonTest):
    def test_a_start_removes_the_empty_job_cgroups_an_earlier_run_left(self):
        base = self.d.cgroup_base()
        if not base:
            self.skipTest("jobs are tracked by process group here")
        self.d.stop()
        empty, held = os.path.join(base, "job-77"), os.path.join(base, "job-78")
        os.makedirs(empty)
        os.mkdir(held)
        sleeper = subprocess.Popen(["sleep", "60"])

        def clean_up():
            sleeper.kill()
            sleeper.wait()
            wait_for(lambda: open(held + "/cgroup.procs").read() == "", what="the sleeper gone")
            os.rmdir(held)
        self.addCleanup(clean_up)
        with open(held + "/cgroup.procs", "w") as f:
            f.write(str(sleeper.pid))
        self.d.start()
        self.assertFalse(os.path.exists(empty), "an empty job cgroup was left")
        self.assertTrue(os.path.exists(held), "a job cgroup with a process in it was removed")
        self.assertIsNone(sleeper.poll(), "the process in a leftover cgroup was killed")
        self.assertIn("removed 1 empty job cgroup(s) left by an earlier run", self.d.read_log())


class StateLockTest(DaemonTest):
    def test_a_second_rotad_on_the_same_state_is_refused(self):
        second = subprocess.run([ROTAD, "--config", self.d.config_path, "--state-dir", self.d.state,
                                 "--socket", self.d.socket + ".2"], capture_output=True, text=True, timeout=20)
        self.assertEqual(second.returncode, 1, second.stderr)
        self.assertIn("another rotad is using " + self.d.state, second.stderr)
        self.assertEqual(self.d.api({"op": "hello"})["ok"], True)  # the first serves on


@unittest.skipUnless(strace_injects(), "needs strace with fault injection (ptrace allowed)")
class LaunchWindowTest(DaemonTest):
    """rotad killed between launching a job and recording its start (and the end of the job whose
    GPUs it got), at an exact system call that strace stops it at. rotad hands a launch to its standby shepherd with sendmsg(2), its only
    one; when that fails it starts a shepherd and opens a pidfd for it."""

    STANDBYS = 4  # rotad's kStandbys: how many standby shepherds it keeps

    # Every hand-over to a standby fails (as if they had died): rotad starts a shepherd instead,
    # and is killed at that shepherd's pidfd_open, the first after the standbys'. The job runs
    # on without a daemon that knows.
    AFTER_SPAWN = ["-e", "inject=sendmsg:error=EPIPE", "-e", f"inject=pidfd_open:signal=SIGKILL:when={STANDBYS + 1}"]
    # Killed as it hands the launch to a standby: the spec is written, no shepherd has it.
    BEFORE_HANDOVER = ["-e", "inject=sendmsg:signal=SIGKILL:when=1"]

    def crash_at_first_launch(self, script, faults):
        self.d.stop()
        self.d.start(wrapper=["strace", "-o", "/dev/null", "-e", "trace=sendmsg,pidfd_open"] + faults)
        self.wait_standbys(self.STANDBYS)
        job = self.d.submit("--", "sh", "-c", script)
        self.d.wait_death()
        return job

    def standbys(self):
        pattern = f"rota-shepherd --standby --run-dir {self.d.state}/run$"
        r = subprocess.run(["pgrep", "-c", "-f", pattern], capture_output=True, text=True)
        return int(r.stdout.strip() or 0)

    def wait_standbys(self, n):
        """Until `n` standby shepherds run (the pool tops up in the background: slow on a loaded
        machine); a timeout says the counts it saw."""
        seen = []

        def counted():
            seen.append(self.standbys())
            return seen[-1] == n
        try:
            wait_for(counted, timeout=60, what=f"{n} standby shepherds")
        except AssertionError as e:
            raise AssertionError(f"{e}; the last counts: {seen[-5:]}") from None

    def shepherd_runs(self, job):
        pattern = f"rota-shepherd --job {job} --spec {self.d.state}/"
        return subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0

    def starts(self, job):
        return [e for e in self.d.show(job)["events"] if e["to"] == "running"]

    def test_a_job_launched_just_before_the_crash_is_adopted_and_runs_once(self):
        job = self.crash_at_first_launch("echo ran >> runs; " + until("go"), self.AFTER_SPAWN)
        wait_for(lambda: os.path.exists(self.path("runs")), what="the launched job to start")
        self.assertTrue(self.shepherd_runs(job))
        self.d.start()
        rec = self.d.job(job)
        self.assertEqual(rec["state"], "running")
        self.assertEqual(len(rec["gpu_uuids"]), 1, rec)  # where it was launched
        # The card is taken: a second one-card job goes to the other card, not onto this one.
        other = self.d.submit("--", "true")
        self.d.wait_state(other, "completed")
        self.assertNotEqual(self.d.job(other)["gpu_uuids"], rec["gpu_uuids"])
        self.open_gate("go")
        self.d.wait_state(job, "completed")
        self.assertEqual(self.read("runs").split(), ["ran"], "the job ran more than once")
        starts = self.starts(job)
        self.assertEqual(len(starts), 1, starts)
        self.assertIn("recorded after a restart", starts[0]["reason"])
        self.assertIn("re-adopted", self.d.read_log())

    def test_a_job_launched_just_before_the_crash_that_ended_meanwhile_is_recorded(self):
        job = self.crash_at_first_launch("echo ran >> runs; exit 5", self.AFTER_SPAWN)
        wait_for(lambda: os.path.exists(self.path("runs")), what="the launched job to start")
        wait_for(lambda: not self.shepherd_runs(job), what="the job's shepherd to end")
        self.d.start()
        rec = self.d.job(job)
        self.assertEqual(rec["state"], "failed")
        self.assertEqual(rec["exit_code"], 5)
        self.assertEqual(self.read("runs").split(), ["ran"], "the job ran more than once")
        self.assertEqual(len(self.starts(job)), 1)

    def test_a_launch_no_shepherd_took_is_withdrawn_and_the_job_runs_once_later(self):
        job = self.crash_at_first_launch("echo ran >> runs", self.BEFORE_HANDOVER)
        self.assertTrue(os.path.exists(os.path.join(self.d.state, "run", f"{job}.spec")))
        time.sleep(0.3)
        self.assertFalse(os.path.exists(self.path("runs")), "the job ran with its daemon dead")
        self.d.start()
        self.d.wait_state(job, "completed")
        self.assertEqual(self.read("runs").split(), ["ran"])
        self.assertEqual(len(self.starts(job)), 1)
        self.assertIn("withdrew a launch", self.d.read_log())

    def test_killed_after_launching_the_next_job_before_recording_either_start_or_end(self):
        # rotad starts the job a finished one's GPUs go to before it records the finished one's
        # end. strace attaches to rotad's event loop just before the first job ends and kills it
        # at its first write to the store: the next job's start (the end comes after it).
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go") + "exit 3")
        self.d.wait_state(first, "running")
        second = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo ran >> runs; " + until("go2"))
        self.assertEqual(self.d.job(second)["state"], "pending")
        # The pool topped up again: four standbys, and the first job's shepherd (one of them before).
        self.wait_standbys(self.STANDBYS + 1)
        with strace_attached([self.d.proc.pid], "-e", "trace=pwrite64", "-e", "inject=pwrite64:signal=SIGKILL:when=1"):
            self.open_gate("go")
            self.d.wait_death()
        wait_for(lambda: os.path.exists(self.path("runs")), what="the next job to start with its daemon dead")
        self.d.start()
        rec = self.d.job(first)
        self.assertEqual((rec["state"], rec["exit_code"], rec["end_reason"]), ("failed", 3, "Failed(exit 3)"),
                         "the end was not collected from the result its shepherd left")
        rec = self.d.job(second)
        self.assertEqual(rec["state"], "running")
        starts = self.starts(second)
        self.assertEqual(len(starts), 1, starts)
        self.assertIn("recorded after a restart", starts[0]["reason"])
        self.open_gate("go2")
        self.d.wait_state(second, "completed")
        self.assertEqual(self.read("runs").split(), ["ran"], "the next job ran more than once")
        self.assertEqual(os.listdir(os.path.join(self.d.state, "run")).count(f"{first}.result"), 0)


class CancelAcrossRestartTest(DaemonTest):
    KILL_WAIT = 3

    def test_a_cancel_under_way_survives_a_restart(self):
        # The job shrugs off SIGTERM, so only the SIGKILL after the kill wait ends it.
        job = self.d.submit("--", "sh", "-c", "trap '' TERM; echo $$ > c.pid; while true; do sleep 0.2; done")
        self.d.wait_state(job, "running")
        wait_for(lambda: os.path.exists(self.path("c.pid")), what="the job to start")
        out = self.d.rota("cancel", str(job)).stdout
        self.assertIn(f"Stopping job {job}", out)
        self.d.kill9()  # before the SIGKILL was due
        self.d.start()
        rec = self.d.wait_state(job, "cancelled", timeout=30)
        self.assertEqual(rec["end_reason"], "Cancelled by " + rec["user"])
        reasons = [e["reason"] for e in self.d.show(job)["events"]]
        self.assertIn("Cancel requested by " + rec["user"], reasons)


class ReloadTest(DaemonTest):
    def test_sighup_applies_a_good_config_and_keeps_the_old_on_a_bad_one(self):
        job = self.d.submit("--", "sleep", "30")
        self.d.wait_state(job, "running")
        # Good: projects now listed, so an unknown one is refused.
        self.d.write_config(SMALL_CLUSTER + "\n[projects.nlp]\nhours = 10\n")
        self.d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "reloaded" in self.d.read_log(), what="the reload")
        r = self.d.rota("submit", "--project", "other", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        # Bad: a syntax error; the old configuration stays, the job keeps running.
        self.d.write_config(SMALL_CLUSTER + "\n[projects.nlp\n")
        self.d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "keeping the configuration" in self.d.read_log(), what="the refused reload")
        self.assertIn("rota.toml:", self.d.read_log().split("keeping the configuration")[0].splitlines()[-1])
        self.assertEqual(self.d.job(job)["state"], "running")
        r = self.d.rota("submit", "--project", "other", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        ok = self.d.submit("--project", "nlp", "--", "true")
        self.d.wait_state(ok, "completed")
        self.d.rota("cancel", str(job))

    def test_a_default_memory_limit_beyond_the_server_is_warned_of(self):
        warning = "default_mem_per_gpu = 921600G is more than this server's memory ("
        self.assertNotIn(warning, self.d.read_log())
        self.d.write_config('default_mem_per_gpu = "900T"\n' + SMALL_CLUSTER)
        self.d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: warning in self.d.read_log(), what="the warning at the reload")
        self.d.stop()
        self.d.start()
        self.assertEqual(self.d.read_log().count(warning), 2, "no warning at the start")
        # A limit the server can honour is not warned of.
        self.d.write_config('default_mem_per_gpu = "1G"\n' + SMALL_CLUSTER)
        self.d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.d.read_log().count("reloaded") == 2, what="the second reload")
        self.assertEqual(self.d.read_log().count(warning), 2)


if __name__ == "__main__":
    unittest.main()
