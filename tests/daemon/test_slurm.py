"""The Slurm engine through real rotad and rota processes, on a real Slurm (slurm_cluster.py: munged,
slurmctld and slurmd started by the test as root, Debian 12's Slurm 22.05). Each test has its own
rotad and its own cluster. The end hook and two nodes: test_slurm_nodes.py."""
import json
import os
import pty
import signal
import subprocess
import time
import unittest

from harness import DEFAULT_USER, DaemonTest, Rotad, ensure_user, wait_for
from slurm_cluster import SlurmCluster, slurm_config, slurm_missing

WHY_NOT = slurm_missing()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class SlurmEngineTest(DaemonTest):
    def setUp(self):
        # A cluster of its own (it starts in well under a second): Slurm remembers ended jobs for
        # minutes, and each test's rotad numbers its jobs from 1 again.
        self.cluster = SlurmCluster().start()
        self.addCleanup(self.cluster.stop)
        # A one-second booking grid, bookings of today without an admin: a booking's life in seconds.
        self.CONFIG = slurm_config(self.cluster, extra='[bookings]\nslot = "1s"\nsame_day_needs_admin = false\n')
        super().setUp()

    def slurm_jobs(self, job):
        """Slurm's entries for Rota job `job`: [(state, user, Slurm id)]."""
        return self.cluster.jobs().get(f"rota-{job}", [])

    def test_a_job_runs_in_slurm_as_its_owner_and_ends_as_on_the_local_engine(self):
        job = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo gpus=$CUDA_VISIBLE_DEVICES; id -un; exit 3")
        done = self.d.wait_state(job, "failed")
        self.assertEqual(done["end_reason"], "Failed(exit 3)")
        self.assertEqual(done["exit_code"], 3)
        out = self.read(f"rota-{job}.out").split()
        self.assertEqual(out[0], "gpus=0,1")  # Slurm gave the GPUs (gres), not rotad's variables
        self.assertEqual(out[1], DEFAULT_USER)
        entries = self.slurm_jobs(job)
        self.assertEqual(len(entries), 1, entries)
        self.assertEqual(entries[0][1], DEFAULT_USER)  # squeue %u: submitted by its owner, not root
        self.assertEqual(done["engine_job"], f"Slurm job {entries[0][2]}")
        self.assertIn(f"RunsAs: Slurm job {entries[0][2]}", self.d.rota("show", str(job)).stdout)

        ok = self.d.submit("--", "sh", "-c", "echo 'it'\"'\"'s a b' \"$0\"")
        self.assertEqual(self.d.wait_state(ok, "completed")["end_reason"], "Completed")
        self.assertEqual(self.read(f"rota-{ok}.out"), "it's a b sh\n")
        status = self.d.rota("status").stdout
        self.assertIn("Engine: Slurm 22.05", status)
        self.assertNotIn("does not answer", status)

    def test_an_interactive_session_runs_in_slurm_as_its_owner(self):
        # A stray SLURM_JOB_ID (rota run from inside another Slurm job) would make srun a step of
        # that job: the client drops Slurm's variables before srun.
        r = self.d.rota("run", "--gpus", "2", "--", "sh", "-c",
                        "echo gpus=$CUDA_VISIBLE_DEVICES; id -un; echo tag=$SLURM_JOB_NAME; sleep 2; exit 4",
                        check=False, env={"SLURM_JOB_ID": "999999", "SLURM_JOBID": "999999"})
        self.assertEqual(r.returncode, 4, r.stderr)
        lines = r.stdout.split()
        job = int(lines[2].split("-")[1])
        self.assertEqual(lines[:3], ["gpus=0,1", DEFAULT_USER, f"tag=rota-{job}"])
        self.assertIn(f"rota: job {job} running on gpu0,1@{self.cluster.node}, time limit", r.stderr)
        rec = self.d.job(job)
        self.assertTrue(rec["interactive"])
        self.assertEqual((rec["state"], rec["exit_code"]), ("failed", 4))
        entries = self.slurm_jobs(job)
        self.assertEqual([(e[1]) for e in entries], [DEFAULT_USER])  # one Slurm job, the user's own
        self.assertEqual(rec["engine_job"], f"Slurm job {entries[0][2]}")

    def test_a_session_started_from_a_terminal_has_one_on_the_node(self):
        # `rota shell` from a terminal: srun --pty gives the command a terminal of its own there.
        argv = self.d.command("run", "--", "sh", "-c", "test -t 0 && test -t 1 && echo on-a-terminal; exit 5")
        pid, fd = pty.fork()
        if pid == 0:  # the child: the client, on the pseudo-terminal
            os.chdir(self.d.dir)
            os.execvpe(argv[0], argv, dict(os.environ, **self.d.client_env()))
        out = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the terminal's last writer closed it
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        os.close(fd)
        self.assertEqual(os.waitstatus_to_exitcode(status), 5, out)
        self.assertIn(b"on-a-terminal", out)

    def test_a_session_whose_client_dies_leaves_nothing_running_in_slurm(self):
        client = self.d.start_rota("run", "--gpus", "1", "--", "sleep", "300")
        session = wait_for(lambda: self.d.sessions("running"), what="the session to run")[0]["id"]
        wait_for(lambda: any(s == "RUNNING" for s, _, _ in self.slurm_jobs(session)), what="its Slurm job")
        client.send_signal(signal.SIGKILL)  # srun, its child, is left without it
        client.wait()
        self.assertEqual(self.d.wait_state(session, "cancelled")["end_reason"], "Session closed")
        wait_for(lambda: all(s not in ("RUNNING", "COMPLETING") for s, _, _ in self.slurm_jobs(session)),
                 what="the session's Slurm job to be cancelled")
        # Its GPU is free again for Rota.
        job = self.d.submit("--gpus", "4", "--", "true")
        self.d.wait_state(job, "completed", timeout=30)

    def test_a_cancelled_session_stops_through_srun(self):
        client = self.d.start_rota("run", "--gpus", "1", "--", "sleep", "300", output=subprocess.PIPE)
        session = wait_for(lambda: self.d.sessions("running"), what="the session to run")[0]["id"]
        wait_for(lambda: any(s == "RUNNING" for s, _, _ in self.slurm_jobs(session)), what="its Slurm job")
        self.d.rota("cancel", str(session))
        client.communicate(timeout=60)
        self.assertNotEqual(client.returncode, 0)
        self.assertEqual(self.d.wait_state(session, "cancelled")["end_reason"], f"Cancelled by {DEFAULT_USER}")
        wait_for(lambda: all(s not in ("RUNNING", "COMPLETING") for s, _, _ in self.slurm_jobs(session)),
                 what="the session's Slurm job to end")

    def test_cancel_stops_the_slurm_job(self):
        job = self.d.submit("--", "sleep", "300")
        self.d.wait_state(job, "running")
        wait_for(lambda: any(s == "RUNNING" for s, _, _ in self.slurm_jobs(job)), what="the job running in Slurm")
        self.d.rota("cancel", str(job))
        done = self.d.wait_state(job, "cancelled")
        self.assertEqual(done["end_reason"], f"Cancelled by {DEFAULT_USER}")
        wait_for(lambda: all(s not in ("RUNNING", "COMPLETING") for s, _, _ in self.slurm_jobs(job)),
                 what="the Slurm job to end")

    def test_the_output_is_the_file_rota_names_not_slurms_pattern(self):
        # Slurm reads --output as a pattern ("%u" its user, "%%" one '%'): the job writes the file
        # the user named, and rota logs reads that same file.
        job = self.d.submit("--output", "run-%u-50%.log", "--", "echo", "the-output")
        self.d.wait_state(job, "completed")
        self.assertEqual(self.read("run-%u-50%.log"), "the-output\n")
        self.assertIn("the-output", self.d.rota("logs", str(job)).stdout)
        # A name with a backslash Slurm cannot write to (it drops them all): said, not sent.
        bad = self.d.submit("--output", "a\\b.log", "--", "true")
        rec = self.d.wait_state(bad, "failed")
        self.assertIn("drops every backslash", rec["end_reason"])
        self.assertEqual(self.slurm_jobs(bad), [])

    def test_an_output_path_another_user_laid_a_pipe_at_is_refused_before_sbatch(self):
        # slurmstepd opens the output on the node, as the user, and a named pipe there would hand
        # the job's output to its reader (and hold the job until one came): the pipe another user
        # made at the predictable rota-<id>.out in a shared directory is refused before sbatch.
        other = "rota-it-other"
        ensure_user(other)
        shared = self.path("shared")
        os.makedirs(shared)
        os.chmod(shared, 0o1777)
        probe = self.d.submit("--", "true", cwd=shared)
        self.d.wait_state(probe, "completed")
        trap = os.path.join(shared, f"rota-{probe + 1}.out")
        subprocess.run(["runuser", "-u", other, "--", "sh", "-c", f"umask 0; mkfifo -m 666 {trap}"], check=True)
        job = self.d.submit("--", "echo", "victims-output", cwd=shared)
        self.assertEqual(job, probe + 1)
        rec = self.d.wait_state(job, "failed", timeout=20)
        self.assertEqual(rec["end_reason"], f"Failed: the output {trap} is a named pipe; a job's output is a "
                                            "file of its owner's, or a device such as /dev/null")
        self.assertEqual(self.slurm_jobs(job), [])  # never sent to Slurm

    def test_another_user_cannot_cancel_read_or_touch_it(self):
        other = "rota-it-other"
        ensure_user(other)
        job = self.d.submit("--", "sh", "-c", "echo secret-output; sleep 300")
        wait_for(lambda: any(s == "RUNNING" for s, _, _ in self.slurm_jobs(job)), what="the job running in Slurm")
        for args in (["cancel", str(job)], ["show", str(job)], ["logs", str(job)], ["keep", str(job)]):
            r = self.d.rota(*args, user=other, check=False)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertNotIn("secret-output", r.stdout + r.stderr)
        r = self.d.rota("cancel", str(job), user=other, check=False)
        self.assertNotEqual(r.returncode, 0)
        time.sleep(0.5)
        self.assertEqual(self.d.job(job)["state"], "running")
        self.assertTrue(any(s == "RUNNING" for s, _, _ in self.slurm_jobs(job)))

    def test_the_time_limit_warns_with_the_jobs_signal_then_stops_it(self):
        # Rota's limit of 1 minute, the warning 55 s before: the job saves its work and exits.
        job = self.d.submit("--time", "1m", "--signal", "USR1@55", "--", "sh", "-c",
                            "trap 'echo warned; exit 0' USR1; sleep 300 & wait")
        self.d.wait_state(job, "running")
        done = self.d.wait_state(job, ["completed", "timeout", "failed"], timeout=40)
        self.assertEqual(self.read(f"rota-{job}.out"), "warned\n")
        self.assertEqual(done["state"], "completed")
        self.assertGreaterEqual(done["end_time"] - done["start_time"], 3)

    def test_a_thesis_job_preempts_an_explore_job_which_runs_again_in_slurm(self):
        explore, _, rec = self.preempt_with_requeue(gpus=4, signal="USR1@2", timeout=60)
        # Two Slurm jobs of the same tag, one per run, both the owner's; the record names the last.
        runs = self.slurm_jobs(explore)
        self.assertEqual(sorted(user for _, user, _ in runs), [DEFAULT_USER, DEFAULT_USER])
        self.assertEqual(rec["engine_job"], "Slurm job " + max((i for _, _, i in runs), key=int))


        # More host memory than the node has (16000 MB in Slurm's configuration; within this
        # machine's, which rotad checks at submit): sbatch refuses the job at submission.
        job = self.d.submit("--mem-per-gpu", "20G", "--", "true")
        done = self.d.wait_state(job, "failed", timeout=20)
        self.assertIn("Slurm refused it: sbatch: error: ", done["end_reason"])
        self.assertIn("Requested node configuration is not available", done["end_reason"])
        # The next job is not held up by it.
        self.d.wait_state(self.d.submit("--", "true"), "completed", timeout=20)

    def test_an_unknown_partition_is_said_at_start(self):
        self.d.stop()
        nowhere = Rotad(slurm_config(self.cluster, partition="nosuch"))
        self.addCleanup(nowhere.cleanup)
        nowhere.start()
        r = nowhere.rota("submit", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("has no GPUs", r.stderr)

    def test_killed_rotad_loses_nothing_and_runs_nothing_twice(self):
        jobs = [self.d.submit("--", "sh", "-c", f"sleep 2; echo ran >> {self.d.dir}/ran-$ROTA_JOB_ID")
                for _ in range(6)]
        wait_for(lambda: sum(self.d.job(j)["state"] == "running" for j in jobs) >= 3, what="jobs running")
        self.d.kill9()
        time.sleep(1)
        self.d.start()
        for j in jobs:
            self.d.wait_state(j, "completed", timeout=60)
        for j in jobs:
            with open(os.path.join(self.d.dir, f"ran-{j}")) as f:
                self.assertEqual(f.read(), "ran\n", f"job {j}")
            self.assertEqual(len(self.slurm_jobs(j)), 1, self.slurm_jobs(j))

    def test_a_running_job_whose_launch_file_was_lost_is_found_by_its_name(self):
        gate = os.path.join(self.d.dir, "go")
        job = self.d.submit("--", "sh", "-c", f"until [ -e {gate} ]; do sleep 0.1; done; exit 4")
        wait_for(lambda: any(s == "RUNNING" for s, _, _ in self.slurm_jobs(job)), what="the job running in Slurm")
        self.d.kill9()
        os.remove(os.path.join(self.d.state, "slurm", f"{job}.launch"))
        self.d.start()
        self.assertEqual(self.d.job(job)["state"], "running")  # re-adopted: found by its tag and owner
        open(gate, "w").close()
        self.assertEqual(self.d.wait_state(job, "failed", timeout=30)["end_reason"], "Failed(exit 4)")
        self.assertIn("matched in Slurm by its name alone", self.d.read_log())

    def test_slurms_commands_missing_stop_rotad_with_what_to_do(self):
        self.d.stop()
        missing = Rotad(slurm_config(self.cluster, extra='bin_dir = "/nonexistent/slurm/bin"'))
        self.addCleanup(missing.cleanup)
        missing.start(wait=False)
        missing.wait_death()
        self.assertNotEqual(missing.proc.returncode, 0)
        log = missing.read_log()
        self.assertIn("Slurm's commands are not there: /nonexistent/slurm/bin/sbatch", log)
        self.assertIn("[engine] bin_dir", log)

    def test_slurmctld_restarted_under_load_loses_nothing_and_runs_nothing_twice(self):
        marks = self.d.dir
        jobs = [self.d.submit("--", "sh", "-c", f"sleep 3; echo ran >> {marks}/ran-$ROTA_JOB_ID") for _ in range(6)]
        wait_for(lambda: sum(self.d.job(j)["state"] == "running" for j in jobs) >= 3, what="jobs running")
        self.cluster.stop_controller()
        more = [self.d.submit("--", "sh", "-c", f"echo ran >> {marks}/ran-$ROTA_JOB_ID") for _ in range(3)]
        time.sleep(4)  # the running jobs end while slurmctld is away
        self.cluster.start_controller()
        for j in jobs + more:
            self.d.wait_state(j, "completed", timeout=90)
        for j in jobs + more:
            with open(os.path.join(marks, f"ran-{j}")) as f:
                self.assertEqual(f.read(), "ran\n", f"job {j}")
            self.assertEqual(len(self.slurm_jobs(j)), 1, self.slurm_jobs(j))

    def test_jobs_wait_while_slurm_does_not_answer_and_run_once_it_does(self):
        self.cluster.stop_controller()
        try:
            wait_for(lambda: "does not answer" in self.d.rota("status").stdout, timeout=20,
                     what="rotad to see that Slurm does not answer")
            job = self.d.submit("--", "sh", "-c", f"echo ran >> {self.d.dir}/ran-once")
            # Its launch is refused and postponed, each time for longer (5 s, 10 s, 20 s, ...).
            wait_for(lambda: sum("Not started: cannot launch: Slurm does not answer" in e["reason"]
                                 for e in self.d.show(job)["events"]) >= 3, timeout=40,
                     what="three postponed launches")
            self.assertEqual(self.d.job(job)["state"], "pending")
        finally:
            self.cluster.start_controller()
        # Slurm back: the job goes at once, not when its 20-second backoff would have ended. How
        # soon Slurm then runs it is Slurm's (a restarted slurmctld on a busy machine took longer
        # than 12 s once): only the start is timed.
        self.d.wait_state(job, ("running", "completed"), timeout=12)
        self.d.wait_state(job, "completed", timeout=60)
        self.assertEqual(self.read("ran-once"), "ran\n")
        self.assertNotIn("does not answer", self.d.rota("status").stdout)

    def test_rotad_started_while_slurm_is_down_finds_the_cards_when_it_is_back(self):
        self.d.stop()
        self.cluster.stop_controller()
        try:
            self.d.start()
            self.assertIn("did not answer", self.d.api({"op": "gpus"})["error"]["message"])  # no cards yet
            job = self.d.submit("--gpus", "4", "--", "true")
            time.sleep(1)
            self.assertEqual(self.d.job(job)["state"], "pending")
        finally:
            self.cluster.start_controller()
        # No reload needed: the next good reading of the partition is the inventory.
        self.d.wait_state(job, "completed", timeout=30)
        self.assertEqual(len(self.d.api({"op": "gpus"})["gpus"]), 4)

    def test_a_submission_whose_reply_is_lost_is_found_not_sent_again(self):
        # slurmctld stopped (SIGSTOP: its socket still takes connections): sbatch hangs and is
        # killed at rotad's deadline (3 s here), with its request perhaps already in slurmctld's
        # socket. Once slurmctld goes on, the job is either found in Slurm by its tag and followed,
        # or known not to be there and started again: either way it runs exactly once.
        ctld = self.cluster.pid("slurmctld.pid")
        os.kill(ctld, signal.SIGSTOP)
        try:
            job = self.d.submit("--", "sh", "-c", f"echo ran >> {self.d.dir}/ran-once")
            wait_for(lambda: "outcome is not known" in self.d.read_log() or
                     "does not answer" in self.d.read_log(), timeout=20, what="sbatch or squeue to time out")
        finally:
            os.kill(ctld, signal.SIGCONT)
        self.d.wait_state(job, "completed", timeout=90)
        time.sleep(1)
        self.assertEqual(self.read("ran-once"), "ran\n")
        self.assertEqual([s for s, _, _ in self.slurm_jobs(job)], ["COMPLETED"])

    def reservation(self, name):
        """Slurm's line for reservation `name` (`scontrol show reservation -o`), "" when none."""
        out = self.cluster.run("scontrol", "show", "reservation", "-o").stdout
        return next((l for l in out.splitlines() if l.startswith(f"ReservationName={name} ")), "")

    def test_a_memory_share_is_refused_rather_than_run_on_a_whole_gpu(self):
        # Untyped GPUs: Slurm chooses the card, and its shards could not be kept apart from whole
        # GPUs (test_slurm_shares.py runs them where each card is its own type).
        for verb in ("submit", "run"):
            r = self.d.rota(verb, "--gpu-mem", "20G", "--", "true", check=False)
            self.assertNotEqual(r.returncode, 0, verb)
            self.assertIn("memory shares (--gpu-mem) need Slurm to share every GPU", r.stderr)
            self.assertIn(f"GPU 0 on {self.cluster.node} is not its own type", r.stderr)
            self.assertIn("--gpus N", r.stderr)
        # No MIG gres type on this cluster: no card offers a slice (test_slurm_shares.py's has).
        r = self.d.rota("submit", "--mig", "1g.10gb", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("can never run here", r.stderr)
        self.assertEqual(self.d.rota("queue", "--all", "--json").stdout.strip(), "[]")
        self.assertEqual(self.cluster.jobs(), {})

    def test_a_booking_of_the_whole_node_is_a_slurm_reservation_for_its_owner(self):
        other = "rota-it-other"
        ensure_user(other)
        # The admin's own reservation, tomorrow, whose name merely starts like Rota's: left alone.
        self.cluster.run("scontrol", "create", "reservation", "ReservationName=rota-backup", "StartTime=now+1days",
                         "Duration=60", f"Nodes={self.cluster.node}", "Users=root", "Flags=MAINT")
        self.assertTrue(self.reservation("rota-backup"))
        start = int(time.time()) + 2
        r = self.d.rota("book", "--gpus", "4", "--from", str(start), "--until", str(start + 600), "--json")
        bid = json.loads(r.stdout)["booking"]["id"]
        line = wait_for(lambda: self.reservation(f"rota-b{bid}"), what="the booking's reservation in Slurm")
        self.assertIn(f" Users={DEFAULT_USER} ", line)
        self.assertIn(f" Nodes={self.cluster.node} ", line)
        # Someone bypassing Rota with plain sbatch waits for the booking's end ...
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:1", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "true", user=other).stdout.strip()
        state = lambda: self.cluster.run("squeue", "-h", "-t", "all", "-j", outside, "-o", "%T|%r").stdout.strip()
        wait_for(lambda: self.d.api({"op": "bookings", "id": bid})["bookings"][0]["state"] == "active",
                 what="the booking to start")
        # ... while the owner's job through Rota runs in the booking's reservation.
        job = self.d.submit("--gpus", "2", "--time", "5m", "--", "true")
        self.d.wait_state(job, "completed", timeout=30)
        self.assertTrue(state().startswith("PENDING|"), state())
        # A booking given back early: the reservation goes, and the outside job runs.
        self.d.rota("release", str(bid))
        wait_for(lambda: not self.reservation(f"rota-b{bid}"), what="the reservation to be deleted")
        wait_for(lambda: state().startswith("COMPLETED"), timeout=30, what="the outside job to run")
        self.assertTrue(self.reservation("rota-backup"))

    def test_a_job_before_a_reserved_booking_gets_a_slurm_limit_that_ends_before_it(self):
        # Rota's 3-minute job ends before the booking in 5 minutes; Slurm's backstop limit (the
        # job's plus two minutes) would reach into the reservation, and Slurm would hold the job.
        start = int(time.time()) + 300
        r = self.d.rota("book", "--gpus", "4", "--from", str(start), "--until", str(start + 600), "--json")
        bid = json.loads(r.stdout)["booking"]["id"]
        wait_for(lambda: self.reservation(f"rota-b{bid}"), what="the booking's reservation in Slurm")
        job = self.d.submit("--gpus", "1", "--time", "3m", "--", "true")
        self.d.wait_state(job, "completed", timeout=30)
        limits = self.cluster.run("squeue", "-h", "-t", "all", "-n", f"rota-{job}", "-o", "%l").stdout.split()
        self.assertEqual(len(limits), 1, limits)
        self.assertIn(limits[0], ("3:00", "4:00"))  # whole minutes before the reservation, at least Rota's

    def test_the_gpus_are_the_partitions_and_a_drained_node_takes_no_new_work(self):
        gpus = self.d.api({"op": "gpus"})["gpus"]
        self.assertEqual([g["uuid"] for g in gpus], [f"SLURM-{self.cluster.node}-{i}" for i in range(4)])
        self.assertEqual(gpus[0]["name"], "NVIDIA A100-SXM4-80GB")
        running = self.d.submit("--gpus", "2", "--", "sleep", "300")
        wait_for(lambda: any(s == "RUNNING" for s, _, _ in self.slurm_jobs(running)), what="the job running in Slurm")
        self.cluster.run("scontrol", "update", f"nodename={self.cluster.node}", "state=drain", "reason=fan broken")
        wait_for(lambda: all(g["drained"] for g in self.d.api({"op": "gpus"})["gpus"]), what="the cards drained")
        waiting = self.d.submit("--", "true")
        time.sleep(1.5)
        self.assertEqual(self.d.job(waiting)["state"], "pending")
        self.assertEqual(self.d.job(running)["state"], "running")  # a drained node's jobs run on
        self.cluster.run("scontrol", "update", f"nodename={self.cluster.node}", "state=resume")
        self.d.wait_state(waiting, "completed", timeout=30)
        self.assertEqual(self.d.job(running)["state"], "running")

    def test_the_record_follows_the_gpus_slurm_gave(self):
        # GPU 0 drained in Rota (Slurm knows nothing of it): Rota's choice for the next job (a card
        # it has in service) and Slurm's (its lowest free GPU, 0) differ; the record follows
        # Slurm's. (An outside job no longer makes them differ: Slurm names its cards.)
        self.d.rota("drain", "0", "--reason", "fan noise", user="root")
        job = self.d.submit("--gpus", "1", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES; sleep 300")
        wait_for(lambda: self.d.job(job)["gpu_uuids"] == [f"SLURM-{self.cluster.node}-0"], timeout=20,
                 what="the record to show the GPU Slurm gave")
        self.assertIn("GpuUuids: SLURM-rota-n1-0", self.d.rota("show", str(job)).stdout)
        self.assertIn(f"{self.cluster.node} NVIDIA A100", self.d.rota("gpus").stdout)  # which machine
        self.assertTrue(any("Placed by the cluster on GPU 0" in e["reason"] for e in self.d.show(job)["events"]))
        wait_for(lambda: os.path.exists(self.path(f"rota-{job}.out")) and self.read(f"rota-{job}.out"), what="output")
        self.assertEqual(self.read(f"rota-{job}.out"), "0\n")

    def test_a_job_started_outside_rota_holds_its_gpus(self):
        # A user's plain sbatch, 3 of the node's 4 GPUs: Rota sees them held and does not place a
        # 2-GPU job there until they are free.
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:3", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 300", user=DEFAULT_USER).stdout.strip()
        wait_for(lambda: sum(g["held_outside"] for g in self.d.api({"op": "gpus"})["gpus"]) == 3,
                 what="three cards held outside Rota")
        # Whose, and which cards: Slurm's own word (scontrol -d), shown by rota gpus, not "free".
        holders = wait_for(lambda: [h for g in self.d.api({"op": "gpus"})["gpus"] for h in g["held_by"]]
                           if sum(len(g["held_by"]) for g in self.d.api({"op": "gpus"})["gpus"]) == 3 else None,
                           what="the three cards named with their Slurm job")
        self.assertEqual({(h["user"], h["slurm_job"]) for h in holders}, {(DEFAULT_USER, outside)})
        listing = self.d.rota("gpus").stdout
        self.assertEqual(listing.count(f"{DEFAULT_USER}/slurm:{outside}(outside Rota)"), 3, listing)
        job = self.d.submit("--gpus", "2", "--", "true")
        time.sleep(1.5)
        self.assertEqual(self.d.job(job)["state"], "pending")
        one = self.d.submit("--gpus", "1", "--", "true")  # the fourth GPU is free
        self.d.wait_state(one, "completed", timeout=30)
        self.cluster.run("scancel", outside)
        self.d.wait_state(job, "completed", timeout=30)
        wait_for(lambda: not any(g["held_by"] or g["held_outside"] for g in self.d.api({"op": "gpus"})["gpus"]),
                 what="no card held outside Rota once it ended")

    def test_a_job_outside_rota_is_charged_to_its_owner_once(self):
        # A user's plain sbatch on 2 GPUs for 8 seconds, with rotad killed and started again while
        # it runs (most of it before the restart): counted while it runs (so far, in the week's
        # hours), then charged from Slurm's start time to its end, once, to the owner's week and
        # fair share, and listed in `rota usage` as outside Rota (no job of Rota's).
        start = time.time()
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:2", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 8", user=DEFAULT_USER).stdout.strip()
        held = lambda: sum(g["held_outside"] for g in self.d.api({"op": "gpus"})["gpus"])
        wait_for(lambda: held() == 2, what="two cards held outside Rota")

        def mine():
            return next((u for u in json.loads(self.d.rota("usage", "--json").stdout)["users"]
                         if u["name"] == DEFAULT_USER), None)
        time.sleep(2)
        so_far = wait_for(lambda: (lambda u: u if u and u["week_gpu_hours"] > 0 else None)(mine()), timeout=4,
                          what=f"Slurm job {outside} counted while it runs")
        state = self.cluster.run("squeue", "-h", "-j", outside, "-o", "%T").stdout.strip()
        self.assertEqual(state, "RUNNING", "counted only once it ended")
        self.assertLessEqual(so_far["week_gpu_hours"] * 3600, 2 * (time.time() - start + 1), so_far)
        self.assertAlmostEqual(so_far["outside_gpu_hours"], so_far["week_gpu_hours"], places=6)
        time.sleep(2)
        self.d.kill9()
        time.sleep(1)
        self.d.start()
        # Its end seen: the cards are free again, and the charge takes the place of the part so far.
        wait_for(lambda: held() == 0, timeout=60, what=f"Slurm job {outside} seen ended")
        row = mine()
        seconds = row["outside_gpu_hours"] * 3600
        self.assertGreaterEqual(seconds, 2 * 7, row)  # 2 GPUs for its 8 s (Slurm's seconds are whole)
        self.assertLessEqual(seconds, 2 * (time.time() - start + 1), row)
        self.assertAlmostEqual(row["week_gpu_hours"], row["outside_gpu_hours"], places=6)
        self.assertEqual(row["jobs"], 0)
        self.assertRegex(self.d.rota("usage").stdout, rf"(?m)^{DEFAULT_USER}\s.*\b{row['outside_gpu_hours']:.1f}\b")
        # Seen end again by a restarted rotad (Slurm still lists it as ended): not charged twice.
        self.d.kill9()
        time.sleep(1)
        self.d.start()
        time.sleep(3)
        again = mine()
        self.assertAlmostEqual(again["outside_gpu_hours"], row["outside_gpu_hours"], places=9)
        self.assertAlmostEqual(again["week_gpu_hours"], row["week_gpu_hours"], places=9)

    def test_job_names_made_to_break_slurms_output_change_nothing(self):
        # sbatch takes any bytes in a name: one with rotad's delimiter would make a queue that
        # holds names unreadable (Rota would take Slurm for down and start nothing); one with a
        # newline could add a made-up GPU line to scontrol's answer (here: all four GPUs).
        run = lambda name: self.cluster.run("sbatch", "--parsable", "--gres=gpu:1", "-J", name, "-o", "/dev/null",
                                            "-D", "/tmp", "--wrap", "sleep 300", user=DEFAULT_USER).stdout.strip()
        delim = run("evil\x1fname")
        forged = run("x\n     Nodes=rota-n1 CPU_IDs=0-7 Mem=16000 GRES=gpu:4(IDX:0-3)\n   MinCPUsNode=1")
        wait_for(lambda: sum(g["held_outside"] for g in self.d.api({"op": "gpus"})["gpus"]) == 2,
                 what="two cards held outside Rota")
        job = self.d.submit("--", "sh", "-c", "exit 0")
        self.assertEqual(self.d.wait_state(job, "completed", timeout=30)["end_reason"], "Completed")
        self.assertNotIn("does not answer", self.d.rota("status").stdout)
        # The first is named (its name is not read); the forged lines name nothing: counted only.
        held_by = [h["slurm_job"] for g in self.d.api({"op": "gpus"})["gpus"] for h in g["held_by"]]
        self.assertEqual(held_by, [delim])
        self.assertNotIn(forged, held_by)
        wait_for(lambda: sum(g["held_outside"] for g in self.d.api({"op": "gpus"})["gpus"]) == 2,
                 what="still two cards held outside Rota, one named")


@unittest.skipIf(WHY_NOT, WHY_NOT)
class SlurmOutsideQuotaTest(DaemonTest):
    def setUp(self):
        self.cluster = SlurmCluster().start()
        self.addCleanup(self.cluster.stop)
        # 0.02 GPU-hours a week: 72 GPU-seconds, room for one 1-minute job on one card. The quota's
        # notices go to a webhook that answers nothing (the outbox keeps them, `rota notify log`).
        self.CONFIG = slurm_config(self.cluster, extra=(
            "[quota]\ndefault = 0.02\noverflow_as_explore = false\n"
            "[notify]\nuser_channels = [\"lab\"]\nuser_events = [\"quota_80\", \"quota_100\"]\n"
            "[notify.channels.lab]\ntype = \"webhook\"\nurl = \"http://127.0.0.1:9/lab\"\n"))
        super().setUp()

    def test_its_owner_hears_of_the_quota_while_a_job_outside_rota_still_runs(self):
        # A plain sbatch on 2 cards reaches 80 % of the 72 GPU-seconds after about 29 s: the notice
        # comes then, not when the job ends.
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:2", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 300", user=DEFAULT_USER).stdout.strip()
        self.addCleanup(lambda: self.cluster.run("scancel", outside, check=False))

        def told():
            log = json.loads(self.d.rota("notify", "log", "--json", user="root").stdout)["messages"]
            return sorted(m["event"] for m in log if m["event"].startswith("quota_")) or None
        self.assertIsNone(told())
        self.assertEqual(wait_for(told, timeout=60, interval=1, what="the quota's notice"), ["quota_80"])
        self.assertEqual(self.cluster.run("squeue", "-h", "-j", outside, "-o", "%T").stdout.strip(), "RUNNING")
        wait_for(lambda: told() == ["quota_100", "quota_80"], timeout=30, interval=1, what="the 100 % notice")
        self.assertEqual(self.cluster.run("squeue", "-h", "-j", outside, "-o", "%T").stdout.strip(), "RUNNING")
        self.cluster.run("scancel", outside)
        wait_for(lambda: not any(g["held_outside"] for g in self.d.api({"op": "gpus"})["gpus"]),
                 what=f"Slurm job {outside} seen ended")
        time.sleep(1)
        self.assertEqual(told(), ["quota_100", "quota_80"])  # once each, not again at the charge

    def test_a_job_outside_rota_counts_against_its_owners_quota_while_it_runs(self):
        # A plain sbatch on 2 cards: after 7 s it has used 14 GPU-seconds, and a 1-minute job of
        # its owner's (60) no longer fits the quota's 72, though cards are free; counted so far,
        # not only once it ends (design.md, Slurm engine).
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:2", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 120", user=DEFAULT_USER).stdout.strip()
        self.addCleanup(lambda: self.cluster.run("scancel", outside, check=False))
        wait_for(lambda: sum(g["held_outside"] for g in self.d.api({"op": "gpus"})["gpus"]) == 2,
                 what="two cards held outside Rota")
        time.sleep(8)
        job = self.d.submit("--gpus", "1", "--time", "1m", "--", "true")
        info = wait_for(lambda: (lambda j: j if j.get("pending", {}).get("reason") == "quota" else None)(
            self.d.job(job)), timeout=10, what=f"job {job} held by the quota")
        self.assertEqual(info["state"], "pending")
        state = self.cluster.run("squeue", "-h", "-j", outside, "-o", "%T").stdout.strip()
        self.assertEqual(state, "RUNNING")
        self.d.rota("cancel", str(job))


if __name__ == "__main__":
    unittest.main()
