"""Batch jobs through real rotad and rota processes: run, output, exit codes, cancel, failures,
time limits, dependencies, shares and MIG slices."""
import os
import subprocess
import sys
import time
import unittest

from harness import FINAL, SMALL_CLUSTER, DaemonTest, cgroup2_mount, own_cgroup, proc_stat, strace_attached, strace_injects, until, wait_for


def can_raise_priority():
    """Whether a process may lower its nice value here (root with CAP_SYS_NICE, which a container
    may withhold)."""
    probe = "import os; os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) - 1)"
    return subprocess.run([sys.executable, "-c", probe], stderr=subprocess.DEVNULL).returncode == 0


def nice_of(pid):
    return int(proc_stat(pid)[16])


class StandbyShepherdTest(DaemonTest):
    def test_jobs_are_handed_to_standby_shepherds_which_are_topped_up(self):
        wait_for(lambda: len(self.d.standbys()) == 4, what="rotad's four standby shepherds")
        before = set(self.d.standbys())
        job = self.d.submit("--", "sh", "-c", "echo $PPID > shepherd.pid; sleep 30")
        self.d.wait_state(job, "running")
        wait_for(lambda: os.path.exists(self.path("shepherd.pid")), what="the job to start")
        shepherd = int(self.read("shepherd.pid"))
        self.assertIn(shepherd, before, "the job's shepherd was not one of the standbys")
        # Topped up again: four wait besides the job's shepherd (whose command line still reads
        # --standby), one of them new.
        wait_for(lambda: len(set(self.d.standbys()) - {shepherd}) == 4, what="the standbys to be topped up")
        self.assertEqual(len(set(self.d.standbys()) - before), 1)
        self.d.rota("cancel", str(job))
        self.d.wait_state(job, "cancelled")

    def test_a_job_runs_at_rotads_nice_value_and_standbys_wait_above_it(self):
        # Standbys start their job at a higher priority where they may (CAP_SYS_NICE: 5 nice levels up);
        # the job, and its shepherd once the job is started, run at rotad's own nice value.
        self.d.stop()
        self.d.start(wrapper=("nice", "-n", "3"))
        wait_for(lambda: len(self.d.standbys()) == 4, what="rotad's four standby shepherds")
        standby_nice = 3 - 5 if can_raise_priority() else 3
        self.assertEqual({nice_of(pid) for pid in self.d.standbys()}, {standby_nice})
        job = self.d.submit("--", "sh", "-c", "echo $PPID > shepherd.pid; nice > nice.txt; sleep 30")
        wait_for(lambda: os.path.exists(self.path("nice.txt")) and self.read("nice.txt").strip(), what="the job's nice")
        self.assertEqual(self.read("nice.txt").strip(), "3")
        self.assertEqual(nice_of(int(self.read("shepherd.pid"))), 3)
        self.d.rota("cancel", str(job))
        self.d.wait_state(job, "cancelled")

    @unittest.skipUnless(strace_injects(), "needs strace with fault injection (ptrace allowed)")
    def test_an_end_is_recorded_from_the_shepherds_note_and_the_shepherd_reaped_after(self):
        # A standby's shepherd sends its note once the result is written, then exits. Here every
        # standby lingers 2 s in its exit (strace delays its exit_group): the end is recorded
        # meanwhile, the shepherd is reaped once it has exited, and the job's cgroup removed a
        # moment after that.
        wait_for(lambda: len(self.d.standbys()) == 4, what="rotad's four standby shepherds")
        standbys = self.d.standbys()
        with strace_attached(standbys, "-e", "trace=exit_group", "-e", "inject=exit_group:delay_enter=2000000"):
            job = self.d.submit("--", "sh", "-c", "echo $PPID > shepherd.pid; exit 6")
            rec = self.d.wait_state(job, "failed")
            self.assertEqual((rec["exit_code"], rec["end_reason"]), (6, "Failed(exit 6)"))
            shepherd = int(self.read("shepherd.pid"))
            self.assertIn(shepherd, standbys)
            self.assertNotEqual(proc_stat(shepherd)[0], "Z", "the shepherd had exited before its end was recorded")
            # Reaped: a zombie would keep its /proc entry.
            wait_for(lambda: not os.path.exists(f"/proc/{shepherd}"), timeout=15, what="rotad to reap the shepherd")
            run = os.listdir(os.path.join(self.d.state, "run"))
            self.assertNotIn(f"{job}.result", run)
            base = self.d.cgroup_base()
            if base:
                wait_for(lambda: not os.path.exists(f"{base}/job-{job}"), what="the job's cgroup removed")


class JobLifecycleTest(DaemonTest):
    def test_job_runs_writes_its_log_and_records_exit_code(self):
        ok = self.d.submit("--name", "hello", "--", "sh", "-c", "echo out-line; echo err-line >&2")
        bad = self.d.submit("--", "sh", "-c", "exit 3")
        job = self.d.wait_state(ok, "completed")
        self.assertEqual(job["exit_code"], 0)
        self.assertEqual(job["end_reason"], "Completed")
        log = self.read(f"rota-{ok}.out")
        self.assertIn("out-line", log)
        self.assertIn("err-line", log)
        job = self.d.wait_state(bad, "failed")
        self.assertEqual(job["exit_code"], 3)
        self.assertEqual(job["end_reason"], "Failed(exit 3)")
        # `rota logs` serves the same bytes, and history lists both with their reasons.
        self.assertIn("out-line", self.d.rota("logs", str(ok)).stdout)
        hist = self.d.rota("history").stdout
        self.assertIn("Failed(exit 3)", hist)
        events = [e["to"] for e in self.d.show(ok)["events"]]
        self.assertEqual(events, ["pending", "running", "completed"])

    def test_environment_and_cuda_visible_devices(self):
        job = self.d.submit("--gpus", "2", "--", "sh", "-c",
                            'echo "$CUDA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER|$ROTA_JOB_ID|$ROTA_GPUS|$MY_VAR"',
                            env={"MY_VAR": "captured"})
        rec = self.d.wait_state(job, "completed")
        line = self.read(f"rota-{job}.out").strip()
        self.assertEqual(line, f"{','.join(rec['gpu_uuids'])}|PCI_BUS_ID|{job}|0,1|captured")

    def test_a_job_inherits_no_descriptor_and_leads_its_own_session(self):
        # Only stdin, stdout and stderr reach the job (not rotad's database, socket or the
        # shepherd's files), and it starts a session of its own (its pid is its session id).
        job = self.d.submit("--", "sh", "-c", 'ls /proc/$$/fd; echo "pid $$"; cut -d" " -f6 /proc/$$/stat; '
                            'readlink /proc/$$/fd/0')
        self.d.wait_state(job, "completed")
        lines = self.read(f"rota-{job}.out").split("\n")
        pid_at = next(i for i, line in enumerate(lines) if line.startswith("pid "))
        self.assertEqual(sorted(lines[:pid_at]), ["0", "1", "2"], lines)
        self.assertEqual(lines[pid_at + 1], lines[pid_at].split()[1], "the job is not its session's leader")
        self.assertEqual(lines[pid_at + 2], "/dev/null")

    def test_memory_share_and_mig_slice_get_their_uuids(self):
        share = self.d.submit("--gpu-mem", "20G", "--", "sh", "-c", 'echo "$CUDA_VISIBLE_DEVICES $ROTA_GPU_MEM"')
        mig = self.d.submit("--mig", "2g.20gb", "--", "sh", "-c", 'echo "$CUDA_VISIBLE_DEVICES $ROTA_MIG_PROFILE"')
        s = self.d.wait_state(share, "completed")
        m = self.d.wait_state(mig, "completed")
        self.assertEqual(self.read(f"rota-{share}.out").split(), [s["gpu_uuids"][0], "20480M"])
        self.assertEqual(s["gpu_mem"], 20480)
        self.assertTrue(m["mig_uuid"].startswith("MIG-"), m)
        self.assertEqual(self.read(f"rota-{mig}.out").split(), [m["mig_uuid"], "2g.20gb"])

    def test_output_option_and_percent_j(self):
        job = self.d.submit("--output", "logs-%j.txt", "--", "echo", "custom")
        self.d.wait_state(job, "completed")
        self.assertEqual(self.read(f"logs-{job}.txt").strip(), "custom")

    def test_cancel_pending_and_running(self):
        running = self.d.submit("--gpus", "2", "--", "sleep", "60")
        self.d.wait_state(running, "running")
        pending = self.d.submit("--gpus", "2", "--", "sleep", "60")
        self.assertEqual(self.d.job(pending)["state"], "pending")
        out = self.d.rota("cancel", str(pending), str(running)).stdout
        self.assertIn(f"Cancelled job {pending}", out)
        job = self.d.wait_state(pending, "cancelled")
        self.assertEqual(job["end_reason"], "Cancelled by " + self.d.job(running)["user"])
        job = self.d.wait_state(running, "cancelled")
        self.assertTrue(job["end_reason"].startswith("Cancelled by"))
        # Cancelling a finished job is refused with a reason and exit code 1.
        r = self.d.rota("cancel", str(pending), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("already ended", r.stderr)

    def test_missing_command_and_vanished_cwd_fail_and_free_the_gpu(self):
        missing = self.d.submit("--gpus", "2", "--", "no-such-command-xyz")
        job = self.d.wait_state(missing, "failed")
        self.assertIn("no-such-command-xyz", job["end_reason"])
        gone = os.path.join(self.d.dir, "gone")
        os.mkdir(gone)
        os.chmod(gone, 0o777)
        blocker = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go"))
        vanished = self.d.submit("--gpus", "2", "--", "true", cwd=gone)
        os.rmdir(gone)
        self.open_gate("go")
        job = self.d.wait_state(vanished, "failed", timeout=30)
        self.assertIn("chdir", job["end_reason"])
        self.d.wait_state(blocker, "completed")
        # Both GPUs are free again: a 2-GPU job starts at once.
        after = self.d.submit("--gpus", "2", "--", "true")
        self.d.wait_state(after, "completed")

    def test_time_limit_sends_the_signal_before_the_kill(self):
        script = self.write_script("ckpt.sh", "#!/bin/sh\ntrap 'echo saved > checkpoint' USR1\n"
                                   "i=0; while [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done\n")
        job = self.d.submit("--time", "4s", "--signal", "USR1@2", "--", script)
        rec = self.d.wait_state(job, "timeout", timeout=30)
        self.assertEqual(rec["end_reason"], "TimeLimit")
        self.assertEqual(self.read("checkpoint").strip(), "saved")
        self.assertLessEqual(rec["end_time"] - rec["start_time"], 4 + self.KILL_WAIT + 2)
        reasons = [e["reason"] for e in self.d.show(job)["events"]]
        self.assertTrue(any(r.startswith("Signalled for time limit") for r in reasons), reasons)

    def test_a_one_minute_job_is_not_killed_by_a_signal_it_never_asked_for(self):
        # The first-day fault: `rota submit --time 1m -- sleep 5` ended at once as Failed(signal 10),
        # killed by the SIGUSR1 meant as a warning 120 s before a 60 s limit.
        job = self.d.submit("--time", "1m", "--", "sleep", "2")
        rec = self.d.wait_state(job, FINAL, timeout=30)
        self.assertEqual((rec["state"], rec["end_reason"], rec["exit_code"]), ("completed", "Completed", 0))
        self.assertEqual((rec["signal"], rec["grace"]), (0, 0))

    def test_a_job_without_a_signal_is_stopped_with_sigterm_at_its_limit(self):
        # An ordinary program that never asked for a warning (and does not trap USR1): nothing
        # before its limit, then SIGTERM, recorded as the time limit it was.
        script = self.write_script("plain.sh", "#!/bin/sh\ntrap 'echo term >> seen; exit 143' TERM\n"
                                   "while :; do sleep 0.1; done\n")
        job = self.d.submit("--time", "3s", "--", script)
        rec = self.d.wait_state(job, "timeout", timeout=30)
        self.assertEqual(rec["end_reason"], "TimeLimit")
        self.assertGreaterEqual(rec["end_time"] - rec["start_time"], 2)  # not at its start
        self.assertEqual(self.read("seen").split(), ["term"])

    def test_dying_of_the_warning_it_asked_for_is_its_time_limit(self):
        # It asked for USR1 two minutes ahead of a 6 s limit and does not catch it: the warning comes
        # at half the limit (3 s), not at the start, and its death is the time limit, explained.
        job = self.d.submit("--time", "6s", "--signal", "USR1@120", "--", "sleep", "60")
        rec = self.d.wait_state(job, FINAL, timeout=30)
        self.assertEqual(rec["state"], "timeout", rec)
        self.assertEqual(rec["end_reason"], "TimeLimit (ended by its warning signal SIGUSR1)")
        self.assertGreaterEqual(rec["end_time"] - rec["start_time"], 2)
        shown = self.d.rota("show", str(job)).stdout
        self.assertIn("Hint: the program died of SIGUSR1, the warning it asked for 120s before its limit", shown)
        self.assertIn("signal.signal(signal.SIGUSR1", shown)

    def test_a_lab_default_signal_is_given_to_jobs_that_ask_for_none(self):
        self.d.write_config('[policy]\ndefault_signal = "USR2@30"\n' + self.CONFIG)
        self.d.rota("reload", user="root")
        job = self.d.submit("--time", "1h", "--", "true")
        rec = self.d.wait_state(job, "completed")
        self.assertEqual((rec["signal"], rec["grace"]), (12, 30))
        job = self.d.submit("--time", "1h", "--signal", "USR1@5", "--", "true")
        self.assertEqual((self.d.wait_state(job, "completed")["signal"]), 10)  # its own wins

    def test_time_limit_sends_the_signal_then_sigterm_then_sigkill(self):
        # A job that keeps running through its signal and through SIGTERM: each arrives in its
        # turn (USR1 2 s before the limit, TERM at the limit), and SIGKILL ends it only after
        # the kill wait (it ticks until then).
        script = self.write_script("stubborn.sh", "#!/bin/sh\n"
                                   "trap 'echo usr1 $(date +%s.%N) >> signals' USR1\n"
                                   "trap 'echo term $(date +%s.%N) >> signals' TERM\n"
                                   "echo start $(date +%s.%N) >> signals\n"
                                   "while :; do echo tick $(date +%s.%N) >> signals; sleep 0.1; done\n")
        job = self.d.submit("--time", "4s", "--signal", "USR1@2", "--", script)
        rec = self.d.wait_state(job, "timeout", timeout=30)
        self.assertEqual(rec["end_reason"], "TimeLimit")
        # A signal to the job's processes also ends a `date` of the tick loop: such a tick has no time.
        seen = [line.split() for line in self.read("signals").splitlines()]
        events = [(fields[0], float(fields[1])) for fields in seen if fields[0] != "tick"]
        self.assertEqual([name for name, _ in events], ["start", "usr1", "term"], seen)
        (_, start), (_, usr1), (_, term) = events
        last_tick = max(float(fields[1]) for fields in seen if fields[0] == "tick" and len(fields) == 2)
        # Deadlines are whole seconds, so each gap may be up to a second short of its nominal 2 s.
        self.assertGreaterEqual(usr1 - start, 0.5)   # 2 s before a 4 s limit, not at once
        self.assertGreaterEqual(term - usr1, 1.0)    # the limit comes 2 s after the signal
        self.assertGreaterEqual(last_tick - term, self.KILL_WAIT - 1.5)  # alive until the kill wait ran out
        reasons = [e["reason"] for e in self.d.show(job)["events"]]
        self.assertTrue(any(r.startswith("Signalled for time limit") for r in reasons), reasons)

    def test_dependency_waits_for_the_first_job(self):
        first = self.d.submit("--", "sh", "-c", until("go") + "echo first >> order")
        second = self.d.submit("--after", str(first), "--", "sh", "-c", "echo second >> order")
        self.assertEqual(self.d.job(second)["state"], "pending")
        wait_for(lambda: self.d.job(second).get("pending", {}).get("reason") == "dependency",
                 what="dependency reason")
        self.d.wait_state(first, "running")
        self.open_gate("go")
        self.d.wait_state(second, "completed")
        self.assertEqual(self.read("order").split(), ["first", "second"])

    def test_next_job_starts_when_one_ends(self):
        a = self.d.submit("--gpus", "2", "--", "sleep", "1")
        b = self.d.submit("--gpus", "2", "--", "true")
        self.d.wait_state(b, "completed", timeout=20)
        ra, rb = self.d.job(a), self.d.job(b)
        self.assertGreaterEqual(rb["start_time"], ra["end_time"])
        self.assertLessEqual(rb["start_time"] - ra["end_time"], 1)

    def test_queue_lists_jobs_with_reasons(self):
        big = self.d.submit("--gpus", "2", "--name", "大模型训练", "--", "sleep", "30")
        self.d.wait_state(big, "running")
        waiting = self.d.submit("--gpus", "2", "--", "true")
        out = wait_for(lambda: (lambda o: o if "(Resources)" in o or "(Priority)" in o else None)(
            self.d.rota("queue").stdout), what="a reason in rota queue")
        self.assertIn("大模型训练", out)
        self.assertIn(str(waiting), out)
        self.d.rota("cancel", str(big), str(waiting))


class HostMemoryLimitTest(DaemonTest):
    """A job's cgroup holds it to its host memory: --mem-per-gpu, else default_mem_per_gpu, times
    its GPUs (memory.max, read while the job runs)."""
    CONFIG = 'default_mem_per_gpu = "1G"\n' + SMALL_CLUSTER

    def memory_max(self, job):
        wait_for(lambda: os.path.exists(self.path(f"pid-{job}")), what=f"job {job} to write its pid")
        path = cgroup2_mount() + own_cgroup(self.read(f"pid-{job}").strip()) + "/memory.max"
        if not os.path.exists(path):
            self.skipTest("the memory controller is not enabled for the jobs' cgroups here")
        with open(path) as f:
            return f.read().strip()

    def test_the_cgroup_limits_host_memory_per_gpu(self):
        if self.d.cgroup_base() is None:
            self.skipTest("rotad tracks jobs by process group here (no writable cgroup v2)")
        def body(gate):
            return "echo $$ > pid-$ROTA_JOB_ID; " + until(gate)

        default = self.d.submit("--gpus", "2", "--", "sh", "-c", body("first"))
        self.assertEqual(self.memory_max(default), str(2 * 1024 ** 3))
        self.open_gate("first")
        asked = self.d.submit("--gpus", "2", "--mem-per-gpu", "3G", "--", "sh", "-c", body("second"))
        self.assertEqual(self.memory_max(asked), str(6 * 1024 ** 3))
        self.open_gate("second")
        self.d.wait_state(default, "completed")
        self.d.wait_state(asked, "completed")


if __name__ == "__main__":
    unittest.main()
