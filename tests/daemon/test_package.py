"""The Debian package, for real: `make deb`'s script builds rota_<version>_amd64.deb from this
build with dpkg-buildpackage and debhelper (lintian must pass: every override has its reason),
twice: this version, and the same build as a lower version to upgrade from. Then a fresh Debian
12 root made by debootstrap (minbase, from the Debian mirror this machine's apt uses) gets the
older package with `apt-get install ./rota_*.deb`, as the README says; the admin edits the
configuration; rotad is started with the unit's own ExecStart line; a real user submits jobs; the
store is left as the previous schema would have left it; the newer package is installed over it;
rotad starts again, and every job, the admin's configuration and the running job are still there,
the store migrated.

Why a chroot, not systemd-nspawn: this kind of machine runs the tests in a container, where
booting systemd in a nested container is not possible; the chroot has the package's files, its
dependencies from Debian and its maintainer scripts, and rotad is started with the unit's command
line (systemd itself, enabling and restarting, is debhelper's tested code). The "previous build"
is this build under a lower version, with its store rewritten to schema 11 (the version before
the container image, deadline and forecast columns): building an older tree as well would double the test's build time."""
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
import unittest
import urllib.request

from harness import BIN, IS_ROOT, wait_for

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PREVIOUS = "0.1.99"


def run(*argv, check=True, timeout=900, **kw):
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def debian_mirror():
    """The Debian archive this machine's apt uses (the only network CI has besides npm)."""
    paths = ["/etc/apt/sources.list"] + [os.path.join("/etc/apt/sources.list.d", f)
                                         for f in sorted(os.listdir("/etc/apt/sources.list.d"))]
    for path in paths:
        try:
            text = read(path)
        except OSError:
            continue
        m = re.search(r"(?m)^(?:URIs:|deb(?:\s+\[[^\]]*\])?)\s+(\S+/debian)/?(?:\s|$)", text)
        if m:
            return m.group(1)
    return "http://deb.debian.org/debian"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(IS_ROOT, "installing a package into a Debian root needs root")
class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool in ("debootstrap", "dpkg-buildpackage", "lintian"):
            if shutil.which(tool) is None:
                raise AssertionError(f"{tool} is missing: scripts/install-deps.sh installs it")
        cls.dir = tempfile.mkdtemp(prefix="rota-deb-")
        out = os.path.join(cls.dir, "out")
        make = os.path.join(SRC, "scripts", "make-deb.sh")
        cls.deb = run(make, BIN, out).stdout.strip().splitlines()[-1]
        cls.previous = run(make, BIN, out, PREVIOUS).stdout.strip().splitlines()[-1]
        cls.root = os.path.join(cls.dir, "root")
        cls.mounts = []
        # ca-certificates: the root's apt reaches the same mirror, which may be https.
        run("debootstrap", "--variant=minbase", "--include=ca-certificates", "bookworm", cls.root, debian_mirror(),
            timeout=1800)
        shutil.copy("/etc/resolv.conf", os.path.join(cls.root, "etc", "resolv.conf"))
        for what, where, opts in (("proc", "proc", ["-t", "proc"]), ("sysfs", "sys", ["-t", "sysfs"]),
                                  ("/dev", "dev", ["--bind"])):
            target = os.path.join(cls.root, where)
            run("mount", *opts, what, target)
            cls.mounts.append(target)
        # Services do not start as packages install in a chroot (no systemd runs there).
        with open(os.path.join(cls.root, "usr", "sbin", "policy-rc.d"), "w") as f:
            f.write("#!/bin/sh\nexit 101\n")
        os.chmod(os.path.join(cls.root, "usr", "sbin", "policy-rc.d"), 0o755)
        for deb in (cls.deb, cls.previous):
            shutil.copy(deb, os.path.join(cls.root, "tmp"))

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "root", None):
            # Whatever still runs from the root (rotad, shepherds, jobs) goes with it.
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        if os.readlink(f"/proc/{pid}/root") == cls.root:
                            os.kill(int(pid), 9)
                    except OSError:
                        pass
            time.sleep(0.2)
            for m in reversed(cls.mounts):
                subprocess.run(["umount", "-l", m], capture_output=True)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        self.addCleanup(self._log_on_failure)

    def _log_on_failure(self):
        result = getattr(getattr(self, "_outcome", None), "result", None)
        failed = result is not None and any(t is self for t, _ in list(result.failures) + list(result.errors))
        log = os.path.join(self.dir, "rotad.log")
        if failed and os.path.exists(log):
            print("---- the packaged rotad's log ----\n" + read(log))

    def chroot(self, *argv, check=True, user=None, timeout=600):
        cmd = ["chroot", self.root]
        if user:
            cmd += ["runuser", "-u", user, "--"]
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
               "DEBIAN_FRONTEND": "noninteractive"}
        return run(*cmd, *argv, check=check, timeout=timeout, env=env)

    def path(self, p):
        return os.path.join(self.root, p.lstrip("/"))

    def start_rotad(self):
        """rotad as rota.service starts it: the unit's ExecStart, in its RuntimeDirectory."""
        unit = read(self.path("/lib/systemd/system/rota.service"))
        exec_start = re.search(r"(?m)^ExecStart=(.+)$", unit).group(1).split()
        os.makedirs(self.path("/run/rota"), exist_ok=True)
        with open(os.path.join(self.dir, "rotad.log"), "a") as log:
            self.rotad = subprocess.Popen(["chroot", self.root] + exec_start, stdout=log, stderr=subprocess.STDOUT,
                                          env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"})
        wait_for(lambda: os.path.exists(self.path("/run/rota/rota.sock")), timeout=30, what="the packaged rotad")

    def stop_rotad(self):
        self.rotad.terminate()  # SIGTERM, as systemctl stop sends; KillMode=process keeps the jobs
        self.rotad.wait(timeout=30)
        if os.path.exists(self.path("/run/rota/rota.sock")):
            os.unlink(self.path("/run/rota/rota.sock"))

    def job(self, job):
        return json.loads(self.chroot("rota", "show", str(job), "--json").stdout)["job"]

    def wait_state(self, job, state, timeout=60):
        return wait_for(lambda: (lambda j: j if j["state"] == state else None)(self.job(job)), timeout=timeout,
                        what=f"job {job} to be {state}")

    def test_install_run_and_upgrade_with_jobs_in_the_store(self):
        # A fresh install of the older package, with its dependencies from Debian.
        self.chroot("apt-get", "install", "-y", "-q", f"/tmp/{os.path.basename(self.previous)}", timeout=900)
        self.assertEqual(self.chroot("rota", "--version").stdout.split()[-1], "0.2.0")
        for f in ("/usr/sbin/rotad", "/usr/libexec/rota/rota-shepherd", "/etc/rota/rota.toml",
                  "/usr/share/man/man1/rota.1.gz", "/usr/share/man/man8/rotad.8.gz",
                  "/usr/share/bash-completion/completions/rota", "/usr/share/rota/web/index.html",
                  "/usr/share/doc/rota/README.md", "/lib/systemd/system/rota.service"):
            self.assertTrue(os.path.exists(self.path(f)), f)
        conffiles = self.chroot("dpkg-query", "-W", "-f=${Conffiles}", "rota").stdout
        self.assertIn("/etc/rota/rota.toml", conffiles)
        # The admin's configuration: simulated cards (no GPU here), the page on a free port, and the
        # page's directory left to the default (found beside rotad: /usr/share/rota/web).
        port = free_port()
        conf = read(self.path("/etc/rota/rota.toml"))
        conf = conf.replace('source = "nvml"', 'source = "simulated"', 1)
        conf = conf.replace('listen = "127.0.0.1:8080"', f'listen = "127.0.0.1:{port}"', 1)
        conf = conf.replace('static_dir = "/usr/share/rota/web"', 'static_dir = ""', 1)
        conf = conf.replace('password_login = true', 'password_login = false', 1)
        conf += '\n# the admin\'s cards\n[[gpus.card]]\nmodel = "NVIDIA A100-SXM4-80GB"\nmemory = "80G"\ncount = 2\n'
        with open(self.path("/etc/rota/rota.toml"), "w") as f:
            f.write(conf)
        self.chroot("rota", "config", "check", "/etc/rota/rota.toml")
        self.start_rotad()
        self.chroot("useradd", "--create-home", "student")
        home = "/home/student"

        def submit(*args):
            return int(self.chroot("sh", "-c", f"cd {home} && rota submit --parsable " + " ".join(args),
                                   user="student").stdout.strip())
        done = submit("-- sh -c 'id -un > who.txt'")
        self.wait_state(done, "completed")
        self.assertEqual(read(self.path(f"{home}/who.txt")), "student\n")
        self.assertEqual(os.stat(self.path(f"{home}/who.txt")).st_uid,
                         int(self.chroot("id", "-u", "student").stdout))
        running = submit("--gpus 2 -- sh -c 'while [ ! -e go ]; do sleep 0.1; done; echo ran > ran.txt'")
        self.wait_state(running, "running")
        pending = submit(f"--after {running} -- sh -c 'echo after > after.txt'")
        self.assertEqual(self.job(pending)["state"], "pending")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            page = r.read().decode()
        self.assertIn("<html", page.lower())  # served from /usr/share/rota/web, found beside rotad

        # The store as an older schema left it (no image, deadline, forecast or promise column, no
        # table of runs outside Rota: schema 11), rotad stopped as an upgrade's restart stops it: the
        # running job keeps running.
        self.stop_rotad()
        db = sqlite3.connect(self.path("/var/lib/rota/rota.db"))
        db.execute("ALTER TABLE jobs DROP COLUMN image")
        db.execute("ALTER TABLE jobs DROP COLUMN deadline")
        db.execute("ALTER TABLE jobs DROP COLUMN forecast_at")
        db.execute("ALTER TABLE jobs DROP COLUMN forecast_start")
        db.execute("ALTER TABLE jobs DROP COLUMN promise")
        db.execute("DROP TABLE outside_runs")
        db.execute("UPDATE meta SET value = '11' WHERE key = 'schema_version'")
        db.commit()
        db.close()

        # The upgrade keeps the admin's configuration without asking (the package's did not change).
        self.chroot("apt-get", "install", "-y", "-q", f"/tmp/{os.path.basename(self.deb)}", timeout=900)
        self.assertEqual(self.chroot("dpkg-query", "-W", "-f=${Version}", "rota").stdout, "0.2.0")
        self.assertEqual(read(self.path("/etc/rota/rota.toml")), conf)
        self.assertFalse([f for f in os.listdir(self.path("/etc/rota")) if ".dpkg-" in f])
        self.start_rotad()
        db = sqlite3.connect(self.path("/var/lib/rota/rota.db"))
        self.assertEqual(db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0], "16")
        db.close()
        self.assertEqual(self.job(done)["state"], "completed")
        self.assertEqual(self.job(running)["state"], "running")  # re-adopted
        open(self.path(f"{home}/go"), "w").close()
        self.wait_state(running, "completed")
        self.wait_state(pending, "completed")
        self.assertEqual(read(self.path(f"{home}/ran.txt")), "ran\n")
        self.assertEqual(read(self.path(f"{home}/after.txt")), "after\n")

        # Where systemd runs, the postinst restarts rotad on an upgrade only with a configuration the
        # new rotad accepts. systemd cannot run here: its directory is made and deb-systemd-invoke
        # is one that writes down what it was asked (first on dpkg's PATH, /usr/local/sbin).
        os.makedirs(self.path("/run/systemd/system"))
        invoked = self.path("/tmp/invoked")
        fake = self.path("/usr/local/sbin/deb-systemd-invoke")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\necho "$*" >> /tmp/invoked\n')
        os.chmod(fake, 0o755)
        try:
            with open(self.path("/etc/rota/rota.toml"), "a") as f:
                f.write("bogus_key = 1\n")
            r = self.chroot("dpkg", "-i", f"/tmp/{os.path.basename(self.deb)}")
            self.assertIn("the new rotad does not accept /etc/rota/rota.toml; the running rotad stays", r.stderr)
            self.assertIn("bogus_key", r.stderr)
            self.assertNotIn("restart rota.service", read(invoked) if os.path.exists(invoked) else "")
            with open(self.path("/etc/rota/rota.toml"), "w") as f:
                f.write(conf)
            self.chroot("dpkg", "-i", f"/tmp/{os.path.basename(self.deb)}")
            self.assertIn("restart rota.service", read(invoked))
        finally:
            os.unlink(fake)
            os.rmdir(self.path("/run/systemd/system"))
        self.stop_rotad()


if __name__ == "__main__":
    unittest.main()
