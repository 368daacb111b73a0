"""The attack catalogue, part five: another user's jobs, bookings and tokens, admin-only
operations, forged identity, what a job may do to root, and the files rotad touches for users.
docs/security.md lists every attack with its test."""
import json
import os
import shutil
import sqlite3
import subprocess
import time
import unittest

from attacks import ADMIN, MALLORY, PYTHON, VICTIM, AttackTest, argv_as, request_line
from harness import FINAL, SMALL_CLUSTER, cgroup2_mount, own_cgroup, until, wait_for
from http_client import Http, free_port


class OthersWorkTest(AttackTest):
    """Mallory against the victim's running job and booking."""

    def setUp(self):
        super().setUp()
        self.job = self.d.submit("--name", "victims-run", "--", "sh", "-c", "echo victims-secret-output; sleep 300",
                                 user=VICTIM, cwd=self.home(VICTIM))
        self.d.wait_state(self.job, "running")
        start = (int(time.time()) // 3600 + 48) * 3600
        r = self.request_as(VICTIM, {"op": "book", "booking": {"gpus": 1, "start": start, "end": start + 3600}})
        self.assertTrue(r["ok"], r)
        self.booking = r["booking"]["id"]

    def assertJobUntouched(self):
        self.assertEqual(self.d.job(self.job)["state"], "running")

    def test_cancel_of_anothers_job(self):
        r = self.d.rota("cancel", str(self.job), user=MALLORY, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"belongs to {VICTIM}", r.stderr)
        self.assertJobUntouched()
        self.assertServesOthers()
        self.assertLogged(rf"refused cancel from {MALLORY}: permission_denied: job {self.job} belongs to {VICTIM}")

    def test_show_and_logs_of_anothers_job(self):
        for op in ("show", "logs"):
            reply = self.request_as(MALLORY, {"op": op, "job_id": self.job})
            self.assertRefused(reply, "permission_denied", f"belongs to {VICTIM}")
            self.assertNotIn("victims-secret-output", json.dumps(reply))
        self.assertServesOthers()
        self.assertLogged(rf"refused logs from {MALLORY}: permission_denied")

    def test_events_and_keep_of_anothers_job(self):
        self.assertRefused(self.request_as(MALLORY, {"op": "events", "job_id": self.job}), "permission_denied")
        self.assertRefused(self.request_as(MALLORY, {"op": "events", "all": True}), "permission_denied",
                           "only admins")
        self.assertRefused(self.request_as(MALLORY, {"op": "keep", "job_id": self.job}), "permission_denied")
        mine = self.request_as(MALLORY, {"op": "events", "since": 0})
        self.assertTrue(mine["ok"])
        self.assertNotIn(self.job, [e["id"] for e in mine["events"] if e["kind"] == "job"])
        self.assertServesOthers()
        self.assertLogged(rf"refused keep from {MALLORY}: permission_denied")

    def test_anothers_booking(self):
        for op in ({"op": "unbook", "booking_id": self.booking}, {"op": "release", "booking_id": self.booking},
                   {"op": "extend", "booking_id": self.booking, "for": 3600}):
            self.assertRefused(self.request_as(MALLORY, op), "permission_denied")
        b = self.d.api({"op": "bookings", "id": self.booking})["bookings"][0]
        self.assertIn(b["state"], ("confirmed", "requested"))
        self.assertServesOthers()
        self.assertLogged(rf"refused unbook from {MALLORY}: permission_denied")

    def test_admin_only_operations(self):
        for request in ({"op": "drain", "gpu": "0", "reason": "mine now"}, {"op": "resume", "gpu": "0"},
                        {"op": "reload"}, {"op": "approve", "booking_id": self.booking, "reason": "x"},
                        {"op": "reject", "booking_id": self.booking, "reason": "x"}, {"op": "notify_log"},
                        {"op": "token_list", "all": True}, {"op": "events", "all": True}):
            self.assertRefused(self.request_as(MALLORY, request), "permission_denied")
        self.assertFalse(self.d.api({"op": "status"})["gpus"][0]["drained"])
        # The admin may.
        self.assertTrue(self.request_as(ADMIN, {"op": "drain", "gpu": "2", "reason": "test"})["ok"])
        self.assertServesOthers()
        self.assertLogged(rf"refused drain from {MALLORY}: permission_denied")

    def test_importing_bookings_in_anothers_name(self):
        csv = ("task_name,user,gpu_id,start_time,end_time,est_hours,status\n"
               f"steal,{VICTIM},1,2031-01-01 10:00,2031-01-01 12:00,2,confirmed\n")
        reply = self.request_as(MALLORY, {"op": "bookings_import", "csv": csv})
        self.assertFalse(reply.get("ok") and reply.get("imported"), reply)
        self.assertServesOthers()

    def test_revoking_anothers_token(self):
        token = json.loads(self.d.rota("token", "create", "--json", user=VICTIM).stdout)
        reply = self.request_as(MALLORY, {"op": "token_revoke", "id": token["id"]})
        self.assertFalse(reply["ok"])
        self.assertIn(reply["error"]["code"], ("permission_denied", "not_found"))  # not even whether it exists
        listed = json.loads(self.d.rota("token", "list", "--json", user=VICTIM).stdout)
        self.assertEqual([t["revoked_at"] for t in listed], [0])
        self.assertServesOthers()

    def test_forged_identity_fields(self):
        claim = {"user": VICTIM, "uid": self.victim.pw_uid, "gid": 0, "caller": ADMIN, "admin": True}
        job = dict({"command": ["id", "-u"], "cwd": self.home(MALLORY), "env": {"PATH": "/usr/bin:/bin"}}, **claim)
        reply = self.request_as(MALLORY, dict({"op": "submit", "job": job}, **claim))
        self.assertTrue(reply["ok"], reply)
        rec = self.d.wait_state(reply["job_id"], "completed")
        self.assertEqual((rec["user"], rec["uid"]), (MALLORY, self.mallory.pw_uid))
        self.assertRefused(self.request_as(MALLORY, dict({"op": "cancel", "job_ids": [self.job]}, **claim))["results"][0],
                           "permission_denied")
        self.assertJobUntouched()
        self.assertServesOthers()

    def test_private_details_of_others_jobs_are_not_shown(self):
        # Queue and history list everyone's jobs; how they run and how they ended is their owner's.
        failing = self.d.submit("--output", "private-name.log", "--", "sh", "-c", "exit 3", user=VICTIM,
                                cwd=self.home(VICTIM), env={"SECRET_TOKEN": "hunter2"})
        self.d.wait_state(failing, "failed")
        queue = self.request_as(MALLORY, {"op": "queue", "all": True})["jobs"]
        history = self.request_as(MALLORY, {"op": "history", "all": True, "since": 0})["jobs"]
        text = json.dumps(queue + history)
        for private in ("private-name.log", "hunter2", "Failed(exit 3)", self.home(VICTIM), "victims-secret"):
            self.assertNotIn(private, text)
        theirs = [j for j in history if j["id"] == failing][0]
        self.assertEqual((theirs["state"], theirs["end_reason"], theirs["exit_code"]), ("failed", "", None))
        # Waiting on it with --after-ok says it ended without completing, not how.
        r = self.d.rota("submit", "--after-ok", str(failing), "--", "true", user=MALLORY, cwd=self.home(MALLORY),
                        check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"ended without completing (it is {VICTIM}'s job)", r.stderr)
        self.assertNotIn("exit 3", r.stderr)
        # The owner sees it all.
        mine = self.request_as(VICTIM, {"op": "show", "job_id": failing})["job"]
        self.assertEqual(mine["end_reason"], "Failed(exit 3)")
        self.assertServesOthers()


class ScopedTokenTest(AttackTest):
    def setUp(self):
        self.port = free_port()
        self.CONFIG = AttackTest.CONFIG + f'\n[web]\nlisten = "127.0.0.1:{self.port}"\n'
        super().setUp()
        self.http = Http(self.port)
        self.job = self.d.submit("--", "sleep", "300", user=MALLORY, cwd=self.home(MALLORY))

    def token(self, *args):
        return json.loads(self.d.rota("token", "create", "--json", *args, user=MALLORY).stdout)

    def test_a_calendar_token_reads_the_feed_and_nothing_else(self):
        # The audit: a token meant to sit in a calendar app's address could cancel jobs.
        t = self.token("--name", "calendar")
        self.assertEqual(t["scope"], "calendar")
        auth = {"Authorization": "Bearer " + t["token"]}
        self.assertEqual(self.http.get("/calendar.ics?token=" + t["token"], cookies=False).status, 200)
        r = self.http.post("/api/cancel", {"job_ids": [self.job]}, headers=auth, cookies=False)
        self.assertEqual(r.status, 403, r.body)
        self.assertIn("calendar feed only", r.json()["error"]["message"])
        self.assertEqual(self.http.get("/api/queue", headers=auth, cookies=False).status, 403)
        self.assertIn(self.d.job(self.job)["state"], ("pending", "running"))
        self.assertServesOthers()
        self.assertLogged(rf"a calendar token of {MALLORY} used for /api/cancel")

    def test_a_read_token_reads_but_changes_nothing(self):
        t = self.token("--scope", "read", "--name", "grafana")
        auth = {"Authorization": "Bearer " + t["token"]}
        self.assertEqual(self.http.get("/api/queue", headers=auth, cookies=False).status, 200)
        self.assertEqual(self.http.post("/api/cancel", {"job_ids": [self.job]}, headers=auth, cookies=False).status,
                         403)
        self.assertEqual(self.http.post("/api/submit", {"job": {"command": ["true"], "cwd": "/tmp", "env": {}}},
                                        headers=auth, cookies=False).status, 403)
        full = self.token("--name", "scripts")
        self.assertEqual(full["scope"], "full")
        r = self.http.post("/api/cancel", {"job_ids": [self.job]},
                           headers={"Authorization": "Bearer " + full["token"]}, cookies=False)
        self.assertEqual(r.status, 200, r.body)
        listed = json.loads(self.d.rota("token", "list", "--json", user=MALLORY).stdout)
        self.assertEqual(sorted(t["scope"] for t in listed), ["full", "read"])


class WhatAJobMayDoTest(AttackTest):
    """What a job (running as its owner) can do to rotad, root and others."""

    def run_job(self, script, *args, user=MALLORY, env=None):
        job = self.d.submit(*args, "--", "sh", "-c", script, user=user, cwd=self.home(user), env=env)
        rec = self.d.wait_state(job, FINAL, timeout=60)
        with open(os.path.join(self.home(user), f"rota-{job}.out"), errors="replace") as f:
            return rec, f.read()

    def test_no_way_back_to_root(self):
        rec, out = self.run_job(f"id -u; {PYTHON} -c 'import os; os.setuid(0)' 2>&1; "
                                "grep -E '^(Uid|CapEff|NoNewPrivs)' /proc/self/status")
        lines = out.splitlines()
        self.assertEqual(lines[0], str(self.mallory.pw_uid))
        self.assertIn("PermissionError", out)
        self.assertIn("CapEff:\t0000000000000000", out)
        self.assertServesOthers()

    def test_no_descriptor_of_rotad_or_the_shepherd_is_inherited(self):
        # The shell's descriptors, listed by a child while the shell only waits (no pipeline of its own).
        rec, out = self.run_job("ls -l /proc/$$/fd")
        fds = {}
        for line in out.splitlines()[1:]:
            words = line.split()
            if "->" in words:
                fds[words[words.index("->") - 1]] = words[-1]
        self.assertEqual(sorted(fds), ["0", "1", "2"], out)  # ls's own fd belongs to ls
        self.assertEqual(fds["0"], "/dev/null")
        self.assertNotIn("rota.db", out)
        self.assertNotIn("socket:", out)

    def test_no_escape_from_the_jobs_cgroup(self):
        mount = cgroup2_mount()
        if not mount:
            self.skipTest("no cgroup v2 here")
        rec, out = self.run_job(f"echo $$ > {mount}/cgroup.procs 2>&1 && echo escaped; cat /proc/self/cgroup")
        self.assertNotIn("escaped", out)
        if self.d.cgroup_base():
            self.assertIn("job-", out)

    def test_ld_preload_does_not_reach_the_shepherd(self):
        # A library that says who loaded it; the job's own processes may load it (they are the user's).
        if not shutil.which("cc"):
            self.skipTest("no C compiler")
        src = self.path("evil.c")
        lib = os.path.join(self.home(MALLORY), "evil.so")
        marks = os.path.join("/tmp", f"rota-it-evil-{os.getpid()}")
        os.makedirs(marks, exist_ok=True)
        os.chmod(marks, 0o1777)
        self.addCleanup(lambda: shutil.rmtree(marks, ignore_errors=True))
        with open(src, "w") as f:
            f.write('#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void mark(void) {'
                    f' char p[256]; snprintf(p, sizeof p, "{marks}/uid-%d", (int)geteuid());'
                    ' FILE* f = fopen(p, "a"); if (f) fclose(f); }\n')
        subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, src], check=True)
        os.chmod(lib, 0o755)
        # Sent raw: the environment of the request is the job's (the harness's own root processes must
        # not load the library either).
        reply = self.request_as(MALLORY, {"op": "submit", "job": {
            "command": ["true"], "cwd": self.home(MALLORY),
            "env": {"PATH": "/usr/bin:/bin", "LD_PRELOAD": lib, "LD_LIBRARY_PATH": self.home(MALLORY)}}})
        self.assertTrue(reply["ok"], reply)
        self.d.wait_state(reply["job_id"], "completed")
        loaded_by = os.listdir(marks)
        self.assertIn(f"uid-{self.mallory.pw_uid}", loaded_by)  # the job's own process did load it
        self.assertNotIn("uid-0", loaded_by)  # the root shepherd never did
        self.assertServesOthers()

    def test_a_job_cannot_fork_without_end(self):
        # The audit: one job made 1,500 processes with no limit.
        self.d.stop()
        self.d.write_config(self.CONFIG + "\n[limits]\njob_processes = 40\n")
        self.d.start()
        forker = "rota-at-forker"  # a user of its own: RLIMIT_NPROC counts all of a user's processes
        from harness import ensure_user
        ensure_user(forker)
        script = ("import os, time\nn = 0\nfor i in range(120):\n    try:\n        pid = os.fork()\n"
                  "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n"
                  "    n += 1\nprint(n, flush=True)\nos.killpg(0, 9)\n")
        job = self.d.submit("--", PYTHON, "-c", script, user=forker, cwd=self.home_of(forker))
        rec = self.d.wait_state(job, FINAL, timeout=60)
        with open(os.path.join(self.home_of(forker), f"rota-{job}.out")) as f:
            forked = int(f.read().split()[0])
        self.assertLess(forked, 40, rec)
        self.assertGreater(forked, 5)
        self.assertServesOthers()

    def home_of(self, user):
        import pwd
        entry = pwd.getpwnam(user)
        d = self.path(user)
        os.makedirs(d, exist_ok=True)
        os.chown(d, entry.pw_uid, entry.pw_gid)
        return d


class FilesTest(AttackTest):
    """Paths that users choose and rotad (root) touches."""

    def shared_and_next_output(self):
        """A directory everyone may write and the path of the victim's next job's default output in
        it (job ids are predictable), with that job's id."""
        shared = self.path("shared")
        os.makedirs(shared)
        os.chmod(shared, 0o1777)
        probe = self.d.submit("--", "true", user=VICTIM, cwd=self.home(VICTIM))
        self.d.wait_state(probe, FINAL)
        return shared, os.path.join(shared, f"rota-{probe + 1}.out"), probe + 1

    def test_output_pre_created_by_another_user_is_refused(self):
        # Job ids are predictable: mallory makes the victim's next output file, world-writable, in a
        # directory both may write, to read what the job writes.
        shared, trap, next_job = self.shared_and_next_output()
        subprocess.run(argv_as(MALLORY, "sh", "-c", f"umask 0; : > {trap}; chmod 666 {trap}"), check=True)
        job = self.d.submit("--", "echo", "victims-output", user=VICTIM, cwd=shared)
        self.assertEqual(job, next_job)
        rec = self.d.wait_state(job, FINAL)
        self.assertEqual(rec["state"], "failed", rec)
        self.assertIn(f"belongs to uid {self.mallory.pw_uid}, not to {VICTIM}", rec["end_reason"])
        with open(trap) as f:
            self.assertNotIn("victims-output", f.read())
        self.assertServesOthers()

    def test_a_named_pipe_at_the_output_path_is_refused(self):
        # The same trap as a FIFO: a pipe is no regular file, so the owner check did not apply, and
        # the open waited until mallory's reader came, then gave her the victim's output (and
        # held the job, GPUs and all, as long as she liked). A job's output is never a pipe.
        shared, trap, next_job = self.shared_and_next_output()
        subprocess.run(argv_as(MALLORY, "sh", "-c", f"umask 0; mkfifo -m 666 {trap}"), check=True)
        reader = subprocess.Popen(argv_as(MALLORY, "sh", "-c", f"exec cat < {trap}"), stdout=subprocess.PIPE)
        self.addCleanup(lambda: reader.poll() is None and reader.kill())
        job = self.d.submit("--", "echo", "victims-output", user=VICTIM, cwd=shared)
        self.assertEqual(job, next_job)
        rec = self.d.wait_state(job, FINAL)
        self.assertEqual(rec["state"], "failed", rec)
        self.assertIn("is a named pipe", rec["end_reason"])
        reader.kill()
        self.assertNotIn(b"victims-output", reader.communicate(timeout=10)[0])
        # Without a reader the job is not held either: it fails at once.
        idle = os.path.join(shared, f"rota-{job + 1}.out")
        subprocess.run(argv_as(MALLORY, "sh", "-c", f"umask 0; mkfifo -m 666 {idle}"), check=True)
        job = self.d.submit("--", "echo", "victims-output", user=VICTIM, cwd=shared)
        rec = self.d.wait_state(job, FINAL, timeout=10)
        self.assertEqual(rec["state"], "failed", rec)
        self.assertIn("is a named pipe", rec["end_reason"])
        # Named as --output, the pipe is refused at submit.
        r = self.d.rota("submit", "--output", idle, "--", "true", user=VICTIM, cwd=shared, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is a named pipe", r.stderr)
        self.assertServesOthers()

    def test_a_hard_link_at_the_output_path_is_refused(self):
        # With fs.protected_hardlinks off, a link to someone else's file could be made; its owner
        # is not the job's.
        target = os.path.join(self.home(VICTIM), "precious")
        with open(target, "w") as f:
            f.write("victim's\n")
        os.chown(target, self.victim.pw_uid, self.victim.pw_gid)
        probe = self.d.submit("--", "true", user=MALLORY, cwd=self.home(MALLORY))
        self.d.wait_state(probe, FINAL)
        os.link(target, os.path.join(self.home(MALLORY), f"rota-{probe + 1}.out"))
        job = self.d.submit("--", "echo", "overwritten", user=MALLORY, cwd=self.home(MALLORY))
        rec = self.d.wait_state(job, FINAL)
        self.assertEqual(rec["state"], "failed", rec)
        with open(target) as f:
            self.assertEqual(f.read(), "victim's\n")

    def test_a_symlink_at_the_output_path_is_not_followed(self):
        probe = self.d.submit("--", "true", user=MALLORY, cwd=self.home(MALLORY))
        self.d.wait_state(probe, FINAL)
        os.symlink("/etc/passwd", os.path.join(self.home(MALLORY), f"rota-{probe + 1}.out"))
        before = open("/etc/passwd").read()
        job = self.d.submit("--", "echo", "appended", user=MALLORY, cwd=self.home(MALLORY))
        rec = self.d.wait_state(job, FINAL)
        self.assertEqual(rec["state"], "failed", rec)
        self.assertEqual(open("/etc/passwd").read(), before)

    def test_logs_do_not_follow_a_directory_swapped_for_a_link(self):
        # The audit: root opened the output path itself, following a link laid in the middle of it,
        # and so served a file of the user's inside a directory only root may enter.
        sub = os.path.join(self.home(MALLORY), "sub")
        os.makedirs(sub)
        os.chown(sub, self.mallory.pw_uid, self.mallory.pw_gid)
        job = self.d.submit("--output", os.path.join(sub, "out.log"), "--", "echo", "ok", user=MALLORY,
                            cwd=self.home(MALLORY))
        self.d.wait_state(job, "completed")
        locked = self.path("root-only")
        os.makedirs(locked)
        os.chmod(locked, 0o700)
        with open(os.path.join(locked, "out.log"), "w") as f:
            f.write("root-only-content\n")
        os.chown(os.path.join(locked, "out.log"), self.mallory.pw_uid, self.mallory.pw_gid)
        shutil.rmtree(sub)
        os.symlink(locked, sub)
        r = self.d.rota("logs", str(job), user=MALLORY, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("root-only-content", r.stdout)
        self.assertIn("Permission denied", r.stderr)
        self.assertServesOthers()
        self.assertLogged(rf"refused logs from {MALLORY}: permission_denied")

    def test_logs_never_open_a_device(self):
        job = self.d.submit("--output", "/dev/null", "--", "true", user=MALLORY, cwd=self.home(MALLORY))
        self.d.wait_state(job, "completed")
        r = self.d.rota("logs", str(job), user=MALLORY, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not a regular file", r.stderr)

    def test_an_ended_jobs_environment_is_not_kept_and_the_database_is_private(self):
        job = self.d.submit("--", "true", user=MALLORY, cwd=self.home(MALLORY), env={"MY_API_KEY": "sk-live-1234"})
        self.d.wait_state(job, "completed")
        db = os.path.join(self.d.state, "rota.db")
        for f in (db, db + "-wal"):
            self.assertEqual(os.stat(f).st_mode & 0o777, 0o600, f)
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        env = con.execute("SELECT env FROM jobs WHERE id = ?", (job,)).fetchone()[0]
        con.close()
        self.assertEqual(env, "{}")

    def test_the_socket_is_given_its_mode_where_no_one_can_swap_it(self):
        # rotad chmod-ed the socket by its path after bind; now it is made and given its mode in a
        # private directory, then renamed into place. A link laid at the path is replaced, not followed.
        self.d.stop()
        target = self.path("not-to-chmod")
        with open(target, "w") as f:
            f.write("x")
        os.chmod(target, 0o600)
        if os.path.lexists(self.d.socket):
            os.remove(self.d.socket)
        os.symlink(target, self.d.socket)
        self.d.start()
        self.assertEqual(os.stat(target).st_mode & 0o777, 0o600)
        import stat
        st = os.lstat(self.d.socket)
        self.assertTrue(stat.S_ISSOCK(st.st_mode))
        self.assertEqual(st.st_mode & 0o777, 0o666)
        self.assertEqual([n for n in os.listdir(os.path.dirname(self.d.socket)) if n.startswith(".rotad-")], [])
        self.assertServesOthers()


class OverflowTest(AttackTest):
    def test_times_at_the_ends_of_64_bits(self):
        start = (int(time.time()) // 3600 + 48) * 3600
        booking = self.request_as(MALLORY, {"op": "book", "booking": {"gpus": 1, "start": start, "end": start + 3600}})
        self.assertTrue(booking["ok"], booking)
        bid = booking["booking"]["id"]
        for request in ({"op": "extend", "booking_id": bid, "for": 2 ** 62},
                        {"op": "extend", "booking_id": bid, "end": 2 ** 63 - 1},
                        {"op": "book", "booking": {"gpus": 1, "start": 2 ** 63 - 10, "for": 100}},
                        {"op": "book", "booking": {"gpus": 1, "start": -(2 ** 63), "end": 2 ** 63 - 1}},
                        {"op": "book", "booking": {"gpus": 1, "start": start, "for": 2 ** 63 - 1}},
                        {"op": "history", "since": -(2 ** 63)},
                        {"op": "events", "since": 2 ** 63 - 1},
                        {"op": "submit", "job": {"command": ["true"], "cwd": "/tmp", "env": {},
                                                 "time_limit": 2 ** 63 - 1}}):
            reply = self.request_as(MALLORY, request)
            self.assertIsNotNone(reply, request)
        self.assertRefused(self.request_as(MALLORY, {"op": "extend", "booking_id": bid, "for": 2 ** 62}),
                           "invalid_argument", "more than a year from now")
        self.assertServesOthers()


class GpuIsolationTest(AttackTest):
    """Cards from the fake libnvidia-ml, with minor numbers, and device nodes of their numbers made
    here (major 195): opening one with no driver behind it gives ENXIO when the cgroup allows it,
    EPERM when the job's device program refuses it."""

    def setUp(self):
        from harness import Rotad
        from test_gpus import FAKE, card
        self.nodes = self.path_for_nodes()
        self.d = Rotad(f'admin_group = "rota-at-admins"\n[gpus]\nsource = "nvml"\nnvml_library = "{FAKE}"\n'
                       'sample_interval = "1s"\n', kill_wait=self.KILL_WAIT)
        state = os.path.join(self.d.dir, "nvml.json")
        with open(state, "w") as f:
            json.dump({"driver_version": "550.54.15", "cards": [card(0, minor=0), card(1, minor=1)]}, f)
        self.d.env = {"FAKE_NVML_STATE": state}
        self.addCleanup(self._cleanup)
        self.d.start()

    def path_for_nodes(self):
        d = __import__("tempfile").mkdtemp(prefix="rota-it-dev-")
        self.addCleanup(lambda: shutil.rmtree(d, ignore_errors=True))
        os.chmod(d, 0o755)
        try:
            for minor in (0, 1):
                node = os.path.join(d, f"nvidia{minor}")
                os.mknod(node, 0o666 | __import__("stat").S_IFCHR, os.makedev(195, minor))
                os.chmod(node, 0o666)  # past the umask: anyone may open it, as the driver's nodes
        except OSError as e:
            self.skipTest(f"cannot make device nodes here: {e}")
        return d

    def test_a_job_cannot_open_the_cards_it_was_not_given(self):
        if "no device program here" in self.d.read_log():  # this kernel or container allows no BPF
            self.skipTest(self.d.read_log().split("GPU isolation: ")[-1].split("\n")[0])
        script = (f"import os\nfor n in (0, 1):\n    try:\n        os.close(os.open('{self.nodes}/nvidia%d' % n, os.O_RDWR))\n"
                  "        print(n, 'opened')\n    except OSError as e:\n        print(n, e.strerror)\n")
        job = self.d.submit("--gpus", "1", "--", PYTHON, "-c", script, user=MALLORY, cwd=self.home(MALLORY))
        rec = self.d.wait_state(job, FINAL)
        with open(os.path.join(self.home(MALLORY), f"rota-{job}.out")) as f:
            seen = dict(line.split(" ", 1) for line in f.read().splitlines())
        given = rec["gpus"][0]
        other = 1 - given
        self.assertEqual(seen[str(other)], "Operation not permitted", seen)  # refused by its cgroup
        self.assertEqual(seen[str(given)], "No such device or address", seen)  # its own: the driver's answer
        self.assertServesOthers()


class ReadoptionTest(AttackTest):
    def test_a_process_faking_a_shepherd_on_a_reused_pid_is_not_adopted(self):
        # After a restart, rotad recognised a shepherd by its command line alone: a user's process on
        # the recycled pid with the same command line would be adopted (and signalled as one).
        if not shutil.which("cc"):
            self.skipTest("no C compiler")
        pause = os.path.join(self.home(MALLORY), "pause")
        with open(self.path("pause.c"), "w") as f:
            f.write("#include <unistd.h>\nint main(void) { pause(); return 0; }\n")
        subprocess.run(["cc", "-o", pause, self.path("pause.c")], check=True)
        os.chmod(pause, 0o755)
        # Six jobs start at once: four on the standby shepherds (whose spec lock names their job), the
        # others on shepherds started for them, whose command line names the job: the case at stake.
        requests = [{"gpus": 1}, {"gpus": 1}, {"mig": "3g.40gb"}, {"mig": "2g.20gb"}, {"mig": "1g.10gb"},
                    {"mig": "1g.10gb"}]
        line = b"".join(request_line({"op": "submit", "job": {
            "command": ["sleep", "300"], "cwd": self.home(VICTIM), "env": {"PATH": "/usr/bin:/bin"},
            "request": dict({"kind": "mig", "profile": r["mig"]} if "mig" in r else {"kind": "gpus", "gpus": 1})}})
            for r in requests)
        ids = [r["job_id"] for r in self.send_as(VICTIM, line, replies=len(requests))]
        for j in ids:
            self.d.wait_state(j, "running")
        con = sqlite3.connect(f"file:{self.d.state}/rota.db?mode=ro", uri=True)
        found = None
        for j in ids:
            pid, pgid = con.execute("SELECT pid, pgid FROM jobs WHERE id = ?", (j,)).fetchone()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
            if "--job" in argv:
                found = (j, pid, pgid, argv)
        con.close()
        if found is None:
            self.skipTest("every job started on a standby shepherd")
        job, pid, pgid, argv = found
        self.d.kill9()
        os.kill(pid, 9)
        if pgid:
            subprocess.run(["kill", "-9", f"-{pgid}"], check=False)  # the job itself
        wait_for(lambda: not os.path.exists(f"/proc/{pid}"), what="the shepherd to be gone")
        from test_attacks_processes import spawn_with_pid
        fake = spawn_with_pid(pid, argv_as(MALLORY, PYTHON, "-c", "import os, sys; os.execv(sys.argv[1], sys.argv[2:])",
                                           pause, *argv))
        if fake is None:
            self.skipTest("the pid could not be taken again")
        self.addCleanup(lambda: (fake.kill(), fake.wait()))
        wait_for(lambda: open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[:-1] == [a.encode() for a in argv],
                 what="the fake shepherd's command line")
        self.d.start()
        rec = self.d.wait_state(job, FINAL, timeout=30)
        self.assertEqual(rec["state"], "node_fail", rec)
        time.sleep(0.5)
        self.assertIsNone(fake.poll(), "mallory's process was taken for the shepherd")
        self.assertServesOthers()
        self.assertLogged(rf"job {job}: not re-adopted: process {pid} does not run as rota-shepherd does")


if __name__ == "__main__":
    unittest.main()
