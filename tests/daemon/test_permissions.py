"""Identity and permissions with real Unix users (root only: CI runs as root). Identity comes
from the socket's peer credentials; a user acts only on their own jobs; admins on all; jobs run
as their owner, never as root."""
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import unittest

from harness import IS_ROOT, ROTA, ROTAD, DaemonTest, Rotad, SMALL_CLUSTER, as_user, ensure_user, wait_for


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


ALICE, BOB, CAROL = "rota-it-alice", "rota-it-bob", "rota-it-carol"
ADMIN_GROUP = "rota-it-admin"


@unittest.skipUnless(IS_ROOT, "creates real users: run as root (CI does)")
class PermissionTest(DaemonTest):
    CONFIG = f'admin_group = "{ADMIN_GROUP}"\n' + SMALL_CLUSTER

    @classmethod
    def setUpClass(cls):
        cls.alice = ensure_user(ALICE, groups=("rota-it-extra",))
        cls.bob = ensure_user(BOB)
        cls.carol = ensure_user(CAROL, groups=(ADMIN_GROUP,))

    def alice_dir(self):
        d = self.path("alice")
        os.makedirs(d, exist_ok=True)
        os.chown(d, self.alice.pw_uid, self.alice.pw_gid)
        return d

    def test_job_runs_as_its_owner_with_their_groups(self):
        d = self.alice_dir()
        job = self.d.submit("--", "sh", "-c", "id -u; id -g; id -G", user=ALICE, cwd=d)
        rec = self.d.wait_state(job, "completed")
        self.assertEqual(rec["user"], ALICE)
        self.assertEqual(rec["uid"], self.alice.pw_uid)
        out_path = os.path.join(d, f"rota-{job}.out")
        uid, gid, groups = read_text(out_path).split("\n")[:3]
        self.assertEqual(int(uid), self.alice.pw_uid)
        self.assertEqual(int(gid), self.alice.pw_gid)
        expected = sorted(os.getgrouplist(ALICE, self.alice.pw_gid))
        self.assertEqual(sorted(int(g) for g in groups.split()), expected)
        self.assertNotIn(0, expected)
        # The log file was created by the job's user, not by root.
        self.assertEqual(os.stat(out_path).st_uid, self.alice.pw_uid)

    def test_an_output_its_owner_cannot_write_is_refused_at_submit(self):
        # The shepherd opens the log as the job's owner when the job starts; rota submit makes
        # the same check as that user, so the job is refused now instead of failing later.
        root_only = self.path("root-only")
        os.makedirs(root_only, exist_ok=True)
        os.chmod(root_only, 0o755)
        r = self.d.rota("submit", "--name", "refused", "--", "true", user=ALICE, cwd=root_only, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"you cannot create files in {root_only} (Permission denied)", r.stderr)
        self.assertIn("submit from a directory you can write to", r.stderr)
        d = self.alice_dir()
        r = self.d.rota("submit", "--name", "refused", "--output", "/etc/passwd", "--", "true",
                        user=ALICE, cwd=d, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--output /etc/passwd: you cannot write to it", r.stderr)
        # Another user's file in a directory everyone may write to is not hers either.
        open(os.path.join(d, "bob.log"), "w").close()
        os.chown(os.path.join(d, "bob.log"), self.bob.pw_uid, self.bob.pw_gid)
        os.chmod(d, 0o1777)
        r = self.d.rota("submit", "--name", "refused", "--output", "bob.log", "--", "true",
                        user=ALICE, cwd=d, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--output bob.log: you cannot write to it", r.stderr)
        names = [j["name"] for j in json.loads(self.d.rota("queue", "--all", "--json").stdout)]
        names += [j["name"] for j in json.loads(self.d.rota("history", "--all", "--json").stdout)]
        self.assertNotIn("refused", names)
        # A file of her own there is accepted and written.
        job = self.d.submit("--output", "mine.log", "--", "echo", "written", user=ALICE, cwd=d)
        self.d.wait_state(job, "completed")
        self.assertEqual(read_text(os.path.join(d, "mine.log")), "written\n")

    def test_other_users_cannot_act_on_a_job_but_admins_can(self):
        d = self.alice_dir()
        job = self.d.submit("--name", "alice-train", "--", "sh", "-c", "echo secret-output; sleep 60",
                            user=ALICE, cwd=d)
        self.d.wait_state(job, "running")
        # Bob sees the job in the lab-wide queue, with its owner and name...
        out = self.d.rota("queue", "--all", user=BOB).stdout
        self.assertIn("alice-train", out)
        self.assertIn(ALICE[:8], out)
        # ...but not in his own queue, and he cannot see its details or logs or cancel it.
        self.assertNotIn("alice-train", self.d.rota("queue", user=BOB).stdout)
        for args in (("cancel", str(job)), ("show", str(job)), ("logs", str(job))):
            r = self.d.rota(*args, user=BOB, check=False)
            self.assertEqual(r.returncode, 1, (args, r.stdout, r.stderr))
            self.assertIn("belongs to", r.stderr)
            self.assertNotIn("secret-output", r.stdout)
        self.assertEqual(self.d.job(job)["state"], "running")
        # The queue does not reveal the command of others' jobs.
        import json
        mine = json.loads(self.d.rota("queue", "--all", "--json", user=BOB).stdout)
        jobs = mine["jobs"] if isinstance(mine, dict) else mine
        alices = [j for j in jobs if j["id"] == job][0]
        self.assertNotIn("command", alices)
        # Carol, in the admin group, can read and cancel it.
        self.assertIn("secret-output", self.d.rota("logs", str(job), user=CAROL).stdout)
        self.d.rota("cancel", str(job), user=CAROL)
        rec = self.d.wait_state(job, "cancelled")
        self.assertEqual(rec["end_reason"], f"Cancelled by {CAROL}")

    def raw_request(self, uid_or_user, request):
        """Sends one API request as another identity (setpriv, then Python on the socket) and
        returns the reply: what a client that writes its own JSON would get."""
        who = ["--reuid", str(uid_or_user), "--regid", str(uid_or_user)]
        who += ["--init-groups"] if isinstance(uid_or_user, str) else ["--clear-groups"]
        code = ("import json, socket, sys\n"
                "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
                "s.sendall(sys.argv[2].encode() + b'\\n'); f = s.makefile('rb')\n"
                "print(f.readline().decode(), end='')\n")
        python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable  # one bob may run
        r = subprocess.run(["setpriv"] + who + ["--", python, "-c", code, self.d.socket,
                                                json.dumps(dict({"v": 1}, **request))],
                           capture_output=True, text=True, timeout=30, cwd="/tmp")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_identity_comes_from_the_kernel_not_the_request(self):
        # A request that names someone else (root, or alice) in every field a client could fill
        # is still the caller's: the job is Bob's and runs as Bob.
        d = self.path("bob")
        os.makedirs(d, exist_ok=True)
        os.chown(d, self.bob.pw_uid, self.bob.pw_gid)
        claim = {"user": "root", "uid": 0, "gid": 0, "caller": ALICE}
        reply = self.raw_request(BOB, dict({"op": "submit", "job": dict({
            "command": ["sh", "-c", "id -u; id -g"], "cwd": d, "env": {"PATH": "/usr/bin:/bin"}}, **claim)},
            **claim))
        self.assertTrue(reply["ok"], reply)
        job = reply["job_id"]
        rec = self.d.wait_state(job, "completed")
        self.assertEqual((rec["user"], rec["uid"]), (BOB, self.bob.pw_uid))
        out_path = os.path.join(d, f"rota-{job}.out")
        self.assertEqual(read_text(out_path).split(), [str(self.bob.pw_uid), str(self.bob.pw_gid)])
        self.assertEqual(os.stat(out_path).st_uid, self.bob.pw_uid)
        # Nor does naming an admin in the request let Bob act as one.
        mine = self.d.submit("--", "sleep", "60", user=ALICE, cwd=self.alice_dir())
        reply = self.raw_request(BOB, dict({"op": "cancel", "job_ids": [mine]}, **claim))
        self.assertFalse(reply["results"][0]["ok"], reply)
        self.assertEqual(reply["results"][0]["error"]["code"], "permission_denied", reply)
        self.assertIn(self.d.job(mine)["state"], ("pending", "running"))
        self.d.rota("cancel", str(mine), user=ALICE)

    def test_a_caller_without_an_account_is_refused(self):
        # uid 54321 has no passwd entry: nothing may run under a name the server does not know.
        self.assertRaises(KeyError, pwd.getpwuid, 54321)
        reply = self.raw_request(54321, {"op": "submit", "job": {
            "command": ["true"], "cwd": "/tmp", "env": {"PATH": "/usr/bin:/bin"}}})
        self.assertFalse(reply["ok"], reply)
        self.assertEqual(reply["error"]["code"], "permission_denied")
        self.assertIn("uid 54321 has no user name on this server", reply["error"]["message"])
        self.assertEqual(self.d.api({"op": "queue", "all": True})["jobs"], [])

    def test_logs_never_follow_a_link_to_a_file_the_owner_does_not_own(self):
        d = self.alice_dir()
        job = self.d.submit("--output", "link.out", "--", "true", user=ALICE, cwd=d)
        self.d.wait_state(job, "completed")
        link = os.path.join(d, "link.out")
        os.remove(link)
        os.symlink("/etc/shadow", link)
        r = self.d.rota("logs", str(job), user=ALICE, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("root:", r.stdout)


@unittest.skipUnless(IS_ROOT, "needs a real user to run the daemon as")
class UserModeTest(unittest.TestCase):
    def test_ordinary_user_runs_rotad_for_themselves(self):
        user = ensure_user(ALICE)
        d = Rotad(SMALL_CLUSTER, run_as=ALICE)
        self.addCleanup(d.cleanup)
        os.chown(d.dir, user.pw_uid, user.pw_gid)
        os.chown(d.config_path, user.pw_uid, user.pw_gid)
        d.start()
        hello = d.api({"op": "hello"})
        # Root connecting to a user-mode daemon is refused: it serves its user alone.
        self.assertFalse(hello["ok"])
        self.assertEqual(hello["error"]["code"], "permission_denied")
        job = int(d.rota("submit", "--parsable", "--", "sh", "-c", "id -u", user=ALICE, cwd=d.dir).stdout)
        rec = wait_for(lambda: (lambda j: j if j["state"] not in ("pending", "running") else None)(
            json.loads(d.rota("show", str(job), "--json", user=ALICE).stdout)["job"]), what=f"job {job} to end")
        self.assertEqual(rec["state"], "completed", (rec, d.read_log()))
        self.assertEqual(read_text(os.path.join(d.dir, f"rota-{job}.out")).strip(), str(user.pw_uid))
        self.assertIn("user mode", d.read_log())
        # Its one user administers it (a system daemon refuses reload from non-admins).
        d.rota("reload", user=ALICE)

    def test_without_options_it_finds_its_places_under_the_users_directories(self):
        # What `make run` relies on: rotad with no option at all, as an ordinary user. The socket
        # goes under $XDG_RUNTIME_DIR, the state under ~/.local/state, the configuration is
        # ~/.config/rota/rota.toml when there is one (built-in defaults when not), and `rota`
        # finds the socket the same way.
        user = ensure_user(ALICE)
        top = tempfile.mkdtemp(prefix="rota-it-xdg-")
        os.chmod(top, 0o755)
        self.addCleanup(shutil.rmtree, top, True)
        home, runtime = os.path.join(top, "home"), os.path.join(top, "run")
        for p in (home, runtime):
            os.mkdir(p, 0o700)
            os.chown(p, user.pw_uid, user.pw_gid)
        env = {"HOME": home, "XDG_RUNTIME_DIR": runtime, "XDG_STATE_HOME": "", "XDG_CONFIG_HOME": "",
               "ROTA_SOCKET": "", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        user_config = os.path.join(home, ".config", "rota", "rota.toml")

        def alice(*args):
            return subprocess.run(as_user(ALICE, [ROTA] + list(args), env), capture_output=True, text=True,
                                  cwd=home, timeout=30)

        for config in (None, SMALL_CLUSTER):
            if config is not None:
                os.makedirs(os.path.dirname(user_config))
                with open(user_config, "w") as f:
                    f.write(config + '[web]\nlisten = ""\n')
                subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", os.path.join(home, ".config")],
                               check=True)
            log_path = os.path.join(top, "rotad.log")
            with open(log_path, "w") as log:
                proc = subprocess.Popen(as_user(ALICE, [ROTAD], env), stdout=log, stderr=subprocess.STDOUT, cwd=home)
            self.addCleanup(lambda p=proc: p.poll() is not None or (p.kill(), p.wait()))
            wait_for(lambda: proc.poll() is not None or alice("status").returncode == 0,
                     what="rotad to answer on its default socket")
            text = read_text(log_path)
            self.assertIsNone(proc.poll(), text)
            self.assertIn("configuration: " + (user_config if config else "built-in defaults"), text)
            self.assertIn(f"serving {runtime}/rota/rota.sock (user mode), state in {home}/.local/state/rota", text)
            self.assertTrue(os.path.exists(os.path.join(runtime, "rota", "rota.sock")))
            self.assertTrue(os.listdir(os.path.join(home, ".local", "state", "rota")), "no state written")
            if config is not None:  # the built-in defaults schedule NVML's cards, which this machine may lack
                r = alice("submit", "--parsable", "--", "true")
                self.assertEqual(r.returncode, 0, r.stderr)
                job = r.stdout.strip()
                wait_for(lambda: json.loads(alice("show", job, "--json").stdout)["job"]["state"] == "completed",
                         what=f"job {job} to complete")
            proc.terminate()
            self.assertEqual(proc.wait(timeout=20), 0, read_text(log_path))
            # An ordinary user may not make cgroups here: the fallback is said once, not per job.
            text = read_text(log_path)
            if "executor: cgroup v2 at" not in text:
                self.assertEqual(text.count("jobs are tracked by process group"), 1, text)

if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(IS_ROOT, "submits as root")
class RootJobsTest(DaemonTest):
    def test_root_may_not_submit_unless_the_config_allows(self):
        r = self.d.rota("submit", "--", "true", user="root", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("does not run jobs as root", r.stderr)
        r = self.d.rota("run", "--", "true", user="root", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.d.write_config("allow_root_jobs = true\n" + SMALL_CLUSTER)
        self.d.rota("reload", user="root")
        job = int(self.d.rota("submit", "--parsable", "--", "id", "-u", user="root").stdout)
        self.assertEqual(self.d.wait_state(job, "completed")["uid"], 0)
