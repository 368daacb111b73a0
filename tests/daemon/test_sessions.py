"""Interactive allocations: `rota run` waits for GPUs, runs the command with the allocation's
environment, passes its exit code on, and a closed terminal gives the GPUs back."""
import json
import os
import pwd
import select
import signal
import subprocess
import time
import unittest

from harness import FINAL, IS_ROOT, DaemonTest, ensure_user, proc_stat, until, wait_for


class SessionTest(DaemonTest):
    def test_run_gets_the_allocation_environment_and_exit_code(self):
        r = self.d.rota("run", "--gpus", "2", "--", "sh", "-c",
                        'echo "gpus=$ROTA_GPUS cvd=$CUDA_VISIBLE_DEVICES id=$ROTA_JOB_ID"; exit 7', check=False)
        self.assertEqual(r.returncode, 7, r.stderr)
        line = [l for l in r.stdout.splitlines() if l.startswith("gpus=")][0]
        fields = dict(f.split("=", 1) for f in line.split())
        self.assertEqual(fields["gpus"], "0,1")
        job = self.d.job(int(fields["id"]))
        self.assertEqual(fields["cvd"], ",".join(job["gpu_uuids"]))
        self.assertTrue(job["interactive"])
        self.assertEqual(job["state"], "failed")
        self.assertEqual(job["exit_code"], 7)

    def test_run_says_where_it_runs_as_the_queue_does(self):
        # SMALL_CLUSTER: cards 0 and 1 whole, card 2 in MIG mode with 3g.40gb as its slice 0.
        for args, where in ((["--gpus", "2"], "gpu0,1"), (["--mig", "3g.40gb"], "gpu2/mig0"),
                            (["--gpu-mem", "20G"], r"gpu[01]:20G")):
            r = self.d.rota("run", *args, "--", "true", check=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stderr, r"rota: job \d+ running on " + where + r", time limit ")

    def test_run_waits_for_busy_gpus_and_holds_them_while_it_runs(self):
        batch = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go"))
        self.d.wait_state(batch, "running")
        session = self.d.start_rota("run", "--gpus", "2", "--", "sh", "-c", "echo session-ran", output=subprocess.PIPE)
        jobs = wait_for(self.d.sessions, what="the session to be queued")
        time.sleep(0.5)
        self.assertEqual(self.d.job(jobs[0]["id"])["state"], "pending")
        self.assertIsNone(session.poll())
        self.open_gate("go")
        out, err = session.communicate(timeout=60)
        self.assertEqual(session.returncode, 0, err)
        self.assertIn("session-ran", out)
        self.assertIn("waiting", err)
        self.assertEqual(self.d.job(batch)["state"], "completed")

    def running_session(self, pidfile):
        """`rota run` of a 2-GPU `sleep 60` that writes its pid to `pidfile`, once it runs: the
        client process, the running sessions and the command's pid."""
        client = self.d.start_rota("run", "--gpus", "2", "--", "sh", "-c", f"echo $$ > {pidfile}; exec sleep 60")
        sessions = wait_for(lambda: self.d.sessions("running"), what="the session to run")
        pid = int(wait_for(lambda: os.path.exists(self.path(pidfile)) and self.read(pidfile).strip(),
                           what="the session's command to start"))
        return client, sessions, pid

    def test_closing_the_client_while_waiting_cancels_and_while_running_frees(self):
        batch = self.d.submit("--gpus", "2", "--", "sleep", "30")
        self.d.wait_state(batch, "running")
        waiting = self.d.start_rota("run", "--gpus", "2", "--", "true")
        jobs = wait_for(self.d.sessions, what="the session to be queued")
        waiting.send_signal(signal.SIGKILL)
        waiting.wait()
        rec = self.d.wait_state(jobs[0]["id"], "cancelled")
        self.assertEqual(rec["end_reason"], "Session closed")
        self.d.rota("cancel", str(batch))
        self.d.wait_state(batch, "cancelled")
        # A session whose client dies while it runs gives its GPUs back.
        holder, sess, pid = self.running_session("holder.pid")
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        rec = self.d.wait_state(sess[0]["id"], "cancelled")
        self.assertEqual(rec["end_reason"], "Session closed")
        try:  # the daemon killed it with the session's cgroup, where cgroups are writable
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        after = self.d.submit("--gpus", "2", "--", "true")
        self.d.wait_state(after, "completed")

    def test_run_shows_its_place_in_the_queue_and_a_hangup_ends_it(self):
        # A closed terminal is a SIGHUP to `rota run`: while it waits, it gives up and its job is
        # cancelled; while its command runs, the command gets the hang-up and the GPUs go back.
        batch = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go"))
        self.d.wait_state(batch, "running")
        waiting = self.d.start_rota("run", "--gpus", "2", "--", "true", output=subprocess.PIPE)
        seen = []

        def waiting_line():  # the raw pipe: a buffered reader would hide lines from select()
            if select.select([waiting.stderr], [], [], 0.2)[0]:
                seen.append(os.read(waiting.stderr.fileno(), 4096).decode())
            return next((line for line in "".join(seen).splitlines() if "waiting" in line), None)

        line = wait_for(waiting_line, what="rota run to say it waits")
        self.assertIn("position 1", line)
        job = self.d.sessions()[0]["id"]
        self.assertIn(f"job {job} waiting", line)
        waiting.send_signal(signal.SIGHUP)
        _, err = waiting.communicate(timeout=30)
        err = "".join(seen) + err
        self.assertEqual(waiting.returncode, 128 + signal.SIGHUP, err)
        self.assertIn("gave up waiting", err)
        rec = self.d.wait_state(job, "cancelled")
        self.assertEqual(rec["end_reason"], "Session closed")
        self.open_gate("go")
        self.d.wait_state(batch, "completed")

        running, sess, pid = self.running_session("hup.pid")
        running.send_signal(signal.SIGHUP)
        running.wait(timeout=30)
        self.assertEqual(running.returncode, 128 + signal.SIGHUP)
        def ended():
            try:
                return proc_stat(pid)[0] == "Z"
            except FileNotFoundError:
                return True
        wait_for(ended, what="the command to end with the hang-up")
        self.d.wait_state(sess[0]["id"], FINAL)
        after = self.d.submit("--gpus", "2", "--", "true")
        self.d.wait_state(after, "completed")

    def test_session_time_limit_signals_the_command(self):
        r = self.d.rota("run", "--time", "3s", "--signal", "USR1@1", "--", "sh", "-c",
                        "trap 'echo got-usr1; exit 0' USR1; i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done",
                        check=False, timeout=60)
        self.assertIn("got-usr1", r.stdout, r.stderr)

    def test_shell_without_SHELL_starts_the_login_shell_rotad_looked_up(self):
        # rota is a static program without NSS lookups: the login shell comes from rotad's hello.
        # As root the session's user gets bash, so the lookup is told apart from the /bin/sh
        # fallback.
        if IS_ROOT:
            user = "rota-it-shell"
            entry = ensure_user(user, shell="/bin/bash")
        else:
            user = None
            entry = pwd.getpwuid(os.getuid())
        env = self.d.client_env()
        self.assertNotIn("SHELL", env)
        r = subprocess.run(self.d.command("shell", "--gpus", "1", user=user), env=env, cwd=self.d.dir,
                           input='echo "shell=$0 gpus=$ROTA_GPUS"; exit 4\n', capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(f"shell={entry.pw_shell} gpus=0", r.stdout, r.stderr)



class SessionRestartTest(DaemonTest):
    """rotad killed while a session runs: the restart re-adopts the session by its client
    process, and ends it when that process is gone or is not the client any more."""

    def start_session(self, marker):
        client = self.d.start_rota("run", "--gpus", "2", "--", "sh", "-c",
                                   f"echo $$ > {marker}.pid; " + until(f"{marker}.go"))
        self.addCleanup(lambda: client.poll() is None and client.kill())
        wait_for(lambda: os.path.exists(self.path(f"{marker}.pid")), what="the session's command to start")
        sess = self.d.sessions()
        self.assertEqual(len(sess), 1)
        self.assertEqual(sess[0]["state"], "running")
        return client, sess[0]["id"], int(self.read(f"{marker}.pid").strip())

    def assert_cgroup_base_gone_at_stop(self):
        """The ended session's cgroup goes (at a later pass, as its client may still have been
        dying at the restart, or when rotad stops), and with it the cgroup base."""
        base = self.d.cgroup_base()
        if base:
            self.d.stop()
            self.assertFalse(os.path.exists(base), os.listdir(base) if os.path.exists(base) else None)

    def test_a_session_is_re_adopted_and_ends_with_its_client(self):
        client, job, _ = self.start_session("a")
        self.d.kill9()
        self.d.start()
        self.assertIn(f"job {job}: session re-adopted", self.d.read_log())
        self.assertEqual(self.d.job(job)["state"], "running")
        batch = self.d.submit("--gpus", "2", "--", "true")  # the session still holds both cards
        time.sleep(0.5)
        self.assertEqual(self.d.job(batch)["state"], "pending")
        self.open_gate("a.go")
        client.wait(timeout=30)
        rec = self.d.wait_state(job, ("completed", "cancelled", "failed"))
        self.assertNotEqual(rec["end_reason"], "Session ended while rotad was down")
        self.d.wait_state(batch, "completed")

    def test_a_session_whose_client_died_meanwhile_is_ended(self):
        client, job, command = self.start_session("b")
        self.d.kill9()
        client.kill()
        client.wait()
        os.kill(command, signal.SIGKILL)
        self.d.start()
        rec = self.d.wait_state(job, "cancelled")
        self.assertEqual(rec["end_reason"], "Session ended while rotad was down")
        self.assert_cgroup_base_gone_at_stop()

    @unittest.skipUnless(IS_ROOT and os.access("/proc/sys/kernel/ns_last_pid", os.W_OK),
                         "needs root to give another process the client's pid (ns_last_pid)")
    def test_a_session_whose_client_pid_was_reused_is_not_adopted(self):
        client, job, command = self.start_session("c")
        pid = client.pid
        self.d.kill9()
        client.kill()
        client.wait()
        os.kill(command, signal.SIGKILL)
        # Another user's process gets the client's pid: the next pid handed out after
        # ns_last_pid (retried: other processes may take it first).
        other = ensure_user("rota-it-other")
        impostor = None
        for _ in range(50):
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
            p = subprocess.Popen(["setpriv", f"--reuid={other.pw_uid}", f"--regid={other.pw_gid}", "--clear-groups",
                                  "sleep", "60"])
            if p.pid == pid:
                impostor = p
                break
            p.kill()
            p.wait()
        if impostor is None:
            self.skipTest("could not give another process the pid")
        self.addCleanup(lambda: (impostor.kill(), impostor.wait()))
        self.d.start()
        rec = self.d.wait_state(job, "cancelled")
        self.assertEqual(rec["end_reason"], "Session ended while rotad was down")
        self.assert_cgroup_base_gone_at_stop()
        self.assertIn("its pid was reused", self.d.read_log())
        self.assertIsNone(impostor.poll(), "the impostor was killed")


if __name__ == "__main__":
    unittest.main()
