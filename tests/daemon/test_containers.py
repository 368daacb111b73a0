"""`rota submit --image` with a real rotad and a real Podman (as root, `--runtime runc
--cgroup-manager cgroupfs`, which runs on this kind of machine whatever its cgroup layout) and an
image the test imports from a root file system it makes of busybox (there is no registry to pull
from): the job runs in the image as its user, with its GPUs' variables and only the variables a
container should get, in its working directory; signals reach the process in the container;
cancel stops the container, also one that ignores SIGTERM; nothing is left behind; images the lab
does not allow, missing ones and hostile names are refused with one clear message. `rota run
--image` runs the container attached to the client's terminal (a real pseudo-terminal here) or
its pipes, passes Ctrl-C on, stops the container when the client goes, and attaches again after
rotad restarts.

Docker and Apptainer are not installed here: their command lines are checked against their
manuals in src/exec/container_test.cc only."""
import fcntl
import json
import os
import pty
import pwd
import select
import shutil
import signal
import struct
import subprocess
import tarfile
import tempfile
import termios
import time
import unittest
import uuid

from harness import DEFAULT_USER, IS_ROOT, SMALL_CLUSTER, DaemonTest, as_user, wait_for
from test_gpus import FakeNvmlTest

PODMAN = shutil.which("podman") or "/usr/bin/podman"
RUNTIME_ARGS = ["--runtime", "runc", "--cgroup-manager", "cgroupfs"]
# One image per run of this file, so that runs side by side never remove each other's.
IMAGE = f"localhost/rota-it-busybox:{uuid.uuid4().hex[:8]}"
APPLETS = ["sh", "id", "cat", "sleep", "env", "ls", "echo", "pwd", "grep", "touch", "stat", "true", "stty"]


def podman(*args, check=True):
    r = subprocess.run([PODMAN] + RUNTIME_ARGS + list(args), capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def make_image():
    """A root file system of busybox and its applets, with a marker file, imported as IMAGE."""
    busybox = shutil.which("busybox")
    if busybox is None:
        raise AssertionError("busybox is missing: scripts/install-deps.sh installs busybox-static")
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "bin"))
        for d in ("etc", "tmp", "proc", "sys", "dev"):
            os.makedirs(os.path.join(root, d))
        os.chmod(os.path.join(root, "tmp"), 0o1777)
        shutil.copy(busybox, os.path.join(root, "bin", "busybox"))
        for applet in APPLETS:
            os.symlink("busybox", os.path.join(root, "bin", applet))
        with open(os.path.join(root, "etc", "rota-image"), "w") as f:
            f.write("inside the test image\n")
        tar = os.path.join(root, "..", f"rota-image-{uuid.uuid4().hex}.tar")
        with tarfile.open(tar, "w") as t:
            t.add(root, arcname=".")
        try:
            podman("import", "--change", "ENV PATH=/bin", tar, IMAGE)
        finally:
            os.unlink(tar)


def setUpModule():
    if IS_ROOT:
        if not os.path.exists(PODMAN):
            raise AssertionError("podman is missing: scripts/install-deps.sh installs podman, runc and catatonit")
        make_image()


def tearDownModule():
    if IS_ROOT:
        podman("rmi", "--force", IMAGE, check=False)


def containers_section(images='["localhost/rota-it-*"]'):
    args = ", ".join(f'"{a}"' for a in RUNTIME_ARGS)
    return f"""
[containers]
runtime = "podman"
program = "{PODMAN}"
runtime_args = [{args}]
images = {images}
env = ["WANDB_API_KEY"]
"""


def containers_of(job):
    r = podman("ps", "--all", "--filter", f"label=rota.job={job}", "--format", "{{.Names}}")
    return [n for n in r.stdout.split() if n.startswith(f"rota-job-{job}-")]


def pids_of(pattern):
    r = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


@unittest.skipUnless(IS_ROOT, "Podman runs jobs' containers as root, and the test users need root")
class ContainerTest(DaemonTest):
    CONFIG = SMALL_CLUSTER + containers_section()

    def containers_of(self, job):
        return containers_of(job)

    def output(self, job):
        """The job's log; "" until the shepherd has made it."""
        path = self.path(f"rota-{job}.out")
        return self.read(path) if os.path.exists(path) else ""

    def test_a_job_runs_in_its_image_as_its_user_with_only_what_it_should_get(self):
        env = {"WANDB_API_KEY": "key-1", "SECRET_OF_THE_HOST": "s", "LD_LIBRARY_PATH": "/opt/host/lib"}
        script = ("cat /etc/rota-image; echo uid=$(id -u) gid=$(id -g); echo dir=$(pwd); "
                  "echo gpus=$CUDA_VISIBLE_DEVICES job=$ROTA_JOB_ID; echo wandb=$WANDB_API_KEY; "
                  "echo secret=$SECRET_OF_THE_HOST ld=$LD_LIBRARY_PATH; touch made-inside; echo done")
        job = self.d.submit("--image", IMAGE, "--gpus", "1", "--", "sh", "-c", script, env=env)
        rec = self.d.wait_state(job, "completed", timeout=60)
        out = self.output(job)
        user = DEFAULT_USER
        pw = pwd.getpwnam(user)
        self.assertIn("inside the test image\n", out)  # the image's file system, not the host's
        self.assertIn(f"uid={pw.pw_uid} gid={pw.pw_gid}\n", out)  # as its user, never root
        self.assertIn(f"dir={self.d.dir}\n", out)
        self.assertIn(f"gpus={rec['gpu_uuids'][0]} job={job}\n", out)
        self.assertIn("wandb=key-1\n", out)  # a name the lab lists in [containers] env
        self.assertIn("secret= ld=\n", out)  # the rest of the submit host's environment stays out
        st = os.stat(self.path("made-inside"))
        self.assertEqual((st.st_uid, st.st_gid), (pw.pw_uid, pw.pw_gid))  # files it makes are the user's
        self.assertIn("\ndone\n", out)
        self.assertEqual(self.containers_of(job), [])  # removed at its end
        show = self.d.rota("show", str(job)).stdout
        self.assertIn(f"\nImage: {IMAGE}\n", show)

    def test_signals_reach_the_process_in_the_container_and_cancel_stops_it(self):
        job = self.d.submit("--image", IMAGE, "--", "sh", "-c",
                            "trap 'echo got TERM; exit 0' TERM; echo started; while true; do sleep 0.1; done")
        self.d.wait_state(job, "running", timeout=30)
        wait_for(lambda: "started" in self.output(job), timeout=30, what="the container to start")
        self.assertEqual(len(self.containers_of(job)), 1)
        self.d.rota("cancel", str(job))
        self.d.wait_state(job, "cancelled", timeout=30)
        self.assertIn("got TERM", self.output(job))
        wait_for(lambda: self.containers_of(job) == [], timeout=30, what="the container to be removed")

    def test_the_time_limit_and_its_warning_signal_reach_the_process_in_the_container(self):
        job = self.d.submit("--image", IMAGE, "--time", "0:00:04", "--signal", "USR1@2", "--", "sh", "-c",
                            "trap 'echo got USR1' USR1; echo started; while true; do sleep 0.1; done")
        rec = self.d.wait_state(job, "timeout", timeout=60)
        self.assertIn("started\ngot USR1\n", self.output(job))
        self.assertTrue(rec["end_reason"].startswith("TimeLimit"), rec["end_reason"])
        wait_for(lambda: self.containers_of(job) == [], timeout=30, what="the container to be removed")

    def test_a_container_that_ignores_its_stop_is_killed_and_removed(self):
        job = self.d.submit("--image", IMAGE, "--", "sh", "-c",
                            "trap '' TERM; echo started; while true; do sleep 0.1; done")
        self.d.wait_state(job, "running", timeout=30)
        wait_for(lambda: "started" in self.output(job), timeout=30, what="the container to start")
        self.d.rota("cancel", str(job))
        self.d.wait_state(job, "cancelled", timeout=60)
        wait_for(lambda: self.containers_of(job) == [], timeout=30, what="the container to be removed")
        self.assertEqual(pids_of(f"rota-job-{job}-"), [], "a process of the container is left")

    def test_the_working_directory_is_mounted_from_a_directory_only_root_can_move(self):
        # The user's own directory in the test's sticky directory: the user could rename it and
        # put a symlink in its place, so the mount is the sticky directory itself (root's).
        mine = self.path("mine")
        os.mkdir(mine)
        pw = pwd.getpwnam(DEFAULT_USER)
        os.chown(mine, pw.pw_uid, pw.pw_gid)
        job = self.d.submit("--image", IMAGE, "--output", self.path("mine.out"), "--", "sh", "-c",
                            "pwd; ls ..", cwd=mine)
        self.d.wait_state(job, "completed", timeout=60)
        out = self.read("mine.out")
        self.assertIn(mine + "\n", out)
        self.assertIn("rota.toml", out)  # the parent (the mount's root) is there too

    def test_images_the_lab_does_not_allow_and_bad_names_are_refused_at_submit(self):
        r = self.d.rota("submit", "--image", "docker.io/library/ubuntu", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("the image docker.io/library/ubuntu is not one this lab allows (localhost/rota-it-*)",
                      r.stderr)
        r = self.d.rota("submit", "--image=--privileged", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("\"image\" starts with '-'", r.stderr)
        r = self.d.rota("submit", "--image", IMAGE, "--conda", "base", "--", "true", check=False)
        self.assertIn("--conda and --image: choose one", r.stderr)
        self.assertEqual(self.d.api({"op": "queue", "all": True})["jobs"], [])  # nothing was queued

    def test_an_allowed_image_that_is_not_on_this_machine_fails_the_job_clearly(self):
        job = self.d.submit("--image", "localhost/rota-it-never-imported:1", "--", "true")
        rec = self.d.wait_state(job, "failed", timeout=60)
        self.assertIn("the image localhost/rota-it-never-imported:1 is not on this machine", rec["end_reason"])

    def test_a_rota_line_names_the_image(self):
        script = self.write_script("train.sh", f"#!/bin/sh\n#ROTA --image {IMAGE}\ncat /etc/rota-image\n")
        job = self.d.submit("--", script)
        self.d.wait_state(job, "completed", timeout=60)
        self.assertEqual(self.output(job), "inside the test image\n")


PROTOCOL_CLIENT = r"""
import json, os, signal, socket, sys

path, job = sys.argv[1], json.loads(sys.argv[2])
me = os.pidfd_open(os.getpid())
got = {}

def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    s.connect(path)
    return s, s.makefile("rb")

def send(s, request, fds=()):
    data = (json.dumps(dict(request, v=1)) + "\n").encode()
    if fds:
        socket.send_fds(s, [data], list(fds))
    else:
        s.sendall(data)

def reply(f):
    return json.loads(f.readline())

s, f = connect()
send(s, {"op": "run", "job": job}, [me])
got["no_terminal"] = reply(f)
job_out, from_job = os.pipe()
job_in, to_job = os.pipe()
s, f = connect()
send(s, {"op": "run", "job": job}, [me, job_in, from_job, from_job])
os.close(job_in)
os.close(from_job)
job_id = reply(f)["job_id"]
while (m := reply(f)).get("event") != "allocated":
    pass
got["allocated"] = m
send(s, {"op": "session_signal", "signal": signal.SIGKILL})
got["sigkill"] = reply(f)
send(s, {"op": "session_signal", "signal": "INT"})
got["sig_text"] = reply(f)
send(s, {"op": "session_end", "exit_code": 0})
got["session_end"] = reply(f)
other, g = connect()
send(other, {"op": "session_attach", "job_id": job_id})
got["attach_taken"] = reply(g)
send(other, {"op": "session_attach", "job_id": job_id + 100})
got["attach_other"] = reply(g)
send(other, {"op": "session_signal", "signal": signal.SIGINT})
got["signal_elsewhere"] = reply(g)
os.write(to_job, b"through the container\n")
os.close(to_job)
got["ended"] = reply(f)
with os.fdopen(job_out, "rb") as out:
    got["output"] = out.read().decode()
got["closed_after"] = f.readline() == b""
send(other, {"op": "session_attach", "job_id": job_id})
got["attach_late"] = reply(g)
print(json.dumps(got))
"""


class Terminal:
    """`rota ARGS` as the test user on a new pseudo-terminal (its controlling terminal, as a
    login's would be): what it writes is read from the other side, what the test types is
    written there."""

    def __init__(self, argv, env, cwd):
        self.master, slave = pty.openpty()

        def controlling():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     preexec_fn=controlling)
        os.close(slave)
        self.seen = b""

    def read_until(self, text, timeout=60):
        deadline = time.time() + timeout
        while text.encode() not in self.seen:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError(f"{text!r} never came on the terminal; it showed:\n{self.text()}")
            if select.select([self.master], [], [], min(left, 0.5))[0]:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # EIO: every holder of the other side has closed it
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"{text!r} never came on the terminal; it showed:\n{self.text()}")
                self.seen += chunk
        return self.text()

    def resize(self, rows, cols):
        """The window's new size: the kernel tells the terminal's foreground group (SIGWINCH)."""
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def type(self, text):
        os.write(self.master, text.encode())

    def text(self):
        return self.seen.decode(errors="replace").replace("\r\n", "\n")

    def wait(self, timeout=60):
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            while select.select([self.master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                self.seen += chunk
        return code

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


@unittest.skipUnless(IS_ROOT, "Podman runs jobs' containers as root, and the test users need root")
class AttachedContainerTest(DaemonTest):
    """`rota run --image`: the lab's runtime, started by rotad's shepherd as root, on the client's
    own terminal."""
    CONFIG = SMALL_CLUSTER + containers_section()

    def terminal(self, *args):
        t = Terminal(self.d.command(*args), dict(os.environ, **self.d.client_env(), TERM="xterm"), self.d.dir)
        self.addCleanup(t.close)
        return t

    def session_job(self):
        return wait_for(lambda: (self.d.sessions() or [None])[0], timeout=30, what="the session")["id"]

    def test_a_session_in_a_container_runs_on_the_users_terminal(self):
        t = self.terminal("run", "--image", IMAGE, "--gpus", "1", "--", "sh", "-c",
                          "test -t 0 && echo on-a-terminal; cat /etc/rota-image; echo uid=$(id -u) "
                          "gpus=$CUDA_VISIBLE_DEVICES; read line; echo got=$line; exit 3")
        t.read_until("on-a-terminal")
        t.read_until("gpus=")
        t.type("hello from the keyboard\n")
        self.assertEqual(t.wait(), 3)  # the command's exit code is rota's
        out = t.text()
        self.assertIn("inside the test image", out)
        self.assertIn(f"uid={pwd.getpwnam(DEFAULT_USER).pw_uid} ", out)  # as its user, never root
        self.assertIn("got=hello from the keyboard", out)
        self.assertIn("running on gpu", out)  # rota's own line, before the container took the terminal
        rec = self.d.show(self.d.sessions()[0]["id"] if self.d.sessions() else self.last_job())["job"]
        self.assertEqual((rec["state"], rec["exit_code"], rec["interactive"], rec["image"]), ("failed", 3, True, IMAGE))
        self.assertTrue(rec["gpu_uuids"][0] in out)
        self.assertEqual(containers_of(rec["id"]), [])  # removed at its end
        # The terminal is a terminal again, not left in the runtime's raw mode.
        self.assertTrue(termios.tcgetattr(t.master)[3] & termios.ECHO)

    def last_job(self):
        return max(j["id"] for j in self.d.api({"op": "history", "all": True})["jobs"])

    def test_input_from_a_pipe_and_ctrl_c_reach_the_command(self):
        r = self.d.rota("run", "--image", IMAGE, "--", "sh", "-c", "cat; echo end", input="one\ntwo\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "one\ntwo\nend\n")
        out = self.path("ctrl-c.out")
        with open(out, "w") as f:
            os.chmod(out, 0o666)
            p = subprocess.Popen(self.d.command("run", "--image", IMAGE, "--", "sh", "-c",
                                                "trap 'echo got INT; exit 5' INT; echo started; "
                                                "while true; do sleep 0.1; done"),
                                 stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                 env=dict(os.environ, **self.d.client_env()), cwd=self.d.dir)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        wait_for(lambda: "started" in self.read(out), timeout=60, what="the container to start")
        p.send_signal(signal.SIGINT)  # what the terminal sends the foreground group on Ctrl-C
        self.assertEqual(p.wait(timeout=60), 5)
        self.assertIn("got INT", self.read(out))

    def test_a_client_that_goes_away_stops_its_container(self):
        p = self.d.start_rota("run", "--image", IMAGE, "--", "sh", "-c", "echo started; exec sleep 3023")
        job = self.session_job()
        self.d.wait_state(job, "running", timeout=60)
        wait_for(lambda: pids_of("sleep 3023"), timeout=60, what="the container's process")
        p.kill()  # the user's terminal is gone, with its client
        p.wait()
        rec = self.d.wait_state(job, "cancelled", timeout=60)
        self.assertIn(DEFAULT_USER, rec["end_reason"])
        wait_for(lambda: containers_of(job) == [], timeout=30, what="the container to be removed")
        self.assertEqual(pids_of("sleep 3023"), [])

    def test_after_rotad_restarts_the_client_attaches_again_and_gets_the_end(self):
        gate = self.path("go-attached")
        out = self.path("attached.out")
        with open(out, "w") as f:
            os.chmod(out, 0o666)
            p = subprocess.Popen(self.d.command("run", "--image", IMAGE, "--", "sh", "-c",
                                                f"echo started; until [ -e {gate} ]; do sleep 0.1; done; "
                                                "echo after-the-restart; exit 4"),
                                 stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                 env=dict(os.environ, **self.d.client_env()), cwd=self.d.dir)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        job = self.session_job()
        wait_for(lambda: "started" in self.read(out), timeout=60, what="the container to start")
        self.d.kill9()
        self.d.start()
        wait_for(lambda: "attached to rotad again" in self.read(out), timeout=30, what="the client to attach again")
        open(gate, "w").close()
        self.assertEqual(p.wait(timeout=60), 4)
        self.assertIn("after-the-restart", self.read(out))
        self.assertEqual(self.d.job(job)["exit_code"], 4)

    def test_the_window_size_reaches_the_container_and_follows_its_changes(self):
        t = self.terminal("run", "--image", IMAGE, "--", "sh", "-c",
                          "echo size $(stty size); read x; echo size $(stty size)")
        t.resize(33, 101)  # before the container starts: it takes the terminal's size then
        t.read_until("size 33 101")
        t.resize(40, 120)  # rota gets SIGWINCH and passes it on; the runtime resizes the container's
        time.sleep(1)
        t.type("\n")
        t.read_until("size 40 120")
        self.assertEqual(t.wait(), 0)

    def test_a_shell_in_a_container_is_the_images_own(self):
        t = self.terminal("shell", "--image", IMAGE)
        t.read_until("running on")
        t.type("cat /etc/rota-image; exit 6\n")
        self.assertEqual(t.wait(), 6)
        self.assertIn("inside the test image", t.text())

    def test_the_protocol_of_an_attached_session_refuses_what_it_must(self):
        # A client of its own (PROTOCOL_CLIENT), run as the test user: what rota run does, and
        # what it must not be able to do.
        script = self.path("attached_client.py")
        with open(script, "w") as f:
            f.write(PROTOCOL_CLIENT)
        job = {"cwd": self.d.dir, "command": ["cat"], "image": IMAGE, "env": {"PATH": "/bin"}}
        r = subprocess.run(as_user(DEFAULT_USER, ["python3", script, self.d.socket, json.dumps(job)], {}),
                           capture_output=True, text=True, timeout=120, cwd=self.d.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        # Only the pidfd: a container session needs the terminal it runs on.
        self.assertEqual(got["no_terminal"]["error"]["code"], "failed_precondition")
        self.assertIn("this client did not", got["no_terminal"]["error"]["message"])
        self.assertTrue(got["allocated"]["attached"])
        self.assertNotIn("env", got["allocated"])
        self.assertIn("must be SIGINT", got["sigkill"]["error"]["message"])
        self.assertEqual(got["sig_text"]["error"]["code"], "invalid_argument")
        self.assertEqual(got["session_end"]["error"]["code"], "failed_precondition")
        # Another connection cannot take it, nor reach what is not a container session of the user's.
        self.assertIn("attached already", got["attach_taken"]["error"]["message"])
        self.assertEqual(got["attach_other"]["error"]["code"], "not_found")
        self.assertEqual(got["signal_elsewhere"]["error"]["code"], "failed_precondition")
        ended = got["ended"]
        self.assertEqual((ended["event"], ended["state"], ended["exit_code"]), ("ended", "completed", 0))
        self.assertEqual(got["output"], "through the container\n")  # `cat` in the container, pipe to pipe
        self.assertTrue(got["closed_after"])
        late = got["attach_late"]  # the end, from the record, for a client that comes back after it
        self.assertEqual((late["event"], late["state"], late["exit_code"]), ("ended", "completed", 0))

    def test_a_missing_image_fails_the_session_with_the_reason(self):
        r = self.d.rota("run", "--image", "localhost/rota-it-never-imported:2", "--", "true", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("the image localhost/rota-it-never-imported:2 is not on this machine", r.stderr)


@unittest.skipUnless(IS_ROOT, "Podman runs jobs' containers as root")
class ContainerGpuProcessTest(FakeNvmlTest):
    """The fake NVML reports a container's process (by its pid on the host) on the job's card:
    it is the job's, not an outside process, although conmon daemonised out of the job's session."""
    EXTRA_CONFIG = containers_section()

    def test_a_containers_gpu_process_is_its_jobs(self):
        job = self.d.submit("--image", IMAGE, "--", "sh", "-c", "exec sleep 3017")
        rec = self.d.wait_state(job, "running", timeout=30)
        pid = wait_for(lambda: (pids_of("sleep 3017") or [None])[0], timeout=30, what="the container's process")
        uuid = rec["gpu_uuids"][0]
        idx = int(uuid.rsplit("-", 1)[1])
        self.state["cards"][idx]["processes"] = [{"pid": pid, "used_mib": 2048}]
        self.write_state()
        c = wait_for(lambda: (lambda c: c if c["processes"] else None)(self.card_of(self.gpus(), uuid)),
                     what="the container's process to show")
        p = c["processes"][0]
        self.assertEqual((p["pid"], p["job_id"], p["outside"]), (pid, job, False))
        self.d.rota("cancel", str(job))
        self.d.wait_state(job, "cancelled", timeout=30)
        wait_for(lambda: containers_of(job) == [], timeout=30, what="the container to be removed")

    def test_a_container_started_by_hand_is_an_outside_process(self):
        # `podman run --gpus all` by hand, as the lab's documents show: not Rota's, so reported.
        name = f"rota-it-by-hand-{uuid.uuid4().hex[:8]}"
        # (No network: the default one needs iptables, which a machine may lack; GPUs are the point.)
        podman("run", "--detach", "--name", name, "--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1000:1000",
               IMAGE, "sleep", "3019")
        self.addCleanup(podman, "rm", "--force", "--time", "0", name, check=False)
        pid = wait_for(lambda: (pids_of("sleep 3019") or [None])[0], timeout=30, what="the hand-made container")
        self.state["cards"][0]["processes"] = [{"pid": pid, "used_mib": 1024}]
        self.write_state()
        c = wait_for(lambda: (lambda c: c if c["processes"] else None)(self.card_of(self.gpus(), "GPU-fake-0")),
                     what="the hand-made container's process to show")
        self.assertEqual((c["processes"][0]["pid"], c["processes"][0]["outside"]), (pid, True))


@unittest.skipUnless(IS_ROOT, "needs root")
class NoContainersTest(DaemonTest):
    def test_a_server_without_a_runtime_says_so(self):
        r = self.d.rota("submit", "--image", "localhost/x:1", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("this server runs no containers ([containers] runtime is not set)", r.stderr)


if __name__ == "__main__":
    unittest.main()
