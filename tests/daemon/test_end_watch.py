"""A job's GPUs go to the next job as soon as its cgroup is empty, before its shepherd reports how
it ended (docs/design.md, "Freeing a job's GPUs when its cgroup empties"). Real rotad and rota
processes; each job takes both whole cards of the harness's cluster, so one waits for the other.
The first job's shepherd is stopped (SIGSTOP) before its job is let end (the "go" gate), so that
only the cgroup can tell rotad the job is gone."""
import contextlib
import os
import signal
import time
import unittest

from harness import DaemonTest, open_files, proc_stat, strace_attached, strace_injects, until, wait_for


def parent_of(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    raise AssertionError(f"no PPid for {pid}")


def exited(pid):
    """Whether process `pid` has exited (a zombie its stopped parent has not reaped, or gone)."""
    try:
        return proc_stat(pid)[0] == "Z"
    except FileNotFoundError:
        return True


class EndWatchTest(DaemonTest):
    def setUp(self):
        super().setUp()
        if self.d.cgroup_base() is None:
            self.skipTest("jobs are tracked by process group here: no cgroup to watch")

    def watches(self, job):
        """Whether rotad holds the job's cgroup.events open: it watches the cgroup for the job's end."""
        return f"{self.d.cgroup_base()}/job-{job}/cgroup.events" in open_files(self.d.proc.pid)

    def stop_shepherd_of(self, job, pid_file):
        """Stops the shepherd of `job`, whose leader wrote its pid to `pid_file`, once rotad watches
        the job's cgroup (from 20 ms after the launch), and then lets the job end (the "go" gate);
        the shepherd is continued again at the test's end."""
        wait_for(lambda: os.path.exists(self.path(pid_file)) and self.read(pid_file).strip(), what=pid_file)
        leader = int(self.read(pid_file))
        shepherd = parent_of(leader)
        with open(f"/proc/{shepherd}/cmdline", "rb") as f:
            self.assertIn(b"rota-shepherd", f.read())
        self.assertEqual(self.d.job(job)["state"], "running")
        wait_for(lambda: self.watches(job), what=f"rotad to watch job {job}'s cgroup")
        os.kill(shepherd, signal.SIGSTOP)
        self.addCleanup(self.resume, shepherd)
        self.assertFalse(exited(leader))
        self.open_gate("go")
        return leader, shepherd

    @staticmethod
    def resume(shepherd):
        with contextlib.suppress(ProcessLookupError):
            os.kill(shepherd, signal.SIGCONT)

    def test_the_next_job_starts_while_the_last_ones_shepherd_is_stopped(self):
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo $$ > first.pid; " + until("go") + "exit 3")
        second = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo ran > second.txt")
        _, shepherd = self.stop_shepherd_of(first, "first.pid")
        job = self.d.wait_state(second, "completed", timeout=10)
        self.assertEqual(self.read("second.txt").strip(), "ran")
        # Its end is the shepherd's to tell: until then the first job is running as far as the
        # store goes, and its exit status is not known.
        self.assertEqual(self.d.job(first)["state"], "running")
        time.sleep(1.1)  # the shepherd's own clock would now say a later second
        os.kill(shepherd, signal.SIGCONT)
        ended = self.d.wait_state(first, "failed")
        self.assertEqual(ended["end_reason"], "Failed(exit 3)")
        # Its run is charged up to the moment its cgroup emptied, before the next job started.
        self.assertLessEqual(ended["end_time"], job["start_time"])

    @unittest.skipUnless(strace_injects(), "needs strace with fault injection (ptrace allowed)")
    def test_a_job_that_enters_its_cgroup_late_is_watched_too(self):
        # Its standby shepherd is held 0.5 s in the clone3 that puts the job in its cgroup (strace
        # delays it): when rotad first looks, 20 ms after the launch, the cgroup is still empty.
        wait_for(lambda: len(self.d.standbys()) == 4, what="rotad's four standby shepherds")
        with strace_attached(self.d.standbys(), "-e", "trace=clone3", "-e", "inject=clone3:delay_enter=500000"):
            first = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo $$ > first.pid; " + until("go"))
            wait_for(lambda: os.path.exists(self.path("first.pid")), what="the first job's start")
        second = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo ran > second.txt")
        self.stop_shepherd_of(first, "first.pid")
        self.d.wait_state(second, "completed")
        self.assertEqual(self.read("second.txt").strip(), "ran")
        self.assertEqual(self.d.job(first)["state"], "running")

    def test_a_job_after_it_waits_for_its_end_to_be_known(self):
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo $$ > first.pid; " + until("go"))
        after = self.d.submit("--after-ok", str(first), "--gpus", "2", "--", "sh", "-c", "echo ran > after.txt")
        leader, shepherd = self.stop_shepherd_of(first, "first.pid")
        wait_for(lambda: exited(leader), what="the first job's exit")
        time.sleep(1.0)
        self.assertEqual(self.d.job(after)["state"], "pending")
        self.assertEqual(self.d.job(after)["pending"]["reason"], "dependency")
        self.assertFalse(os.path.exists(self.path("after.txt")))
        os.kill(shepherd, signal.SIGCONT)
        self.assertEqual(self.d.wait_state(first, "completed")["end_reason"], "Completed")
        self.d.wait_state(after, "completed")

    def test_a_process_the_job_left_behind_keeps_the_card(self):
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", "sleep 60 & echo $$ > first.pid; " + until("go"))
        second = self.d.submit("--gpus", "2", "--", "true")
        leader, shepherd = self.stop_shepherd_of(first, "first.pid")
        wait_for(lambda: exited(leader), what="the first job's leader to exit")
        time.sleep(1.0)
        # Its `sleep 60` is still in its cgroup: the card is not free.
        self.assertEqual(self.d.job(second)["state"], "pending")
        # The shepherd kills what was left, and then the card goes to the next job.
        os.kill(shepherd, signal.SIGCONT)
        self.assertEqual(self.d.wait_state(first, "completed")["end_reason"], "Completed")
        self.d.wait_state(second, "completed")

    def test_a_cancel_of_a_job_whose_processes_are_gone_says_it_ended(self):
        first = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo $$ > first.pid; " + until("go"))
        second = self.d.submit("--gpus", "2", "--", "true")
        _, shepherd = self.stop_shepherd_of(first, "first.pid")
        # rotad has seen the emptied cgroup once the next job got the cards.
        self.d.wait_state(second, "completed", timeout=10)
        r = self.d.rota("cancel", str(first), check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.strip(), f"rota: job {first} has already ended (its end is being recorded)")
        os.kill(shepherd, signal.SIGCONT)
        self.assertEqual(self.d.wait_state(first, "completed")["end_reason"], "Completed")


if __name__ == "__main__":
    unittest.main()
