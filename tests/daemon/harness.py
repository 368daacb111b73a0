"""Test harness for the daemon integration tests: real rotad and rota processes.

Each test gets its own directory (state, socket, job files) and its own rotad, started with a
configuration written by the test. The binaries come from $ROTA_BIN_DIR (set by ctest).
When the tests run as root (CI does), real Unix users are created for permission tests.
"""
import contextlib
import fcntl
import grp
import json
import os
import pwd
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import unittest

BIN = os.environ.get("ROTA_BIN_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
ROTAD = os.path.join(BIN, "rotad")
ROTA = os.path.join(BIN, "rota")
# Under the sanitizers (ctest sets ASAN_OPTIONS) the leak check at the exit of each `rota` command
# costs about 40 ms, a quarter of a daemon suite's time: the suites whose subject is the command line
# (ROTA_CLI_LEAKS=1, set by CMakeLists.txt) keep it, the others check rotad's and the shepherd's
# leaks only. The unit tests check the libraries the command line shares with rotad.
CLIENT_ASAN = {}
if os.environ.get("ASAN_OPTIONS") is not None and os.environ.get("ROTA_CLI_LEAKS") != "1":
    CLIENT_ASAN = {"ASAN_OPTIONS": ":".join(o for o in [os.environ["ASAN_OPTIONS"], "detect_leaks=0"] if o)}
IS_ROOT = os.geteuid() == 0

# Two GPUs, one MIG card: small enough to fill, varied enough for shares and slices.
SMALL_CLUSTER = """
[gpus]
source = "simulated"
[[gpus.card]]
model = "NVIDIA A100-SXM4-80GB"
memory = "80G"
count = 2
nvlink = [[0, 1]]
[[gpus.card]]
model = "NVIDIA A100-SXM4-80GB"
memory = "80G"
count = 1
mig = ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
"""

FINAL = {"completed", "failed", "cancelled", "timeout", "preempted", "node_fail"}

# rotad never runs jobs as root: when the tests run as root, clients run as this user unless a
# test names another.
DEFAULT_USER = "rota-it-user" if IS_ROOT else None


def ensure_user(name, groups=(), shell=None):
    """Creates a real Unix user (root only) and returns its passwd entry; `shell` sets its login
    shell (default: /bin/sh for a new user, unchanged for one that exists). Test files run in
    parallel: a lock file serialises useradd/groupadd (which refuse to run concurrently)."""
    with open("/tmp/rota-it-users.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_user_locked(name, groups, shell)


def _ensure_user_locked(name, groups, shell):
    for g in groups:
        try:
            grp.getgrnam(g)
        except KeyError:
            subprocess.run(["groupadd", g], check=True)
    try:
        pwd.getpwnam(name)
    except KeyError:
        # --badname: lab accounts may have names useradd's default pattern refuses (e.g. Chinese).
        subprocess.run(["useradd", "--badname", "--create-home", "--shell", shell or "/bin/sh", name], check=True)
    if shell and pwd.getpwnam(name).pw_shell != shell:
        subprocess.run(["usermod", "--shell", shell, name], check=True)
    for g in groups:
        subprocess.run(["usermod", "-a", "-G", g, name], check=True)
    return pwd.getpwnam(name)


def as_user(user, argv, env_vars):
    """argv run as `user` (no intermediate process: setpriv and env exec), with env_vars set."""
    if not user:
        return list(argv)
    ensure_user(user)
    return (["setpriv", "--reuid", user, "--regid", user, "--init-groups", "--", "env"] +
            [f"{k}={v}" for k, v in env_vars.items()] + list(argv))


def strace_injects():
    """Whether strace can run a program here and inject a fault into it (ptrace allowed)."""
    try:
        r = subprocess.run(["strace", "-o", "/dev/null", "-e", "trace=getppid", "-e", "inject=getppid:retval=7",
                            "sh", "-c", "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


@contextlib.contextmanager
def strace_attached(pids, *options):
    """strace attached to the running processes `pids`, with `options` (which system calls to
    trace, a fault to inject), for the duration of the with-block."""
    argv = ["strace", "-o", "/dev/null", *options]
    for pid in pids:
        argv += ["-p", str(pid)]
    tracer = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        for _ in pids:
            line = tracer.stderr.readline()
            if "attached" not in line:
                raise AssertionError(f"strace did not attach: {line!r}")
        yield tracer
    finally:
        tracer.kill()
        tracer.wait()
        tracer.stderr.close()


def cgroup2_mount():
    """The cgroup v2 mount point, or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                return fields[4]
    return None


def own_cgroup(pid):
    """The cgroup v2 path of process `pid` (relative to the mount point), or None."""
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].strip()
    return None


def proc_stat(pid):
    """The fields of /proc/<pid>/stat after the command name: [0] is the state ("Z" for a zombie),
    [16] the nice value. FileNotFoundError when the process is gone."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def open_files(pid):
    """What process `pid`'s descriptors point at (the targets of /proc/<pid>/fd/*), read while it
    runs: a descriptor closed between the listing and its readlink is left out, not an error."""
    fd_dir = f"/proc/{pid}/fd"
    targets = []
    for n in os.listdir(fd_dir):
        with contextlib.suppress(FileNotFoundError):
            targets.append(os.readlink(os.path.join(fd_dir, n)))
    return targets


def until(gate):
    """A shell line that waits for file `gate` in the job's directory: a job that ends when the test
    says so (DaemonTest.open_gate), not after a time that a slow machine (ASan, a loaded CI) may overrun."""
    return f"until [ -e {gate} ]; do sleep 0.05; done; "


def wait_for(predicate, timeout=20.0, interval=0.05, what="condition"):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class Rotad:
    """One rotad process with its own state directory and socket."""

    def __init__(self, config=SMALL_CLUSTER, kill_wait=2, run_as=None, env=None):
        self.dir = tempfile.mkdtemp(prefix="rota-it-")
        os.chmod(self.dir, 0o1777)  # jobs of the test users write here, like in /tmp
        self.config_path = os.path.join(self.dir, "rota.toml")
        self.state = os.path.join(self.dir, "state")
        self.socket = os.path.join(self.dir, "run", "rota.sock")
        self.log_path = os.path.join(self.dir, "rotad.log")
        self.kill_wait = kill_wait
        self.run_as = run_as
        self.env = env  # extra environment of rotad (e.g. the fake NVML's state file)
        self.proc = None
        self.write_config(config)

    def write_config(self, text):
        with open(self.config_path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(self.config_path, 0o644)

    def start(self, wait=True, wrapper=(), args=()):
        """`wrapper`: a command that runs rotad (e.g. strace with a fault to inject); `args`: more
        of rotad's options."""
        cmd = list(wrapper) + [ROTAD, "--config", self.config_path, "--state-dir", self.state, "--socket", self.socket,
               "--kill-wait", str(self.kill_wait)] + list(args)
        if self.run_as:
            # setpriv execs rotad itself (runuser would stay in between and die of the SIGTERM
            # meant for rotad), so stop() sees rotad's own exit status.
            cmd = ["setpriv", "--reuid", self.run_as, "--regid", self.run_as, "--init-groups", "--"] + cmd
        self.log = open(self.log_path, "a")
        env = dict(os.environ, **self.env) if self.env else None
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        if wait:
            wait_for(self._answers, timeout=20, what="rotad to answer on " + self.socket)
        return self

    def _answers(self):
        if self.proc.poll() is not None:
            raise AssertionError("rotad exited with %s:\n%s" % (self.proc.returncode, self.read_log()))
        try:
            return self.api({"op": "hello"}) is not None
        except OSError:
            return False

    def cgroup_base(self):
        """The cgroup directory of the jobs, from the log; None where jobs are tracked by process group."""
        m = re.search(r"executor: cgroup v2 at (\S+)", self.read_log())
        return m.group(1) if m else None

    def read_log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def query(self, sql, params=()):
        """The rows of `sql` on rotad's store, read by another process's connection beside it (as
        an admin's sqlite3 would: opened, read, closed)."""
        db = sqlite3.connect(os.path.join(self.state, "rota.db"))
        try:
            return db.execute(sql, params).fetchall()
        finally:
            db.close()

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def wait_death(self, timeout=20):
        """Waits for a rotad that is meant to die by itself (a fault injected by its wrapper)."""
        self.proc.wait(timeout=timeout)
        self.log.close()

    def stop(self):
        """SIGTERM; rotad must shut down cleanly (exit status 0) within 20 s."""
        failure = None
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                failure = "rotad did not stop within 20 s of SIGTERM"
            if failure is None and self.proc.returncode != 0:
                # -15: the signal killed it (a thread that did not block it took it).
                failure = f"rotad exited with {self.proc.returncode} on SIGTERM"
        if self.proc:
            self.log.close()
        if failure:
            raise AssertionError(failure + ":\n" + self.read_log())

    def cleanup(self):
        # Let the daemon stop what is still running (its SIGTERM-then-SIGKILL sequence reaches
        # jobs that ignore SIGTERM, which killing their shepherds would not), then stop it.
        if self.proc and self.proc.poll() is None:
            try:
                active = [j["id"] for j in self.api({"op": "queue", "all": True}).get("jobs", [])]
                if active:
                    self.api({"op": "cancel", "job_ids": active})
                    deadline = time.time() + self.kill_wait + 10
                    while time.time() < deadline and self.api({"op": "queue", "all": True}).get("jobs"):
                        time.sleep(0.1)
            except (OSError, ValueError, TypeError):
                pass
        self.stop()
        # What is still running (rotad could not start again, or did not answer): its shepherds
        # forward SIGTERM to their jobs. A job that ignores it has its leader killed after a
        # while; its shepherd then kills the rest (the cgroup, or the process group) and exits.
        shepherds = "rota-shepherd --(job [0-9]+ --spec|standby --run-dir) " + self.state
        if subprocess.run(["pkill", "-f", shepherds], check=False).returncode == 0:
            def left():
                r = subprocess.run(["pgrep", "-f", shepherds], capture_output=True, text=True, check=False)
                return [int(p) for p in r.stdout.split()]
            deadline = time.time() + 3
            while left() and time.time() < deadline:
                time.sleep(0.1)
            for pid in left():
                subprocess.run(["pkill", "-KILL", "-P", str(pid)], check=False)
        self.remove_cgroup_base()
        shutil.rmtree(self.dir, ignore_errors=True)

    def remove_cgroup_base(self):
        """What a rotad that was killed (and not started again) left of its cgroup base: a stopped
        one removes it. Its job cgroups are empty once their shepherds are gone."""
        try:
            base = self.cgroup_base()
        except OSError:
            return
        if not base or not os.path.basename(base).startswith("rota-") or not os.path.isdir(base):
            return  # never the system daemon's "rota"
        deadline = time.time() + 3
        while True:
            for name in os.listdir(base):
                if name.startswith("job-"):
                    try:
                        os.rmdir(os.path.join(base, name))
                    except OSError:
                        pass
            try:
                os.rmdir(base)
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.time() > deadline:
                    return
                time.sleep(0.1)

    # --- clients -----------------------------------------------------------------------------

    def client_env(self, env=None):
        e = {"ROTA_SOCKET": self.socket, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
             "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        e.update(CLIENT_ASAN)
        if env:
            e.update(env)
        return e

    def command(self, *args, user=None, env=None):
        """The argv that runs `rota ARGS` as `user` (default: DEFAULT_USER when root)."""
        user = user or DEFAULT_USER
        if user in (None, "root"):
            return [ROTA] + list(args)
        return as_user(user, [ROTA] + list(args), self.client_env(env))

    def rota(self, *args, user=None, check=True, cwd=None, env=None, timeout=60, input=None):
        """Runs the rota command line; returns the CompletedProcess (stdout/stderr as text)."""
        e = dict(os.environ)
        e.update(self.client_env(env))
        r = subprocess.run(self.command(*args, user=user, env=env), capture_output=True, text=True,
                           cwd=cwd or self.dir, env=e, timeout=timeout, input=input)
        if check and r.returncode != 0:
            raise AssertionError(f"rota {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        return r

    def start_rota(self, *args, output=subprocess.DEVNULL):
        """Starts `rota ARGS` (as rota() does) without waiting for it: a `rota run` session. With
        output=subprocess.PIPE its stdout and stderr come back as text from communicate()."""
        return subprocess.Popen(self.command(*args), env=dict(os.environ, **self.client_env()), stdout=output,
                                stderr=output, text=True, cwd=self.dir)

    def sessions(self, state=None):
        """The interactive jobs (`rota run`, `rota shell`) in the queue, of any state or of `state`."""
        return [j for j in self.api({"op": "queue", "all": True})["jobs"]
                if j["interactive"] and state in (None, j["state"])]

    def submit(self, *args, user=None, cwd=None, env=None):
        r = self.rota("submit", "--parsable", *args, user=user, cwd=cwd, env=env)
        return int(r.stdout.strip())

    def show(self, job, user="root"):
        """`rota show --json`, by default as root (an admin sees every job)."""
        return json.loads(self.rota("show", str(job), "--json", user=user).stdout)

    def job(self, job):
        return self.show(job)["job"]

    def standbys(self):
        """The pids of this rotad's standby shepherds (rota-shepherd --standby --run-dir STATE/run)."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline") as f:
                    argv = f.read().split("\0")[:-1]
            except OSError:
                continue
            if len(argv) == 4 and os.path.basename(argv[0]) == "rota-shepherd" and \
                    argv[1:] == ["--standby", "--run-dir", self.state + "/run"]:
                found.append(int(pid))
        return found

    def wait_state(self, job, states, timeout=20):
        states = {states} if isinstance(states, str) else set(states)
        return wait_for(lambda: (lambda j: j if j["state"] in states else None)(self.job(job)), timeout=timeout,
                        what=f"job {job} to reach {states}")

    def api(self, *requests, raw=None):
        """Sends requests (dicts, or raw bytes) on one connection; returns the replies."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        try:
            s.connect(self.socket)
        except OSError:
            s.close()
            raise
        f = s.makefile("rwb")
        replies = []
        try:
            for r in requests:
                data = r if isinstance(r, bytes) else (json.dumps(dict({"v": 1}, **r)) + "\n").encode()
                f.write(data)
                f.flush()
                line = f.readline()
                if not line:
                    replies.append(None)
                    break
                replies.append(json.loads(line))
        finally:
            f.close()
            s.close()
        return replies[0] if len(requests) == 1 else replies


class DaemonTest(unittest.TestCase):
    """Base class: self.d is a started rotad; subclasses may set CONFIG."""
    CONFIG = SMALL_CLUSTER
    KILL_WAIT = 2

    def setUp(self):
        self.d = Rotad(self.CONFIG, kill_wait=self.KILL_WAIT)
        self.addCleanup(self._cleanup)
        self.d.start()

    def _cleanup(self):
        if self._outcome_failed():
            print("---- rotad log ----\n" + self.d.read_log())
        self.d.cleanup()

    def _outcome_failed(self):
        result = getattr(getattr(self, "_outcome", None), "result", None)
        if result is None:
            return False
        return any(test is self for test, _ in list(result.failures) + list(result.errors))

    def path(self, name):
        return os.path.join(self.d.dir, name)

    def write_script(self, name, text):
        """An executable script in the test directory; returns its path."""
        script = self.path(name)
        with open(script, "w") as f:
            f.write(text)
        os.chmod(script, 0o755)
        return script

    def preempt_with_requeue(self, gpus, signal, timeout=30):
        """An explore job (checkpoints on `signal`, e.g. "USR1@1") preempted by a thesis job on
        the same `gpus`, requeued, and run again to completion, on whichever engine: asserts the
        order of what ran and the kept submit time; returns (explore id, thesis id, its record)."""
        script = self.write_script("explore.sh", "#!/bin/sh\ntrap 'echo checkpoint >> runs; exit 0' USR1\n"
                                   "echo start >> runs\n"
                                   "[ $(grep -c start runs) -ge 2 ] && exit 0\n"
                                   "while true; do sleep 0.1; done\n")
        explore = self.d.submit("--tier", "explore", "--gpus", str(gpus), "--requeue", "--signal", signal, "--",
                                script)
        first = self.d.wait_state(explore, "running")
        self.assertTrue(first["preemptible"])
        wait_for(lambda: os.path.exists(self.path("runs")), what="the explore job to set its trap")
        thesis = self.d.submit("--tier", "thesis", "--gpus", str(gpus), "--", "sh", "-c", "echo thesis >> runs")
        self.d.wait_state(thesis, "completed", timeout=timeout)
        rec = self.d.wait_state(explore, "completed", timeout=timeout)
        self.assertEqual(self.read("runs").split(), ["start", "checkpoint", "thesis", "start"])
        self.assertEqual(rec["submit_time"], first["submit_time"])
        self.assertIn(f"Preempted by job {thesis} (requeued)", [e["reason"] for e in self.d.show(explore)["events"]])
        return explore, thesis, rec

    def read(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return f.read()

    def open_gate(self, gate):
        """Lets the jobs waiting on `gate` (until(gate)) go on."""
        with open(self.path(gate), "w"):
            pass
