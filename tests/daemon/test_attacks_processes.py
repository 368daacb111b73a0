"""The attack catalogue, part two: getting rotad to act on a process that is not the caller's
(a session's pid, a descriptor passed over the socket). docs/security.md lists every attack."""
import json
import os
import subprocess
import time
import unittest

from attacks import MALLORY, PYTHON, VICTIM, AttackTest, argv_as, request_line
from harness import FINAL, open_files, own_cgroup, until, wait_for

# As mallory: connects, sends a `run` request with a pidfd of itself (as rota does), reads the
# "queued" reply, then forks: the child keeps the connection (writing what it receives to a file)
# and the parent, the process the session is about, prints its pid and exits.
_ORPHAN = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
job = {"command": ["sleep", "1"], "cwd": sys.argv[2], "env": {"PATH": "/usr/bin:/bin"},
       "request": {"kind": "gpus", "gpus": 2}, "interactive": True}
line = (json.dumps({"v": 1, "op": "run", "job": job}) + "\n").encode()
socket.send_fds(s, [line], [os.pidfd_open(os.getpid())])
f = s.makefile("rb")
print(f.readline().decode().strip(), flush=True)
if os.fork() == 0:
    os.setsid()
    null = os.open("/dev/null", os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(null, std)
    with open(sys.argv[3], "ab", buffering=0) as out:
        for m in f:
            out.write(m)
    os._exit(0)
print(os.getpid(), flush=True)
"""

# As mallory: sends a `run` request with the descriptor of argv[2] (a pid, or a path) passed.
_PASS = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
what = sys.argv[2]
fd = os.pidfd_open(int(what)) if what.isdigit() else os.open(what, os.O_RDONLY)
job = {"command": ["true"], "cwd": "/tmp", "env": {"PATH": "/usr/bin:/bin"}, "interactive": True}
socket.send_fds(s, [(json.dumps({"v": 1, "op": "run", "job": job}) + "\n").encode()], [fd])
print(s.makefile("rb").readline().decode().strip())
"""


def as_mallory(code, *args, timeout=60):
    return subprocess.run(argv_as(MALLORY, PYTHON, "-c", code, *args), capture_output=True, text=True,
                          timeout=timeout, cwd="/tmp")


def spawn_with_pid(pid, argv, tries=50):
    """Starts argv with process id `pid` (root: /proc/sys/kernel/ns_last_pid), or None when another
    process keeps taking it."""
    for _ in range(tries):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen(argv)
        if p.pid == pid:
            return p
        p.kill()
        p.wait()
    return None


class SessionProcessTest(AttackTest):
    def test_a_session_whose_client_exited_never_takes_its_recycled_pid(self):
        # The audit: connect, ask for a session, fork, exit. The pid rotad took at connect time is
        # free; when the GPUs came, whatever process had it then (here the victim's) was moved into
        # mallory's job cgroup, and killed with it when mallory's connection closed.
        gate = self.victim_holds_two_gpus()
        inbox = self.path("mallory-inbox")
        r = as_mallory(_ORPHAN, self.d.socket, self.home(MALLORY), inbox)
        self.assertEqual(r.returncode, 0, r.stderr)
        queued, pid = r.stdout.split("\n")[:2]
        queued, pid = json.loads(queued), int(pid)
        self.assertTrue(queued["ok"], queued)
        session = queued["job_id"]
        wait_for(lambda: not os.path.exists(f"/proc/{pid}"), what=f"mallory's process {pid} to be gone")
        victim = spawn_with_pid(pid, argv_as(VICTIM, "sleep", "300"))
        if victim is None:
            self.skipTest(f"pid {pid} could not be handed to the victim's process")
        self.addCleanup(lambda: (victim.kill(), victim.wait()))
        cgroup_before = own_cgroup(victim.pid)
        self.open_gate(gate)  # the victim's job ends: two GPUs for mallory's session
        rec = self.d.wait_state(session, FINAL | {"running"})
        # Mallory's connection, held by the child, closes: an allocated session is then stopped.
        subprocess.run(["pkill", "-KILL", "-u", MALLORY, "-f", inbox], check=False)
        rec = self.d.wait_state(session, FINAL)
        time.sleep(0.5)  # a kill of the victim's process would have come by now
        self.assertIsNone(victim.poll(), "the victim's process was killed")
        self.assertEqual(own_cgroup(victim.pid), cgroup_before)
        self.assertEqual(rec["state"], "cancelled", rec)
        self.assertIn("client process exited before the allocation", rec["end_reason"])
        with open(inbox, "rb") as f:
            self.assertIn(b"client process exited before the allocation", f.read())
        self.assertServesOthers()
        self.assertLogged(rf"job {session} \({MALLORY}\): Session cancelled: its client process exited")

    def victim_holds_two_gpus(self):
        gate = "victim-go"
        job = self.d.submit("--gpus", "2", "--", "sh", "-c", until(self.path(gate)), user=VICTIM, cwd=self.home(VICTIM))
        self.d.wait_state(job, "running")
        return gate

    def test_a_pidfd_of_another_users_process_is_refused(self):
        victim = subprocess.Popen(argv_as(VICTIM, "sleep", "300"))
        self.addCleanup(lambda: (victim.kill(), victim.wait()))
        r = as_mallory(_PASS, self.d.socket, str(victim.pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRefused(json.loads(r.stdout), "permission_denied",
                           f"the session's process: process {victim.pid} runs as uid {self.victim.pw_uid}")
        self.assertEqual(self.d.sessions(), [])
        self.assertIsNone(victim.poll())
        self.assertServesOthers()
        self.assertLogged(rf"refused run from {MALLORY}: permission_denied: the session's process")

    def test_a_descriptor_that_is_not_a_pidfd_is_refused(self):
        r = as_mallory(_PASS, self.d.socket, "/etc/passwd")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRefused(json.loads(r.stdout), "invalid_argument", "not a process handle")
        self.assertEqual(self.d.sessions(), [])
        self.assertServesOthers()

    def test_passed_descriptors_do_not_pile_up_in_rotad(self):
        # Eight descriptors with every line of 300 requests: rotad keeps one per connection at most.
        code = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(8)]
for i in range(300):
    socket.send_fds(s, [(json.dumps({"v": 1, "op": "hello"}) + "\n").encode()], fds)
f = s.makefile("rb")
print(sum(1 for _ in range(300) if json.loads(f.readline())["ok"]))
"""
        def nulls():  # rotad's descriptors on /dev/null (it has its stdin there)
            return open_files(self.d.proc.pid).count("/dev/null")
        before = nulls()
        r = as_mallory(code, self.d.socket)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "300")
        wait_for(lambda: nulls() == before, what="rotad to close the descriptors passed to it")
        self.assertServesOthers()


if __name__ == "__main__":
    unittest.main()
