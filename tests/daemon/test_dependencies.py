"""--after-ok through real rotad and rota processes: a job that waits for others to complete runs
when they did, is cancelled (with those waiting for it) when one did not, and is refused at submit
when that is already known; also across a restart of rotad. (--after itself: test_jobs.py.)"""
import os
import subprocess
import unittest

from harness import DaemonTest, until, wait_for


class AfterOkTest(DaemonTest):
    def events(self, job):
        return self.d.show(job)["events"]

    def test_runs_after_its_jobs_completed(self):
        # The first job ends last: it waits for the second one's line.
        first = self.d.submit("--", "sh", "-c", until("second.done") + "echo first >> order")
        second = self.d.submit("--", "sh", "-c", until("go") + "echo second >> order; touch second.done")
        third = self.d.submit("--after-ok", f"{first},{second}", "--", "sh", "-c", "echo third >> order")
        wait_for(lambda: self.d.job(third).get("pending", {}).get("reason") == "dependency",
                 what="dependency reason")
        self.open_gate("go")
        self.d.wait_state(third, "completed")
        self.assertEqual(self.read("order").split(), ["second", "first", "third"])
        self.assertEqual(self.d.job(third)["after_ok"], [first, second])
        shown = self.d.rota("show", str(third)).stdout
        self.assertIn(f"AfterOk: {first},{second} (cancelled if one fails)", shown)

    def test_a_failure_cancels_the_jobs_waiting_for_it_and_theirs(self):
        failing = self.d.submit("--", "sh", "-c", until("go") + "exit 3")
        waiting = self.d.submit("--after-ok", str(failing), "--", "sh", "-c", "echo ran > waiting.txt")
        chained = self.d.submit("--after-ok", str(waiting), "--", "sh", "-c", "echo ran > chained.txt")
        anyway = self.d.submit("--after", str(failing), "--", "sh", "-c", "echo ran > anyway.txt")
        self.assertEqual(self.d.job(waiting)["state"], "pending")
        self.open_gate("go")
        self.d.wait_state(failing, "failed")
        job = self.d.wait_state(waiting, "cancelled")
        self.assertEqual(job["end_reason"],
                         f"Cancelled: job {failing}, which it waited for (--after-ok), ended: Failed(exit 3)")
        self.assertEqual(job["start_time"], 0)
        job = self.d.wait_state(chained, "cancelled")
        self.assertEqual(job["end_reason"],
                         f"Cancelled: job {waiting}, which it waited for (--after-ok), ended cancelled")
        # --after starts after any end.
        self.d.wait_state(anyway, "completed")
        self.assertTrue(os.path.exists(self.path("anyway.txt")))
        self.assertFalse(os.path.exists(self.path("waiting.txt")))
        self.assertFalse(os.path.exists(self.path("chained.txt")))
        last = self.events(waiting)[-1]
        self.assertEqual((last["from"], last["to"], last["actor"]), ("pending", "cancelled", "rotad"))
        history = self.d.rota("history").stdout
        self.assertIn(f"Cancelled: job {failing}", history)

    def test_a_cancel_of_the_job_waited_for_cancels_the_waiting_job(self):
        blocker = self.d.submit("--gpus", "2", "--", "sleep", "30")
        self.d.wait_state(blocker, "running")
        first = self.d.submit("--gpus", "2", "--", "true")
        waiting = self.d.submit("--after-ok", str(first), "--", "true")
        self.d.rota("cancel", str(first))
        job = self.d.wait_state(waiting, "cancelled")
        self.assertIn(f"job {first}, which it waited for (--after-ok), ended: Cancelled by", job["end_reason"])
        self.d.rota("cancel", str(blocker))

    def test_refused_at_submit_when_the_job_already_failed(self):
        failed = self.d.submit("--", "sh", "-c", "exit 2")
        self.d.wait_state(failed, "failed")
        queued_before = len(self.d.api({"op": "queue", "all": True})["jobs"])
        r = self.d.rota("submit", "--after-ok", str(failed), "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.strip(),
                         f"rota: --after-ok {failed}: job {failed} ended Failed(exit 2), so this job could never "
                         "start (--after starts it after any end)")
        r = self.d.rota("submit", "--after-ok", "99999", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--after-ok 99999: no such job", r.stderr)
        r = self.d.rota("submit", "--after-ok", "12,x", "--", "true", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn('--after-ok "12,x"', r.stderr)
        self.assertEqual(len(self.d.api({"op": "queue", "all": True})["jobs"]), queued_before)
        # After a completed job, and with --after after the failed one, the job is taken.
        done = self.d.submit("--", "true")
        self.d.wait_state(done, "completed")
        self.d.wait_state(self.d.submit("--after-ok", str(done), "--after", str(failed), "--", "true"), "completed")

    def test_rota_run_waiting_for_a_job_that_fails_is_told_and_exits(self):
        failing = self.d.submit("--", "sh", "-c", until("go") + "exit 5")
        # The gate opens once the session waits for the failing job.
        session = self.d.start_rota("run", "--after-ok", str(failing), "--", "sh", "-c", "echo session-ran",
                                    output=subprocess.PIPE)
        wait_for(self.d.sessions, what="the session to be queued")
        self.open_gate("go")
        out, err = session.communicate(timeout=60)
        self.assertEqual(session.returncode, 1, err)
        self.assertNotIn("session-ran", out)
        self.assertIn(f"Cancelled: job {failing}, which it waited for (--after-ok), ended: Failed(exit 5)", err)

    def test_rota_directive_in_a_script(self):
        failing = self.d.submit("--", "sh", "-c", until("go") + "exit 1")
        script = self.write_script("eval.sh", f"#!/bin/sh\n#ROTA --after-ok {failing}\necho evaluated\n")
        waiting = self.d.submit(script)
        self.assertEqual(self.d.job(waiting)["after_ok"], [failing])
        self.open_gate("go")
        self.d.wait_state(waiting, "cancelled")

    def test_a_failure_while_rotad_was_down_cancels_the_waiting_job_at_the_start(self):
        # Both jobs end while rotad is down, when the test creates "go".
        failing = self.d.submit("--", "sh", "-c", until("go") + "touch failing.done; exit 4")
        ok = self.d.submit("--", "sh", "-c", until("go") + "touch ok.done")
        waiting = self.d.submit("--after-ok", str(failing), "--", "sh", "-c", "echo ran > waiting.txt")
        after_ok = self.d.submit("--after-ok", str(ok), "--", "sh", "-c", "echo ran > after_ok.txt")
        for j in (failing, ok):
            self.d.wait_state(j, "running")
        self.d.kill9()
        self.open_gate("go")
        wait_for(lambda: os.path.exists(self.path("failing.done")) and os.path.exists(self.path("ok.done")),
                 what="the jobs to end")
        self.d.start()
        job = self.d.wait_state(waiting, "cancelled")
        self.assertEqual(job["end_reason"],
                         f"Cancelled: job {failing}, which it waited for (--after-ok), ended: Failed(exit 4)")
        self.d.wait_state(after_ok, "completed")
        self.assertEqual(self.d.job(failing)["state"], "failed")
        self.assertFalse(os.path.exists(self.path("waiting.txt")))
        self.assertTrue(os.path.exists(self.path("after_ok.txt")))

class RequeueTest(DaemonTest):
    def test_a_job_after_a_preempted_and_requeued_job_waits_for_its_next_run(self):
        # Explore holds both cards; a thesis job takes one of them back. The explore job goes back
        # to the queue, and the one card left free must not go to the job that runs after it.
        explore = self.d.submit("--tier", "explore", "--gpus", "2", "--requeue", "--signal", "USR1@1", "--",
                                "sh", "-c", "echo run >> explore.runs; [ $(wc -l < explore.runs) -ge 2 ] || "
                                "exec sleep 60")
        self.d.wait_state(explore, "running")
        after = self.d.submit("--after", str(explore), "--", "sh", "-c", "echo after >> explore.runs")
        after_ok = self.d.submit("--after-ok", str(explore), "--", "sh", "-c", "echo after-ok >> explore.runs")
        thesis = self.d.submit("--tier", "thesis", "--", "sh", "-c", until("go"))
        self.d.wait_state(thesis, "running", timeout=30)
        reasons = [e["reason"] for e in self.d.show(explore)["events"]]
        self.assertIn(f"Preempted by job {thesis} (requeued)", reasons)
        for job in (after, after_ok):
            self.assertEqual(self.d.job(job)["state"], "pending")
        self.open_gate("go")
        self.d.wait_state(explore, "completed", timeout=30)
        for job in (after, after_ok):
            self.d.wait_state(job, "completed")
        runs = self.read("explore.runs").split()
        self.assertEqual(runs[:2], ["run", "run"], runs)
        self.assertEqual(sorted(runs[2:]), ["after", "after-ok"], runs)


if __name__ == "__main__":
    unittest.main()
