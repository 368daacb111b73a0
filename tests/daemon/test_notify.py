"""Notifications from a real rotad (issue 6): a real SMTP server (aiosmtpd, run by
/usr/bin/python3) receives the mail of a finished job with a Chinese subject; an HTTP receiver
stands in for a Feishu bot and a generic webhook, answering errors on demand to exercise retries
and the once-only report of a failing channel; messages left undelivered when rotad stops are
delivered once after it starts again; `rota notify test`; the time-limit reminder. Retry delays are
seconds here (first_backoff 1s) instead of the lab's 30s."""
import email
import email.policy
import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness import DEFAULT_USER, IS_ROOT, SMALL_CLUSTER, DaemonTest, Rotad, wait_for

SYSTEM_PYTHON = "/usr/bin/python3"
USER = DEFAULT_USER or pwd.getpwuid(os.getuid()).pw_name
STUDENT_MAIL = "student@lab.example.edu"


def have_aiosmtpd():
    return subprocess.run([SYSTEM_PYTHON, "-c", "import aiosmtpd"], capture_output=True).returncode == 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SmtpSink:
    def __init__(self, tls=()):
        """tls: (certificate, key) to offer STARTTLS (and require it)."""
        self.dir = tempfile.mkdtemp(prefix="rota-smtp-")
        self.port = free_port()
        here = os.path.dirname(os.path.abspath(__file__))
        self.proc = subprocess.Popen([SYSTEM_PYTHON, os.path.join(here, "smtp_sink.py"), str(self.port), self.dir,
                                      *tls],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        if "ready" not in line:
            raise AssertionError("the SMTP server did not start: " + line + self.proc.stdout.read())

    def messages(self):
        out = []
        for path in sorted(glob.glob(os.path.join(self.dir, "*.eml"))):
            with open(path, "rb") as f:
                raw = f.read()
            msg = email.message_from_bytes(raw, policy=email.policy.default)
            msg.raw_subject = next((line for line in raw.decode("ascii", "replace").splitlines()
                                    if line.lower().startswith("subject:")), "")
            with open(path[:-4] + ".rcpt") as f:
                msg.rcpt = f.read().split("\n")
            out.append(msg)
        return out

    def close(self):
        self.proc.terminate()
        self.proc.wait()
        self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Receiver:
    """An HTTP endpoint recording each POST; answers come from `answers` (then `default`)."""
    OK = (200, {"code": 0, "msg": "success"})

    def __init__(self):
        self.requests = []
        self.answers = []
        self.default = self.OK
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer.lock:
                    status, answer = outer.answers.pop(0) if outer.answers else outer.default
                    outer.requests.append({"path": self.path, "body": json.loads(body), "status": status,
                                           "answer": answer})
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:  # the sender is gone (a rotad killed by a test)
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def texts(self, accepted_only=False):
        """The text of each message received (Feishu's content.text, or the webhook's subject)."""
        with self.lock:
            reqs = list(self.requests)
        out = []
        for r in reqs:
            if accepted_only and (r["status"] != 200 or r["answer"].get("code", 0) != 0):
                continue
            b = r["body"]
            out.append(b["content"]["text"] if "content" in b else b.get("subject", "") + "\n" + b.get("text", ""))
        return out

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def notify_config(smtp_port, lab_port, admin_port, extra="", tail="", user_extra=""):
    return SMALL_CLUSTER + f"""
[notify]
language = "en"
admin_channels = ["admin-hook"]
user_channels = ["mail", "lab"]
user_events = ["job_ended", "job_failed", "time_limit_soon", "idle_warning", "quota_80", "quota_100",
               "booking_starting", "booking_ending_soon", "booking_no_show"]
first_backoff = "1s"
max_backoff = "2s"
fail_after = 3
time_limit_warning = "179s"
{extra}
[notify.channels.mail]
type = "email"
url = "smtp://127.0.0.1:{smtp_port}"
from = "Rota <rota@localhost>"

[notify.channels.lab]
type = "feishu"
url = "http://127.0.0.1:{lab_port}/open-apis/bot/v2/hook/abc"

[notify.channels.admin-hook]
type = "webhook"
url = "http://127.0.0.1:{admin_port}/admin"

[users.root]
email = "root@lab.example.edu"
{tail}

[users.{USER}]
email = "{STUDENT_MAIL}"
feishu = "ou_student"
language = "zh"
{user_extra}
"""


@unittest.skipUnless(have_aiosmtpd(), "needs python3-aiosmtpd for /usr/bin/python3 (scripts/install-deps.sh)")
class NotifyBase(DaemonTest):
    TAIL = ""  # more configuration (after [notify])
    USER_EXTRA = ""  # more keys of the test user's [users.NAME]

    def setUp(self):
        self.smtp = SmtpSink()
        self.addCleanup(self.smtp.close)
        self.lab = Receiver()
        self.addCleanup(self.lab.close)
        self.admin = Receiver()
        self.addCleanup(self.admin.close)
        self.d = Rotad(notify_config(self.smtp.port, self.lab.port, self.admin.port, tail=self.TAIL,
                                     user_extra=self.USER_EXTRA),
                       kill_wait=self.KILL_WAIT)
        self.addCleanup(self._cleanup)
        self.d.start()

    def mails_about(self, job):
        return [m for m in self.smtp.messages() if f"rota logs {job}" in m.get_body().get_content()]

    def lab_about(self, job, accepted_only=False):
        return [t for t in self.lab.texts(accepted_only) if f" {job}" in t.split("\n")[0]]


@unittest.skipUnless(have_aiosmtpd(), "needs python3-aiosmtpd for /usr/bin/python3 (scripts/install-deps.sh)")
class NotifyTest(NotifyBase):
    def test_finished_job_is_mailed_with_a_chinese_subject_and_posted_with_a_mention(self):
        job = self.d.submit("--", "true")
        self.d.wait_state(job, "completed")
        mail = wait_for(lambda: self.mails_about(job), timeout=20, what="the job's mail")
        self.assertEqual(len(mail), 1)
        m = mail[0]
        self.assertEqual(m["subject"], f"[Rota] 作业 {job} (true) 已完成")  # decoded from RFC 2047
        self.assertTrue(m.raw_subject.startswith("Subject: =?UTF-8?"), m.raw_subject)  # encoded words on the wire
        self.assertEqual(m["X-Rota-Event"], "job_ended")
        self.assertEqual(m.rcpt, [STUDENT_MAIL])
        self.assertIn(f"rota logs {job}", m.get_body().get_content())
        text = wait_for(lambda: self.lab_about(job), what="the lab group's message")[0]
        self.assertIn(f"作业 {job} (true) 已完成", text)
        self.assertIn('<at user_id="ou_student">', text)
        self.assertEqual(self.lab.requests[0]["body"]["msg_type"], "text")
        self.assertEqual(self.admin.requests, [])  # a completed job is not the admins' business

    def test_retries_then_a_refusal_is_reported_to_the_admins_once(self):
        self.lab.answers = [(500, {"error": "down"}), (500, {"error": "down"})]
        job = self.d.submit("--", "true")
        wait_for(lambda: self.lab_about(job, accepted_only=True), timeout=30, what="delivery after two HTTP 500s")
        self.assertEqual(len(self.lab_about(job)), 3)  # two failed attempts and the one that worked
        self.assertEqual(self.admin.requests, [])     # two failures in a row are under fail_after
        self.assertIn("attempt 1 failed", self.d.read_log())
        # Now the bot refuses (200 with a Feishu code): no retry, the admins hear once.
        self.lab.default = (200, {"code": 19024, "msg": "Key Words Not Found"})
        first = self.d.submit("--", "true")
        second = self.d.submit("--", "false")
        wait_for(lambda: self.lab_about(first) and self.lab_about(second), timeout=20, what="both refused")
        report = wait_for(lambda: self.admin.requests, timeout=20, what="the admins' report")
        time.sleep(3)
        self.assertEqual(len(self.admin.requests), 1, self.admin.requests)
        body = report[0]["body"]
        self.assertEqual(body["event"], "channel_failing")
        self.assertIn("lab", body["subject"])
        self.assertIn("19024", body["text"])
        self.assertEqual(len(self.lab_about(first)), 1)  # refused: not retried
        self.assertIn("notify test --channel lab", body["text"])
        # The admins read what became of each message: the refusals with the platform's answer.
        log = json.loads(self.d.rota("notify", "log", "--failed", "--json", user="root").stdout)["messages"]
        refused = [m for m in log if m["channel"] == "lab"]
        self.assertEqual(len(refused), 2, log)
        self.assertTrue(all(m["state"] == "failed" and "19024" in m["last_error"] for m in refused), refused)
        self.assertEqual({m["state"] for m in log}, {"failed"})
        table = self.d.rota("notify", "log", user="root").stdout.splitlines()
        self.assertEqual(table[0].split(), ["TIME", "CHANNEL", "EVENT", "TO", "STATE", "TRIES", "WHAT"])
        self.assertTrue([l for l in table if " lab " in l and "failed" in l and "19024" in l], table)
        self.assertTrue([l for l in table if " mail " in l and " sent " in l], table)
        if IS_ROOT:
            r = self.d.rota("notify", "log", check=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("only admins", r.stderr)

    def test_messages_left_undelivered_are_delivered_once_after_a_restart(self):
        self.lab.default = (500, {"error": "down"})
        job = self.d.submit("--", "true")
        self.d.wait_state(job, "completed")
        wait_for(lambda: self.lab_about(job), timeout=20, what="a first failed attempt")
        wait_for(lambda: self.mails_about(job), timeout=20, what="the mail")
        self.d.stop()
        self.lab.default = Receiver.OK
        self.d.start()
        wait_for(lambda: self.lab_about(job, accepted_only=True), timeout=30, what="delivery after the restart")
        time.sleep(4)  # any duplicate would come within the backoff
        self.assertEqual(len(self.lab_about(job, accepted_only=True)), 1)
        self.assertEqual(len(self.mails_about(job)), 1)  # sent before the stop, not again

    def test_notify_test_reports_each_channel(self):
        r = self.d.rota("notify", "test", user="root")
        self.assertIn("mail: OK", r.stdout)
        self.assertIn("lab: OK", r.stdout)
        self.assertIn("admin-hook: OK", r.stdout)
        self.assertTrue(any("Rota test message" in t for t in self.lab.texts()))
        tests = [m for m in self.smtp.messages() if m["X-Rota-Event"] == "test"]
        self.assertEqual([m.rcpt for m in tests], [["root@lab.example.edu"]])
        self.lab.default = (500, {"error": "down"})
        r = self.d.rota("notify", "test", "--channel", "lab", user="root", check=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("lab: FAILED", r.stdout)
        self.assertIn("500", r.stdout)
        self.assertNotIn("mail", r.stdout)
        r = self.d.rota("notify", "test", "--channel", "nope", user="root", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no channel \"nope\"", r.stderr)
        if IS_ROOT:
            r = self.d.rota("notify", "test", check=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("only admins", r.stderr)

    def test_reload_takes_the_new_channels(self):
        # The lab's bot moved: after `rota reload`, the lab channel posts to the new URL.
        self.d.write_config(notify_config(self.smtp.port, self.admin.port, self.admin.port))
        self.d.rota("reload", user="root")
        r = self.d.rota("notify", "test", "--channel", "lab", user="root")
        self.assertIn("lab: OK", r.stdout)
        self.assertEqual(self.lab.requests, [])
        self.assertTrue(any("Rota test message" in t for t in self.admin.texts()))

    def test_time_limit_reminder_comes_once(self):
        job = self.d.submit("--time", "3", "--", "sleep", "300")
        self.d.wait_state(job, "running")
        text = wait_for(lambda: self.lab_about(job), timeout=20, what="the time-limit reminder")[0]
        self.assertIn(f"作业 {job}", text)
        self.assertIn("还有 3 分钟到时间上限", text)
        mail = wait_for(lambda: [m for m in self.smtp.messages() if m["X-Rota-Event"] == "time_limit_soon"],
                        what="the reminder's mail")
        self.assertIn(f"rota show {job}", mail[0].get_body().get_content())
        time.sleep(3)
        self.assertEqual(len(self.lab_about(job)), 1)
        reasons = [e["reason"] for e in self.d.show(job)["events"]]
        self.assertTrue([r for r in reasons if r.startswith("Reminder: time limit in 3 min")], reasons)
        # A restarted rotad re-adopts the job and finds the reminder in its audit trail.
        self.d.stop()
        self.d.start()
        self.assertEqual(self.d.job(job)["state"], "running")
        time.sleep(3)
        self.assertEqual(len(self.lab_about(job)), 1)
        self.d.rota("cancel", str(job))


def make_certificate(directory):
    """A self-signed certificate for 127.0.0.1 and localhost: (certificate, key) paths."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    return cert, key


@unittest.skipUnless(have_aiosmtpd() and shutil.which("openssl"),
                     "needs python3-aiosmtpd for /usr/bin/python3 and openssl (scripts/install-deps.sh)")
class StartTlsTest(DaemonTest):
    """Mail over STARTTLS to a real server that refuses mail before it: trusted through the
    channel's ca_file, refused (and said so) without it."""

    def setUp(self):
        self.certs = tempfile.mkdtemp(prefix="rota-tls-")
        self.addCleanup(shutil.rmtree, self.certs, True)
        self.cert, key = make_certificate(self.certs)
        self.smtp = SmtpSink(tls=(self.cert, key))
        self.addCleanup(self.smtp.close)
        self.CONFIG = SMALL_CLUSTER + f"""
[notify]
language = "en"
admin_channels = ["trusted", "untrusted"]

[notify.channels.trusted]
type = "email"
url = "smtp://127.0.0.1:{self.smtp.port}"
starttls = true
ca_file = "{self.cert}"
from = "Rota <rota@localhost>"
to = ["admin@lab.example.edu"]

[notify.channels.untrusted]
type = "email"
url = "smtp://127.0.0.1:{self.smtp.port}"
starttls = true
from = "Rota <rota@localhost>"
to = ["admin@lab.example.edu"]
"""
        super().setUp()

    def test_mail_goes_over_starttls_with_the_labs_certificate(self):
        r = self.d.rota("notify", "test", user="root", check=False)
        self.assertIn("trusted: OK", r.stdout)
        # Without the lab's CA the server's certificate is not trusted: refused, never sent in clear.
        self.assertIn("untrusted: FAILED", r.stdout)
        self.assertIn("certificate is not trusted", r.stdout)
        self.assertIn("set ca_file", r.stdout)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        mails = wait_for(lambda: self.smtp.messages(), what="the test mail")
        self.assertEqual(len(mails), 1)
        self.assertEqual(mails[0]["X-Rota-Event"], "test")
        self.assertEqual(mails[0].rcpt, ["admin@lab.example.edu"])


@unittest.skipUnless(have_aiosmtpd(), "needs python3-aiosmtpd for /usr/bin/python3 (scripts/install-deps.sh)")
class IdleNotifyTest(NotifyBase):
    """An idle job's owner is told what to do (`rota keep N`), in their language, on their channels."""
    TAIL = """
[watch]
idle_after = "3s"
act_after = "6s"
action = "notify"
"""

    def test_idle_warning_says_rota_keep(self):
        job = self.d.submit("--gpus", "1", "--", "sleep", "300", env={"ROTA_SIM_GPU_UTIL": "0", "ROTA_SIM_GPU_MEM": "2G"})
        self.d.wait_state(job, "running")
        warning = wait_for(lambda: [t for t in self.lab.texts() if "空闲" in t], timeout=20, what="the idle warning")[0]
        self.assertIn(f"rota keep {job}", warning)
        self.assertIn('<at user_id="ou_student">', warning)
        mail = wait_for(lambda: [m for m in self.smtp.messages() if m["X-Rota-Event"] == "idle_warning"],
                        what="the idle warning's mail")
        self.assertEqual(mail[0].rcpt, [STUDENT_MAIL])
        # The action (the admins told) goes to the admin channel, in the lab's language.
        action = wait_for(lambda: [r["body"] for r in self.admin.requests if r["body"]["event"] == "idle_action"],
                          timeout=20, what="the admins' idle action")[0]
        self.assertIn(f"Job {job}: idle action taken", action["subject"])
        # The job's audit trail says who was told of each, and where.
        reasons = [e["reason"] for e in self.d.show(job)["events"]]
        self.assertIn(f"Told {USER} (mail, lab) of idle_warning", reasons)
        self.assertTrue([r for r in reasons if r.startswith("Told ") and r.endswith("the admins (admin-hook) of idle_action")],
                        reasons)


@unittest.skipUnless(have_aiosmtpd(), "needs python3-aiosmtpd for /usr/bin/python3 (scripts/install-deps.sh)")
class QuotaNotifyTest(NotifyBase):
    """A user past their weekly GPU-hours hears it once that week, however many jobs follow."""
    USER_EXTRA = "quota = 0.0005"  # 1.8 GPU-seconds a week

    def quota_texts(self):
        return [t for t in self.lab.texts() if "配额" in t]

    def test_quota_used_up_is_told_once_a_week(self):
        first = self.d.submit("--gpus", "1", "--", "sleep", "3")
        self.d.wait_state(first, "completed", timeout=30)
        text = wait_for(self.quota_texts, timeout=20, what="the quota message")[0]
        self.assertIn("本周 GPU 配额已用", text)
        self.assertIn("rota status", text)
        # Every channel's copy marked sent in the outbox first: a rotad killed between a delivery and
        # its record sends that copy again after the restart (at least once, by design), which is
        # not what this test is about.
        wait_for(lambda: [m["state"] for m in self.d.api({"op": "notify_log"})["messages"]
                          if m["event"] == "quota_100"] == ["sent", "sent"], what="both quota messages recorded sent")
        self.d.kill9()  # what was told survives a restart
        self.d.start()
        second = self.d.submit("--gpus", "1", "--", "sleep", "3")
        self.d.wait_state(second, "completed", timeout=60)
        wait_for(lambda: len([t for t in self.lab.texts() if f" {second} " in t.split(chr(10))[0]]) == 1,
                 what="the second job's end")
        self.assertEqual(len(self.quota_texts()), 1)


@unittest.skipUnless(have_aiosmtpd(), "needs python3-aiosmtpd for /usr/bin/python3 (scripts/install-deps.sh)")
class BookingNotifyTest(NotifyBase):
    """A booking's start and its lapse as a no-show reach its owner (a one-second slot grid)."""
    TAIL = """
[bookings]
slot = "1s"
same_day_needs_admin = false
no_show_grace = "3s"
reminder = "2s"
max_length = "1h"
penalty_alert = 1
"""

    def test_starting_and_no_show(self):
        start = int(time.time()) + 2
        r = self.d.rota("book", "--gpus", "1", "--from", str(start), "--until", str(start + 8), "--json")
        bid = json.loads(r.stdout)["booking"]["id"]
        about = lambda: [t for t in self.lab.texts() if f"预约 {bid} " in t.split(chr(10))[0]]
        texts = wait_for(lambda: (lambda t: t if len(t) >= 2 else None)(about()), timeout=20,
                         what="the booking's start and no-show")
        self.assertIn("开始", texts[0])
        self.assertIn("rota submit", texts[0])
        self.assertIn("未到场", texts[1])
        self.assertIn('<at user_id="ou_student">', texts[1])
        # One no-show reaches penalty_alert = 1: the admins hear of the user's strikes, once.
        strikes = wait_for(lambda: [r["body"] for r in self.admin.requests if r["body"]["event"] == "booking_strikes"],
                           what="the admins' strikes message")
        self.assertEqual(len(strikes), 1)
        self.assertIn(f"{USER} has 1 booking that was a no-show or overran in the last 30d.", strikes[0]["text"])


class OutsideProcessTest(unittest.TestCase):
    """A GPU process no Rota allocation covers (the fake NVML reports it): the admins are told
    once, however many samples see it."""

    def setUp(self):
        from test_gpus import FAKE, card, config
        self.lab = Receiver()
        self.addCleanup(self.lab.close)
        self.admin = Receiver()
        self.addCleanup(self.admin.close)
        self.outside = subprocess.Popen(["sleep", "300"])
        self.addCleanup(lambda: (self.outside.kill(), self.outside.wait()))
        cfg = config(FAKE) + notify_config(1, self.lab.port, self.admin.port).replace(SMALL_CLUSTER, "")
        self.d = Rotad(cfg)
        state = os.path.join(self.d.dir, "nvml.json")
        with open(state, "w") as f:
            json.dump({"driver_version": "550.54.15", "cards": [
                card(0, processes=[{"pid": self.outside.pid, "used_mib": 3276}]), card(1)]}, f)
        self.d.env = {"FAKE_NVML_STATE": state}
        self.addCleanup(self.d.cleanup)
        self.d.start()

    def test_admins_are_told_once_per_process(self):
        told = wait_for(lambda: self.admin.requests, timeout=20, what="the admins' message")
        body = told[0]["body"]
        self.assertEqual(body["event"], "outside_process")
        self.assertIn(f"Process {self.outside.pid} (root) runs on GPU 0", body["text"])
        time.sleep(3)  # three more samples see it
        self.assertEqual(len(self.admin.requests), 1)
        self.assertEqual(self.lab.requests, [])  # root's process: nobody's work but the admins'


if __name__ == "__main__":
    unittest.main()
