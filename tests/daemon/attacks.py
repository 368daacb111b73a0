"""The attack catalogue's harness (docs/security.md, "The attack catalogue"): an attacker and a
victim who are real Unix users (created when the tests run as root, as CI does), an admin, and the
three checks every attack ends with:

- the attack is refused (assertRefused: the reply's code and the sentence that says why),
- rotad still serves others within a bound (assertServesOthers: the victim's `rota queue`
  answers within SERVE_BOUND seconds, and rotad is alive),
- the refusal is logged (assertLogged: a line of rotad's log names the attacker).
"""
import json
import os
import re
import subprocess
import sys
import time
import unittest

from harness import IS_ROOT, ROTAD, DaemonTest, SMALL_CLUSTER, ensure_user, wait_for

MALLORY, VICTIM, ADMIN = "rota-at-mallory", "rota-at-victim", "rota-at-admin"
ADMIN_GROUP = "rota-at-admins"
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# What a client as another user runs: connects, sends stdin's bytes, prints `replies` reply lines
# (fewer when rotad closes the connection first).
_SEND = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(float(sys.argv[3])); s.connect(sys.argv[1])
s.sendall(sys.stdin.buffer.read())
f = s.makefile('rb')
for _ in range(int(sys.argv[2])):
    line = f.readline()
    if not line:
        break
    sys.stdout.write(line.decode('utf-8', 'replace'))
"""


def _sanitized():
    # g++ links ASan's runtime as libasan.so; clang (the sanitized build's compiler) links it into
    # the executable, whose symbol table then holds __asan_init.
    try:
        r = subprocess.run(["ldd", ROTAD], capture_output=True, text=True, timeout=30)
        if "libasan" in r.stdout:
            return True
        r = subprocess.run(["nm", "-D", ROTAD], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "__asan_init" in r.stdout


# rotad built with AddressSanitizer: it keeps freed memory in quarantine and shadows the rest, so
# its resident size says nothing of what a client made it hold. Memory bounds are checked in the
# normal build.
SANITIZED = _sanitized()


def argv_as(user, *argv):
    """argv run as `user` (a name, with its groups, or a bare uid): setpriv execs it."""
    who = ["--reuid", str(user), "--regid", str(user)]
    who += ["--init-groups"] if isinstance(user, str) else ["--clear-groups"]
    return ["setpriv", *who, "--", *argv]


def nested(levels, leaf="1"):
    """A JSON text of `levels` nested arrays."""
    return "[" * levels + leaf + "]" * levels


def request_line(request):
    return (json.dumps(dict({"v": 1}, **request)) + "\n").encode()


@unittest.skipUnless(IS_ROOT, "the attacks are made by real users: run as root (CI does)")
class AttackTest(DaemonTest):
    CONFIG = f'admin_group = "{ADMIN_GROUP}"\n' + SMALL_CLUSTER
    SERVE_BOUND = 5.0  # seconds within which rotad must still answer others

    @classmethod
    def setUpClass(cls):
        cls.mallory = ensure_user(MALLORY)
        cls.victim = ensure_user(VICTIM)
        cls.admin = ensure_user(ADMIN, groups=(ADMIN_GROUP,))

    def home(self, user):
        """A directory of the test's own that `user` owns (the job's working directory)."""
        entry = {MALLORY: self.mallory, VICTIM: self.victim, ADMIN: self.admin}[user]
        d = self.path(user)
        os.makedirs(d, exist_ok=True)
        os.chown(d, entry.pw_uid, entry.pw_gid)
        os.chmod(d, 0o755)
        return d

    def send_as(self, user, data, replies=1, timeout=30):
        """Sends raw bytes on one connection as `user` (a uid, or a name), returns the replies."""
        r = subprocess.run(argv_as(user, PYTHON, "-c", _SEND, self.d.socket, str(replies), str(timeout)),
                           input=data, capture_output=True, timeout=timeout + 30, cwd="/tmp")
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        return [json.loads(line) for line in r.stdout.decode().splitlines()]

    def python_as(self, user, code, *args):
        """Starts Python `code` as `user` with stdin and stdout piped (text); killed at the test's end."""
        p = subprocess.Popen(argv_as(user, PYTHON, "-c", code, *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, cwd="/tmp")
        self.addCleanup(lambda: (p.kill(), p.wait()))
        return p

    def request_as(self, user, request):
        replies = self.send_as(user, request_line(request))
        self.assertEqual(len(replies), 1, "rotad closed the connection without a reply")
        return replies[0]

    def assertRefused(self, reply, code, text=None):
        self.assertIsNotNone(reply)
        self.assertFalse(reply.get("ok"), reply)
        self.assertEqual(reply["error"]["code"], code, reply)
        if text:
            self.assertIn(text, reply["error"]["message"])

    def assertServesOthers(self, bound=None):
        """rotad is alive and answers the victim's `rota queue` within the bound."""
        bound = bound or self.SERVE_BOUND
        self.assertIsNone(self.d.proc.poll(), "rotad died:\n" + self.d.read_log()[-4000:])
        started = time.monotonic()
        r = self.d.rota("queue", user=VICTIM, check=False, timeout=bound + 30)
        took = time.monotonic() - started
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(took, bound, f"rotad took {took:.1f}s to answer another user")

    def assertLogged(self, pattern, timeout=10):
        """A line of rotad's log matches `pattern` (a regular expression)."""
        wait_for(lambda: re.search(pattern, self.d.read_log()), timeout=timeout,
                 what=f"rotad to log /{pattern}/")
