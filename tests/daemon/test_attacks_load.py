"""The attack catalogue, part three: starving rotad of connections, descriptors, memory and time
(finding 3 of the audit). docs/security.md lists every attack with its test."""
import json
import os
import socket
import subprocess
import time
import unittest

from attacks import ADMIN, MALLORY, PYTHON, SANITIZED, VICTIM, AttackTest, argv_as, request_line
from harness import ROTAD, open_files, until, wait_for

# As a user: opens argv[2] connections (keeping them), prints how many got an error line at once
# and the first such line, then waits for stdin to close.
_HOARD = r"""
import json, resource, select, socket, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
conns, refused, first = [], 0, None
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); conns.append(s)
for s in conns:
    p = select.poll(); p.register(s, select.POLLIN)
    if p.poll(50):
        line = s.makefile("rb").readline()
        if line:
            refused += 1
            first = first or json.loads(line)
print(json.dumps({"refused": refused, "first": first}), flush=True)
sys.stdin.read()
"""


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def watch_peak(pid, action):
    """Runs `action` (which blocks) while sampling rotad's resident size; returns the peak in MB."""
    import threading
    peak = [rss_mb(pid)]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb(pid))
            time.sleep(0.05)
    t = threading.Thread(target=sample)
    t.start()
    try:
        action()
        time.sleep(0.3)
    finally:
        done.set()
        t.join()
    return peak[0]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ConnectionLimitTest(AttackTest):
    CONFIG = AttackTest.CONFIG + "\n[limits]\nconnections_per_user = 16\nidle_timeout = \"3s\"\nrequest_timeout = \"2s\"\n"

    def hoard(self, user, count):
        """`count` connections held open as `user`; returns (what the hoarder saw, its process)."""
        p = self.python_as(user, _HOARD, self.d.socket, str(count))
        return json.loads(p.stdout.readline()), p

    def test_one_user_cannot_take_every_connection(self):
        # The audit: 19,990 connections from one user left others' `rota submit` timing out.
        seen, _ = self.hoard(MALLORY, 2000)
        self.assertEqual(seen["refused"], 2000 - 16, seen)
        self.assertRefused(seen["first"], "resource_exhausted", "already has 16 connections open to rotad")
        self.assertServesOthers()
        job = self.d.submit("--", "true", user=VICTIM, cwd=self.home(VICTIM))
        self.d.wait_state(job, "completed")
        self.assertLogged(rf"refused a connection from {MALLORY}: resource_exhausted: uid \d+ already has 16")
        # The flood is counted, not logged line by line.
        self.assertLess(self.d.read_log().count("already has 16 connections"), 20)

    def test_an_idle_connection_is_closed_but_a_waiting_session_is_not(self):
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.d.socket)  # as root here: the idle timeout is for everyone
        gate = "go"
        holder = self.d.submit("--gpus", "2", "--", "sh", "-c", until(self.path(gate)), user=VICTIM,
                               cwd=self.home(VICTIM))
        self.d.wait_state(holder, "running")
        session = self.d.start_rota("run", "--gpus", "2", "--", "true")
        wait_for(lambda: self.d.sessions("pending"), what="the session to wait")
        s.settimeout(15)
        started = time.monotonic()
        self.assertEqual(s.recv(100), b"")  # closed by rotad, nothing said
        self.assertGreaterEqual(time.monotonic() - started, 1.5)
        s.close()
        time.sleep(3)  # past the idle timeout again: the session's connection stays
        self.assertEqual(len(self.d.sessions("pending")), 1, (self.d.sessions(), session.poll()))
        self.open_gate(gate)
        self.assertEqual(session.wait(timeout=30), 0)
        self.assertServesOthers()

    def test_a_request_trickled_byte_by_byte_is_cut_off(self):
        s = socket.socket(socket.AF_UNIX)
        self.addCleanup(s.close)
        code = r"""
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(20)
start = time.monotonic()
try:
    for b in b'{"v":1,"op":"hello","x":"' + b"a" * 1000:
        s.send(bytes([b])); time.sleep(0.2)
except OSError:
    pass
print(s.makefile("rb").readline().decode().strip())
print(round(time.monotonic() - start, 1))
"""
        r = subprocess.run(argv_as(MALLORY, PYTHON, "-c", code, self.d.socket), capture_output=True, text=True,
                           timeout=60, cwd="/tmp")
        line, took = r.stdout.split("\n")[:2]
        self.assertRefused(json.loads(line), "invalid_argument", "did not arrive whole within 2 s")
        self.assertLess(float(took), 10)
        self.assertServesOthers()
        self.assertLogged(rf"refused a connection from {MALLORY}: invalid_argument: the request did not arrive whole")

    @unittest.skipIf(SANITIZED, "resident size means nothing under ASan (its quarantine): the normal build checks it")
    def test_half_sent_lines_do_not_take_rotads_memory(self):
        # The audit: 400 half-sent 1 MiB lines took rotad from 18 MB to 427 MB.
        code = r"""
import resource, socket, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
conns = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.setblocking(False)
    try:
        s.send(b'{"v":1,"op":"hello","x":"' + b"a" * ((1 << 20) - 100))
    except OSError:
        pass
    conns.append(s)
print("sent", flush=True)
sys.stdin.read()
"""
        base = rss_mb(self.d.proc.pid)
        p = self.python_as(MALLORY, code, self.d.socket, "400")
        peak = watch_peak(self.d.proc.pid, lambda: p.stdout.readline())
        self.assertLess(peak - base, 50, f"rotad grew from {base:.0f} to {peak:.0f} MB")
        self.assertServesOthers()
        # And after the request timeout, what they held is given up.
        wait_for(lambda: len([f for f in open_files(self.d.proc.pid) if f.startswith("socket:")]) < 10,
                 what="rotad to close the half-sent connections")

    @unittest.skipIf(SANITIZED, "resident size means nothing under ASan (its quarantine): the normal build checks it")
    def test_clients_that_never_read_do_not_take_rotads_memory(self):
        # The audit: 8 connections that sent requests and never read their replies took rotad to 508 MB.
        for _ in range(30):  # replies of some size: a queue of 30 jobs (~30 KB each)
            self.d.submit("--gpus", "2", "--name", "x" * 200, "--", "sleep", "300", user=VICTIM,
                          cwd=self.home(VICTIM))
        code = r"""
import socket, sys, time
line = b'{"v":1,"op":"queue","all":true}\n' * 2000
conns = []
for _ in range(8):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.setblocking(False); conns.append(s)
sent = [0] * 8
deadline = time.monotonic() + 15
while time.monotonic() < deadline:
    moved = False
    for i, s in enumerate(conns):
        try:
            sent[i] += s.send(line); moved = True
        except BlockingIOError:
            pass
        except OSError:
            sent[i] = -1
    if not moved:
        time.sleep(0.05)
print(sum(x for x in sent if x > 0), flush=True)
sys.stdin.read()
"""
        base = rss_mb(self.d.proc.pid)
        p = self.python_as(MALLORY, code, self.d.socket)
        lines = []
        peak = watch_peak(self.d.proc.pid, lambda: lines.append(p.stdout.readline()))
        self.assertLess(peak - base, 50, f"rotad grew from {base:.0f} to {peak:.0f} MB for {lines[0].strip()} "
                        "bytes of requests whose replies were never read")
        self.assertServesOthers()


def job(cwd, gpus=2, command=("true",)):
    return {"command": list(command), "cwd": cwd, "env": {"PATH": "/usr/bin:/bin"},
            "request": {"kind": "gpus", "gpus": gpus}, "time_limit": 600}


class RequestLimitTest(AttackTest):
    CONFIG = AttackTest.CONFIG + ("\n[limits]\npending_per_user = 20\nsubmit_rate = 1\nsubmit_burst = 30\n"
                                  "history_limit = 10\nids_per_request = 100\n")

    def hold_the_gpus(self):
        gate = "go"
        holder = self.d.submit("--gpus", "2", "--", "sh", "-c", until(self.path(gate)), user=VICTIM,
                               cwd=self.home(VICTIM))
        self.d.wait_state(holder, "running")
        self.addCleanup(lambda: self.open_gate(gate))

    def test_a_cancel_of_a_hundred_thousand_ids(self):
        # The audit: a cancel of 120,000 ids blocked the event loop for 7.5 s.
        started = time.monotonic()
        reply = self.request_as(MALLORY, {"op": "cancel", "job_ids": list(range(1, 120_001))})
        self.assertRefused(reply, "invalid_argument", "at most 100 job ids in one cancel")
        self.assertLess(time.monotonic() - started, 3)
        self.assertServesOthers()
        self.assertLogged(rf"refused cancel from {MALLORY}: invalid_argument: at most 100 job ids")

    def test_rota_cancel_sends_a_long_list_in_parts(self):
        self.hold_the_gpus()
        ids = [self.d.submit("--gpus", "2", "--", "true", user=MALLORY, cwd=self.home(MALLORY)) for _ in range(3)]
        # 250 ids: two of them unknown, the rest not jobs at all; the three pending ones are cancelled.
        r = self.d.rota("cancel", *map(str, ids + list(range(10_000, 10_247))), user=MALLORY, check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout.count("Cancelled job"), 3, r.stdout)
        self.assertEqual(r.stderr.count("no job"), 247, r.stderr[-500:])

    def test_history_comes_a_page_at_a_time(self):
        # The audit: `history` since 0 built a 28 MB reply in 3.1 s on the loop.
        for _ in range(25):
            self.request_as(MALLORY, {"op": "submit", "job": job(self.home(MALLORY), gpus=1)})
        wait_for(lambda: len(json.loads(self.d.rota("history", "--all", "--json").stdout)) == 25,
                 what="25 jobs to end")
        page = self.request_as(MALLORY, {"op": "history", "since": 0})
        self.assertEqual(len(page["jobs"]), 10)
        self.assertIn("next", page)
        seen = [j["id"] for j in page["jobs"]]
        while "next" in page:
            page = self.request_as(MALLORY, {"op": "history", "since": 0, "after": page["next"]})
            seen += [j["id"] for j in page["jobs"]]
        self.assertEqual(len(seen), 25)
        self.assertEqual(len(set(seen)), 25)
        self.assertRefused(self.request_as(MALLORY, {"op": "history", "since": 0, "limit": 11}), "invalid_argument",
                           "from 1 to 10")
        self.assertRefused(self.request_as(MALLORY, {"op": "history", "since": 0, "after": "x"}), "invalid_argument",
                           '"after" must be')
        # The command line pages through them all.
        self.assertEqual(len(json.loads(self.d.rota("history", "--since", "1d", "--json", user=MALLORY).stdout)), 25)
        self.assertServesOthers()

    def test_one_user_cannot_queue_without_end(self):
        # The audit: 55,000 pending jobs from one user were accepted in under a second.
        self.hold_the_gpus()
        line = b"".join(request_line({"op": "submit", "job": job(self.home(MALLORY))}) for _ in range(25))
        replies = self.send_as(MALLORY, line, replies=25)
        self.assertEqual([r["ok"] for r in replies], [True] * 20 + [False] * 5)
        self.assertRefused(replies[-1], "resource_exhausted", "you have 20 pending jobs, the most one user may have")
        # Another user, and an admin, are not held back by mallory's jobs.
        self.assertTrue(self.request_as(VICTIM, {"op": "submit", "job": job(self.home(VICTIM))})["ok"])
        replies = self.send_as(ADMIN, b"".join(request_line({"op": "submit", "job": job(self.home(ADMIN))})
                                                for _ in range(25)), replies=25)
        self.assertTrue(all(r["ok"] for r in replies))
        self.assertServesOthers()
        self.assertLogged(rf"refused submit from {MALLORY}: resource_exhausted: you have 20 pending jobs")



class SubmitRateTest(AttackTest):
    CONFIG = AttackTest.CONFIG + "\n[limits]\nsubmit_rate = 1\nsubmit_burst = 30\n"

    def test_one_user_cannot_submit_faster_than_the_rate(self):
        # 40 submissions at once: a burst of 30, then refused until the bucket refills (1 a second).
        line = b"".join(request_line({"op": "submit", "job": job(self.home(MALLORY), gpus=1)}) for _ in range(40))
        replies = self.send_as(MALLORY, line, replies=40)
        refused = [r for r in replies if not r["ok"]]
        self.assertGreaterEqual(len(refused), 9)
        self.assertRefused(refused[0], "resource_exhausted", "you are submitting faster than one user may")
        self.assertTrue(self.request_as(VICTIM, {"op": "submit", "job": job(self.home(VICTIM), gpus=1)})["ok"])
        self.assertServesOthers()
        self.assertLogged(rf"refused submit from {MALLORY}: resource_exhausted: you are submitting faster")


class ConnectionReserveTest(AttackTest):
    # 40 connections in all: 8 for users, 32 kept for admins.
    CONFIG = AttackTest.CONFIG + "\n[limits]\nconnections = 40\nconnections_per_user = 100\n"

    def test_admins_keep_a_reserve_when_users_take_every_connection(self):
        p = self.python_as(MALLORY, _HOARD, self.d.socket, "50")
        seen = json.loads(p.stdout.readline())
        self.assertEqual(seen["refused"], 42, seen)
        self.assertRefused(seen["first"], "resource_exhausted", "as many as it takes from users")
        r = self.d.rota("queue", user=VICTIM, check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("try again in a moment", r.stderr)
        # An admin gets in, and can see who holds them.
        self.assertEqual(self.d.rota("status", user=ADMIN).returncode, 0)
        self.assertEqual(self.d.rota("status", user="root").returncode, 0)
        p.kill()
        p.wait()
        wait_for(lambda: self.d.rota("queue", user=VICTIM, check=False).returncode == 0,
                 what="the victim to be served once mallory's connections are gone")


class DescriptorExhaustionTest(AttackTest):
    def setUp(self):
        pass  # rotad is started by the test, under a small open-file limit

    def test_no_descriptor_left_does_not_spin_the_loop(self):
        # The audit: on EMFILE the level-triggered accept loop spun at 94% CPU.
        from harness import Rotad
        self.d = Rotad(self.CONFIG, kill_wait=self.KILL_WAIT)
        self.addCleanup(self._cleanup)
        self.d.start(wrapper=["prlimit", "--nofile=80:80", "--"])
        conns = []
        for _ in range(120):  # as root: no per-user limit, only descriptors run out
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.d.socket)
            conns.append(s)
        before = cpu_seconds(self.d.proc.pid)
        time.sleep(2)
        used = cpu_seconds(self.d.proc.pid) - before
        self.assertLess(used, 0.5, f"rotad used {used:.2f} s of CPU in 2 s with no descriptor left")
        refused = 0
        for s in conns:
            s.settimeout(0.2)
            try:
                line = s.makefile("rb").readline()
            except socket.timeout:
                continue
            if line and not json.loads(line)["ok"]:
                refused += 1
        self.assertGreater(refused, 0)
        for s in conns:
            s.close()
        self.assertServesOthers()
        self.assertLogged(r"refused a connection from root: resource_exhausted: rotad (has no file descriptor|serves)")


if __name__ == "__main__":
    unittest.main()
