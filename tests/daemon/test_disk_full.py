"""A full disk under the daemon's state: the request fails with a clear message, nothing that
was acknowledged is lost, and the daemon serves on (root only: it mounts a small tmpfs); a full
run directory postpones a launch instead of failing the job. And faults strace injects: a store
that fails just as rotad records a job's start, after launching it, and a shepherd that cannot
fork the job."""
import os
import shutil
import subprocess
import time
import unittest

from harness import BIN, IS_ROOT, Rotad, SMALL_CLUSTER, DaemonTest, strace_attached, strace_injects, until, wait_for


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


@unittest.skipUnless(can_mount(), "needs root and permission to mount a tmpfs")
class RunDirFullTest(unittest.TestCase):
    """The run directory (where each launch's spec goes) full while the store has room: the job
    is not at fault, so it waits and starts once there is room again, instead of failing."""

    def setUp(self):
        self.d = Rotad(SMALL_CLUSTER)
        self.addCleanup(self.d.cleanup)
        self.run_dir = os.path.join(self.d.state, "run")
        os.makedirs(self.run_dir)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", self.run_dir], check=True)
        self.addCleanup(lambda: subprocess.run(["umount", "-l", self.run_dir], check=False))
        self.d.start()

    def test_a_job_that_cannot_be_launched_for_want_of_room_waits_and_starts_later(self):
        filler = os.path.join(self.run_dir, "filler")
        subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=4k"], capture_output=True, check=False)
        job = self.d.submit("--gpus", "1", "--", "sh", "-c", "echo ran >> runs")
        note = wait_for(lambda: [e for e in self.d.show(job)["events"] if "Not started" in e["reason"]],
                        what="the postponed launch in the job's history")[0]
        self.assertIn("No space left on device", note["reason"])
        self.assertRegex(note["reason"], r"tried again in \d+ s$")
        rec = self.d.job(job)
        self.assertEqual(rec["state"], "pending")
        self.assertEqual(rec["pending"]["reason"], "start_retry")
        os.unlink(filler)
        self.d.wait_state(job, "completed", timeout=30)
        starts = [e for e in self.d.show(job)["events"] if e["to"] == "running"]
        self.assertEqual(len(starts), 1, starts)
        with open(os.path.join(self.d.dir, "runs")) as f:
            self.assertEqual(f.read(), "ran\n")


class ShepherdUnavailableTest(DaemonTest):
    """rota-shepherd that cannot be run for a while (being replaced by an upgrade, say): the
    standby shepherds are started again once it can be run again."""

    def standbys(self):
        r = subprocess.run(["ps", "-o", "args=", "--ppid", str(self.d.proc.pid)], capture_output=True, text=True)
        return [line for line in r.stdout.splitlines() if "--standby" in line]

    def test_standbys_that_could_not_be_started_are_started_later(self):
        self.d.stop()
        shepherd = self.path("rota-shepherd")
        shutil.copy(os.path.join(BIN, "rota-shepherd"), shepherd)
        self.d.start(args=["--shepherd", shepherd])
        wait_for(lambda: len(self.standbys()) == 4, what="rotad's standby shepherds")
        os.chmod(shepherd, 0o644)  # there, but not executable: exec fails with EACCES, even for root
        job = self.d.submit("--gpus", "1", "--", "sh", "-c", "echo ran >> runs")  # a standby runs it
        self.d.wait_state(job, "completed")
        wait_for(lambda: "cannot start standby shepherds" in self.d.read_log(), what="the failed top-up")
        # Three left (the fourth, the job's shepherd, exits after the job).
        wait_for(lambda: len(self.standbys()) == 3, what="three standbys")
        time.sleep(0.2)
        self.assertEqual(len(self.standbys()), 3, "topped up although the shepherd could not be run")
        os.chmod(shepherd, 0o755)
        wait_for(lambda: len(self.standbys()) == 4, timeout=30, what="the standbys started again")
        log = self.d.read_log()
        self.assertIn("standby shepherds started again", log)
        self.assertEqual(log.count("cannot start standby shepherds"), 1, "said at every retry")


@unittest.skipUnless(strace_injects(), "needs strace with fault injection (ptrace allowed)")
class StartNotRecordedTest(DaemonTest):
    """rotad launches a job before it records the start (design.md, "Starting the next job before
    recording the last one's end"). When that record fails, the launch is withdrawn: the job is
    killed, its shepherd reaped and its files removed, and the job waits to be tried again."""

    def rotad_children(self):
        r = subprocess.run(["ps", "-o", "stat=,args=", "--ppid", str(self.d.proc.pid)], capture_output=True, text=True)
        return [line.split(None, 1) for line in r.stdout.splitlines() if line.strip()]

    def standby_pids(self):
        """The standbys: rotad's shepherds with no job (no child) of their own."""
        r = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.d.proc.pid)], capture_output=True, text=True)
        return [int(p) for p in r.stdout.split()
                if not subprocess.run(["ps", "-o", "pid=", "--ppid", p], capture_output=True, text=True).stdout.strip()]

    def test_a_start_the_store_cannot_record_is_withdrawn_and_tried_again_later(self):
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go"))
        self.d.wait_state(first, "running")
        second = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo ran >> runs; " + until("go2"))
        # Four standbys again, and the first job's shepherd: the daemon is idle until `go`.
        wait_for(lambda: len(self.rotad_children()) == 5, what="rotad's standby shepherds")
        # The first store write after the first job's end is the second job's start.
        with strace_attached([self.d.proc.pid], "-e", "trace=pwrite64", "-e", "inject=pwrite64:error=ENOSPC:when=1"):
            self.open_gate("go")
            self.d.wait_state(first, "completed")
        self.assertIn(f"job {second}: cannot record its start", self.d.read_log())
        rec = self.d.job(second)
        self.assertEqual(rec["state"], "pending")
        self.assertEqual(rec["pending"]["reason"], "start_retry")
        self.assertGreater(rec["pending"]["expected_start"], 0)
        wait_for(lambda: f"job {second}: withdrawn launch ended" in self.d.read_log(), what="the withdrawal")
        zombies = [c for c in self.rotad_children() if c[0].startswith("Z")]
        self.assertEqual(zombies, [], "the withdrawn launch's shepherd was not reaped")
        left = [f for f in os.listdir(os.path.join(self.d.state, "run")) if f.split(".")[0] in (str(first), str(second))]
        self.assertEqual(left, [])
        # Tried again after the back-off: started once (as recorded), and it runs to its end.
        self.d.wait_state(second, "running", timeout=30)
        self.open_gate("go2")
        self.d.wait_state(second, "completed")
        starts = [e for e in self.d.show(second)["events"] if e["to"] == "running"]
        self.assertEqual(len(starts), 1, starts)
        self.assertIn("ran", self.read("runs"))

    def test_a_restart_during_a_withdrawal_keeps_the_job_pending(self):
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go"))
        self.d.wait_state(first, "running")
        second = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo ran >> runs; " + until("go2"))
        wait_for(lambda: len(self.rotad_children()) == 5, what="rotad's standby shepherds")
        # The standbys: the shepherds with no job of their own. Whichever gets the second job is
        # held 3 s in any rename (the atomic write of a result), so that rotad dies while it
        # still runs: a double fault, the store failing and then rotad.
        standbys = self.standby_pids()
        self.assertEqual(len(standbys), 4, standbys)
        with strace_attached(standbys, "-e", "trace=rename,renameat,renameat2",
                             "-e", "inject=rename,renameat,renameat2:delay_enter=3000000"):
            with strace_attached([self.d.proc.pid], "-e", "trace=pwrite64", "-e", "inject=pwrite64:error=ENOSPC:when=1"):
                self.open_gate("go")
                wait_for(lambda: f"job {second}: cannot record its start" in self.d.read_log(), what="the withdrawal")
                self.d.kill9()
            self.d.start()
            # The withdrawn launch is no launch: the job is still waiting, not started and killed.
            self.assertNotIn("launched before the restart", self.d.read_log())
            self.assertIn(self.d.job(second)["state"], ("pending", "running"))
        self.d.wait_state(first, "completed")
        self.d.wait_state(second, "running", timeout=30)
        self.open_gate("go2")
        self.d.wait_state(second, "completed")
        starts = [e for e in self.d.show(second)["events"] if e["to"] == "running"]
        self.assertEqual(len(starts), 1, starts)

    def test_a_shepherd_that_cannot_fork_the_job_requeues_it_to_be_tried_again(self):
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go"))
        self.d.wait_state(first, "running")
        second = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo ran >> runs")  # no --requeue
        wait_for(lambda: len(self.rotad_children()) == 5, what="rotad's standby shepherds")
        standbys = self.standby_pids()
        self.assertEqual(len(standbys), 4, standbys)
        # Whichever standby gets the second job cannot make its process: out of processes.
        with strace_attached(standbys, "-e", "trace=clone,clone3", "-e", "inject=clone,clone3:error=EAGAIN"):
            self.open_gate("go")
            requeue = wait_for(lambda: [e for e in self.d.show(second)["events"] if e["to"] == "pending" and e["from"] == "running"],
                               what="the second job's requeue")[0]
        self.assertIn("cannot fork: Resource temporarily unavailable (requeued)", requeue["reason"])
        self.d.wait_state(second, "completed", timeout=30)
        starts = [e for e in self.d.show(second)["events"] if e["to"] == "running"]
        self.assertEqual(len(starts), 2, starts)
        self.assertEqual(self.read("runs"), "ran\n")

    def test_a_cancel_for_a_failed_after_ok_job_the_store_cannot_record_still_never_starts_it(self):
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go") + "exit 3")
        self.d.wait_state(first, "running")
        second = self.d.submit("--after-ok", str(first), "--", "sh", "-c", "echo ran >> runs")
        wait_for(lambda: len(self.rotad_children()) == 5, what="rotad's standby shepherds")
        # The first store write after the first job's end is the second job's cancel.
        with strace_attached([self.d.proc.pid], "-e", "trace=pwrite64", "-e", "inject=pwrite64:error=ENOSPC:when=1"):
            self.open_gate("go")
            self.d.wait_state(first, "failed")
        self.assertIn(f"job {second}: cannot record its cancel", self.d.read_log())
        # Still waiting, held out of the passes: never started.
        time.sleep(0.5)
        rec = self.d.job(second)
        self.assertEqual((rec["state"], rec["pending"]["reason"]), ("pending", "dependency"))
        self.assertFalse(os.path.exists(self.path("runs")))
        # The next pass (here for another job's submission) records the cancel, with the reason.
        self.d.wait_state(self.d.submit("--", "true"), "completed")
        rec = self.d.wait_state(second, "cancelled")
        self.assertEqual(rec["end_reason"], f"Cancelled: job {first}, which it waited for (--after-ok), ended: Failed(exit 3)")
        self.assertFalse(os.path.exists(self.path("runs")))
        self.assertEqual(self.d.read_log().count(f"job {second}: cannot record its cancel"), 1)


if __name__ == "__main__":
    unittest.main()
