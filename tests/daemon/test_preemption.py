"""Preemption: a thesis job stops an explore job (signal, grace, kill), which is requeued and
restarted from its checkpoint with its original submit time."""
import os
import unittest

from harness import DaemonTest, wait_for


class PreemptionTest(DaemonTest):
    def test_thesis_preempts_explore_which_is_requeued_and_restarts(self):
        self.preempt_with_requeue(gpus=2, signal="USR1@1")

    def test_preempted_job_without_requeue_ends_preempted(self):
        explore = self.d.submit("--tier", "explore", "--gpus", "2", "--signal", "USR1@1", "--", "sleep", "60")
        self.d.wait_state(explore, "running")
        thesis = self.d.submit("--tier", "thesis", "--gpus", "2", "--", "true")
        rec = self.d.wait_state(explore, "preempted", timeout=30)
        self.assertEqual(rec["end_reason"], f"Preempted by job {thesis}")
        self.d.wait_state(thesis, "completed", timeout=30)

    def test_a_job_that_ignores_its_signal_and_sigterm_is_killed_after_the_grace(self):
        # The explore job keeps running through USR1 and SIGTERM; the thesis job gets the
        # cards only once SIGKILL has ended it, the kill wait after SIGTERM.
        script = self.write_script("stubborn.sh", "#!/bin/sh\n"
                                   "trap 'echo usr1 $(date +%s.%N) >> signals' USR1\n"
                                   "trap 'echo term $(date +%s.%N) >> signals' TERM\n"
                                   "echo start $(date +%s.%N) >> signals\n"
                                   "while :; do sleep 0.1; done\n")
        explore = self.d.submit("--tier", "explore", "--gpus", "2", "--signal", "USR1@2", "--", script)
        self.d.wait_state(explore, "running")
        wait_for(lambda: os.path.exists(self.path("signals")), what="the explore job to set its traps")
        thesis = self.d.submit("--tier", "thesis", "--gpus", "2", "--", "sh", "-c", "date +%s.%N > started")
        rec = self.d.wait_state(explore, "preempted", timeout=30)
        self.assertEqual(rec["end_reason"], f"Preempted by job {thesis}")
        self.d.wait_state(thesis, "completed", timeout=30)
        seen = [line.split() for line in self.read("signals").splitlines()]
        self.assertEqual([name for name, _ in seen], ["start", "usr1", "term"], seen)
        usr1, term = float(seen[1][1]), float(seen[2][1])
        # The grace of USR1@2 came between them (less up to a second: the kill is due at a whole
        # second counted from the second the signal went out).
        self.assertGreaterEqual(term - usr1, 1.0)
        # The thesis job started after the kill wait that followed SIGTERM, not at once (the kill
        # is due at a whole second, so up to a second before the full wait).
        self.assertGreaterEqual(float(self.read("started")), term + self.KILL_WAIT - 1.5)


if __name__ == "__main__":
    unittest.main()
