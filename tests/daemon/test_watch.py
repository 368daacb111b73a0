"""Watching allocations with a real rotad on simulated GPUs (a job declares its load with
ROTA_SIM_GPU_UTIL/ROTA_SIM_GPU_MEM): an idle job is warned, then the action comes (the admins
told, or the job reclaimed), `rota keep` restarts the clock, a busy job is never touched, and a
share using more than it declared is warned. The rules are the lab's, on a seconds-long window
(idle_after 3s instead of 15m) so that a test takes seconds of real time."""
import json
import os
import re
import subprocess
import time
import unittest

from harness import FINAL, DaemonTest, SMALL_CLUSTER, wait_for


def watch_config(action, over_memory_action="notify"):
    return SMALL_CLUSTER + f"""
[watch]
idle_after = "3s"
act_after = "6s"
action = "{action}"
keeps_per_day = 1
over_memory_after = "2s"
over_memory_action = "{over_memory_action}"
"""


IDLE = {"ROTA_SIM_GPU_UTIL": "0", "ROTA_SIM_GPU_MEM": "2G"}
BUSY = {"ROTA_SIM_GPU_UTIL": "80", "ROTA_SIM_GPU_MEM": "2G"}


class WatchBase(DaemonTest):
    def reasons(self, job):
        return [e["reason"] for e in self.d.show(job)["events"]]

    def wait_reason(self, job, prefix, timeout=20):
        return wait_for(lambda: [r for r in self.reasons(job) if r.startswith(prefix)], timeout=timeout,
                        what=f"job {job} to get \"{prefix}...\"")[0]


class WatchTest(WatchBase):
    CONFIG = watch_config("notify")

    def test_idle_job_is_warned_then_the_admins_are_told_and_a_busy_one_is_left_alone(self):
        idle = self.d.submit("--gpus", "1", "--", "sleep", "300", env=IDLE)
        busy = self.d.submit("--gpus", "1", "--", "sleep", "300", env=BUSY)
        self.d.wait_state(idle, "running")
        self.d.wait_state(busy, "running")
        warning = self.wait_reason(idle, "Idle: ")
        self.assertIn("GPU utilisation 0% over the last 3s", warning)
        self.assertIn(f"`rota keep {idle}` keeps it (1 left today)", warning)
        told = self.wait_reason(idle, "Idle for 6s")
        self.assertIn("the admins were told", told)
        self.assertIn(f"admins: job {idle}", self.d.read_log())
        self.assertEqual(self.d.job(idle)["state"], "running")  # notify only: it keeps running
        self.assertFalse([r for r in self.reasons(busy) if "dle" in r])
        # `rota events` tells the same story, newest last.
        events = json.loads(self.d.rota("events", "--json").stdout)["events"]
        mine = [e["reason"] for e in events if e["kind"] == "job" and e["id"] == idle]
        self.assertEqual(mine[0], "Submitted")
        self.assertTrue(mine[-1].startswith("Idle for 6s"), mine)
        table = self.d.rota("events", "--job", str(idle)).stdout
        self.assertIn(f"job {idle}", table)
        self.assertIn("Idle: GPU utilisation 0%", table)
        r = self.d.rota("events", "--all", check=False)
        if os.geteuid() == 0:  # the default client user is no admin
            self.assertEqual(r.returncode, 1)
            self.assertIn("only admins", r.stderr)

    def test_keep_restarts_the_clock_and_is_limited(self):
        job = self.d.submit("--gpus", "1", "--", "sleep", "300", env=IDLE)
        self.d.wait_state(job, "running")
        self.wait_reason(job, "Idle: ")
        r = self.d.rota("keep", str(job))
        self.assertIn("0 keeps left today", r.stdout)
        kept_at = time.time()
        self.wait_reason(job, "Kept by")
        # The action would have come 6s after the job started; after the keep it needs a new
        # warning first, then the rest of the window.
        told = self.wait_reason(job, "Idle for 6s", timeout=30)
        self.assertGreaterEqual(time.time() - kept_at, 3)
        events = self.reasons(job)
        kept = [i for i, e in enumerate(events) if e.startswith("Kept by")][0]
        self.assertTrue(any(e.startswith("Idle: ") for e in events[kept + 1:]), events)
        r = self.d.rota("keep", str(job), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no keep left today", r.stderr)

    def test_a_share_over_its_memory_is_warned(self):
        job = self.d.submit("--gpu-mem", "10G", "--", "sleep", "300",
                            env={"ROTA_SIM_GPU_UTIL": "50", "ROTA_SIM_GPU_MEM": "12G"})
        self.d.wait_state(job, "running")
        note = self.wait_reason(job, "Over its memory:")
        self.assertIn("uses 12G of the 10G it declared", note)
        self.assertIn("if it stays over for 2s, the admins are told", note)
        told = self.wait_reason(job, "Over its memory for")
        self.assertIn("the admins were told", told)
        self.assertIn(f"admins: job {job} of", self.d.read_log())
        time.sleep(1.5)
        self.assertEqual(self.d.job(job)["state"], "running")  # notify only
        self.assertEqual(len([r for r in self.reasons(job) if r.startswith("Over its memory")]), 2)  # once each


class OverMemoryStopTest(WatchBase):
    CONFIG = watch_config("notify", over_memory_action="stop")

    def test_a_share_that_stays_over_its_memory_is_stopped(self):
        job = self.d.submit("--gpu-mem", "10G", "--signal", "USR1@1", "--", "sleep", "300",
                            env={"ROTA_SIM_GPU_UTIL": "50", "ROTA_SIM_GPU_MEM": "12G"})
        self.d.wait_state(job, "running")
        self.assertIn("it is stopped", self.wait_reason(job, "Over its memory:"))
        rec = self.d.wait_state(job, FINAL, timeout=30)
        # How long it was seen over: the 2s window, or more where a loaded machine's sample came late.
        m = re.match(r"Stopped: over its memory for (\d+)s \(uses 12G of the 10G", rec["end_reason"])
        self.assertIsNotNone(m, rec["end_reason"])
        self.assertGreaterEqual(int(m.group(1)), 2)

    def test_guard_prints_the_profile_snippet(self):
        text = self.d.rota("guard").stdout
        self.assertIn('if [ -z "${ROTA_JOB_ID:-}" ]', text)
        # It is valid sh that empties CUDA_VISIBLE_DEVICES outside an allocation only.
        out = subprocess.run(["sh", "-c", text + '\nprintf "[%s]" "$CUDA_VISIBLE_DEVICES"'], capture_output=True,
                             text=True, env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "0,1"})
        inside = subprocess.run(["sh", "-c", text + '\nprintf "[%s]" "$CUDA_VISIBLE_DEVICES"'], capture_output=True,
                                text=True, env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "GPU-x",
                                                "ROTA_JOB_ID": "7"})
        self.assertEqual(inside.stdout, "[GPU-x]")
        self.assertEqual(out.stdout, "[0,1]" if os.geteuid() == 0 else "[]")  # root is left alone


class ReclaimTest(DaemonTest):
    CONFIG = watch_config("reclaim")

    def test_idle_job_is_reclaimed_with_its_signal_and_requeued(self):
        job = self.d.submit("--gpus", "1", "--requeue", "--signal", "USR1@1", "--", "sleep", "300", env=IDLE)
        self.d.wait_state(job, "running")
        # Requeued, it may start again at once (a GPU is free): the audit trail says what happened.
        events = wait_for(lambda: (lambda ev: ev if any(e["to"] == "pending" and e["from"] == "running"
                                                        for e in ev) else None)(self.d.show(job)["events"]),
                          timeout=30, what="the idle job to be reclaimed and requeued")
        reasons = [e["reason"] for e in events]
        self.assertTrue(any(r.startswith("Idle: ") for r in reasons), reasons)
        self.assertTrue(any(r.startswith("Reclaimed: idle for 6s (GPU utilisation 0%") and r.endswith("(requeued)")
                            for r in reasons), reasons)


if __name__ == "__main__":
    unittest.main()
