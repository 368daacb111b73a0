"""The HTTP front end (docs/http.md) against a real rotad: the JSON API with the socket's
permission checks, one-time sign-in links, cookie sessions and CSRF, the Host check, API tokens,
static files, errors and limits, /metrics. As root, real users check that one user's session
cannot act on another's job or booking, and that password sign-in goes through PAM."""
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import unittest

from harness import DEFAULT_USER, IS_ROOT, DaemonTest, SMALL_CLUSTER, ensure_user, wait_for
from http_client import Http, free_port, http_job, lan_address

ALICE, BOB = "rota-it-alice", "rota-it-bob"


def pam_dir(test):
    """A directory holding a PAM service file "rota" that checks Unix passwords (pam_unix), removed
    after `test`: what packaging/pam.d/rota does on a Debian system, without touching /etc/pam.d."""
    d = tempfile.mkdtemp(prefix="rota-it-pam-")
    with open(os.path.join(d, "rota"), "w") as f:
        f.write("auth required pam_unix.so\naccount required pam_unix.so\n")
    test.addCleanup(lambda: subprocess.run(["rm", "-rf", d], check=False))
    return d


def web_config(port, static_dir, extra=""):
    return SMALL_CLUSTER + f'\n[web]\nlisten = "127.0.0.1:{port}"\nstatic_dir = "{static_dir}"\n' + extra


class HttpTest(DaemonTest):
    EXTRA = ""

    def setUp(self):
        self.port = free_port()
        self.static = os.path.join("/tmp", f"rota-it-web-{os.getpid()}-{self.port}")
        os.makedirs(os.path.join(self.static, "js"), exist_ok=True)
        with open(os.path.join(self.static, "index.html"), "w") as f:
            f.write("<!doctype html><title>Rota</title>" + "<p>calendar</p>" * 200)
        with open(os.path.join(self.static, "js", "app.mjs"), "w") as f:
            f.write("export const x = 1;\n")
        with open(os.path.join(self.static, ".secret"), "w") as f:
            f.write("no")
        self.CONFIG = web_config(self.port, self.static, self.EXTRA)
        super().setUp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", self.static], check=False))
        self.http = Http(self.port)

    def link(self, user=None):
        r = self.d.rota("web", "--json", user=user)
        return json.loads(r.stdout)["url"]

    def signed_in(self, user=None):
        h = Http(self.port)
        r = h.sign_in(self.link(user))
        self.assertEqual(r.status, 303, r.body)
        return h

    def queue_all(self):
        return self.d.api({"op": "queue", "all": True})["jobs"]


class SignInTest(HttpTest):
    def test_one_time_link_signs_in_once(self):
        url = self.link()
        self.assertTrue(url.startswith(f"http://127.0.0.1:{self.port}/auth/login?token="), url)
        r = self.http.sign_in(url)
        self.assertEqual(r.status, 303)
        self.assertEqual(r.header("Location"), "/")
        cookies = r.all_headers("Set-Cookie")
        session = [c for c in cookies if c.startswith("rota_session=")][0]
        self.assertIn("HttpOnly", session)
        self.assertIn("SameSite=Strict", session)
        self.assertIn("Path=/", session)
        csrf = [c for c in cookies if c.startswith("rota_csrf=")][0]
        self.assertNotIn("HttpOnly", csrf)  # the page reads it
        hello = self.http.get("/api/hello")
        self.assertEqual(hello.status, 200, hello.body)
        me = hello.json()
        self.assertTrue(me["ok"])
        self.assertEqual(me["csrf"], self.http.cookies["rota_csrf"])
        expected_user = DEFAULT_USER or __import__("pwd").getpwuid(os.getuid()).pw_name
        self.assertEqual(me["user"], expected_user)
        # The same link again: refused, and no new session.
        again = Http(self.port)
        r = again.sign_in(url)
        self.assertEqual(r.status, 401)
        self.assertEqual(r.json()["error"]["code"], "unauthenticated")
        self.assertNotIn("rota_session", again.cookies)
        self.assertEqual(again.get("/api/hello").status, 401)

    def test_forged_token_and_logout(self):
        r = self.http.get("/auth/login?token=" + "0" * 64)
        self.assertEqual(r.status, 401)
        h = self.signed_in()
        self.assertEqual(h.get("/api/status").status, 200)
        old = dict(h.cookies)
        # A forced logout from another site is refused.
        self.assertEqual(h.post("/auth/logout", headers={"Origin": "http://evil.example"}).status, 403)
        self.assertEqual(h.get("/api/status").status, 200)
        self.assertEqual(h.post("/auth/logout", headers={"Origin": f"http://127.0.0.1:{self.port}"}).status, 200)
        self.assertNotIn("rota_session", h.cookies)
        # The old cookie no longer works either.
        h.cookies = old
        self.assertEqual(h.get("/api/status").status, 401)

    def test_web_login_is_not_offered_over_http(self):
        h = self.signed_in()
        for op in ("web_login", "token_create", "run", "session_end"):
            r = h.post("/api/" + op, {}, headers=h.csrf_headers())
            self.assertEqual(r.status, 400, op)
            self.assertEqual(r.json()["error"]["code"], "invalid_argument")


class ApiTest(HttpTest):
    def test_no_session_is_401_and_nothing_changes(self):
        for method, path in (("GET", "/api/status"), ("GET", "/api/queue"), ("POST", "/api/submit"),
                             ("POST", "/api/cancel"), ("POST", "/api/book")):
            body = {"job": http_job(["true"], "/tmp")} if path.endswith("submit") else {"job_ids": [1]}
            r = self.http.request(method, path, body=body if method == "POST" else None)
            self.assertEqual(r.status, 401, (method, path, r.body))
            self.assertEqual(r.json()["error"]["code"], "unauthenticated")
        self.assertEqual(self.queue_all(), [])

    def test_submit_with_cookie_and_csrf_then_cancel(self):
        h = self.signed_in()
        job = http_job(["sleep", "60"], self.d.dir)
        # Without the CSRF header: refused, nothing submitted.
        r = h.post("/api/submit", {"job": job})
        self.assertEqual(r.status, 403)
        self.assertEqual(r.json()["error"], {"code": "permission_denied", "message": "cross-site request refused"})
        self.assertEqual(self.queue_all(), [])
        # A forged cross-site request: right cookie, even a guessed header, foreign Origin.
        r = h.post("/api/submit", {"job": job}, headers=dict(h.csrf_headers(), Origin="http://evil.example"))
        self.assertEqual(r.status, 403)
        self.assertEqual(self.queue_all(), [])
        # The page's own request.
        r = h.post("/api/submit", {"job": job},
                   headers=dict(h.csrf_headers(), Origin=f"http://127.0.0.1:{self.port}"))
        self.assertEqual(r.status, 200, r.body)
        job_id = r.json()["job_id"]
        self.d.wait_state(job_id, "running")
        # Reads with GET and query parameters parsed as JSON.
        r = h.get(f"/api/show?job_id={job_id}")
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["job"]["id"], job_id)
        self.assertEqual(h.get("/api/queue").json()["jobs"][0]["id"], job_id)
        # A state-changing op with GET is refused.
        self.assertEqual(h.get(f"/api/cancel?job_ids=[{job_id}]").status, 405)
        r = h.post("/api/cancel", {"job_ids": [job_id]}, headers=h.csrf_headers())
        self.assertEqual(r.status, 200, r.body)
        self.d.wait_state(job_id, "cancelled")

    def test_errors_map_to_http_statuses(self):
        h = self.signed_in()
        c = h.csrf_headers()
        r = h.get("/api/show?job_id=999")
        self.assertEqual(r.status, 404)
        self.assertEqual(r.json()["error"]["code"], "not_found")
        r = h.post("/api/nosuchop", {}, headers=c)
        self.assertEqual(r.status, 404)
        r = h.post("/api/show", "{not json", headers=dict(c, **{"Content-Type": "application/json"}))
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json()["error"]["code"], "invalid_argument")
        r = h.post("/api/show", {"job_id": "twelve"}, headers=c)
        self.assertEqual(r.status, 400)
        r = h.post("/api/submit", {"job": dict(http_job(["true"], "/tmp"), request={"kind": "gpus", "gpus": 99})}, headers=c)
        self.assertEqual(r.status, 429 if r.json()["error"]["code"] == "resource_exhausted" else 400, r.body)
        # Too large: 413 with a JSON error, before any parsing.
        r = h.post("/api/submit", "x" * (2 << 20), headers=c)
        self.assertEqual(r.status, 413)
        self.assertEqual(r.json()["error"]["code"], "invalid_argument")
        # The daemon still answers.
        self.assertEqual(h.get("/api/status").status, 200)

    def test_wrong_host_is_refused(self):
        h = self.signed_in()
        for host in ("evil.example", f"evil.example:{self.port}", ""):
            r = h.get("/api/status", host=host)
            self.assertEqual(r.status, 421, host)
            self.assertEqual(r.json()["error"]["code"], "permission_denied")
        r = h.post("/api/cancel", {"job_ids": [1]}, headers=h.csrf_headers(), host="rebound.example")
        self.assertEqual(r.status, 421)
        self.assertEqual(h.get("/api/status", host=f"localhost:{self.port}").status, 200)

    def test_tokens_create_use_list_revoke(self):
        r = self.d.rota("token", "create", "--name", "grafana", "--json")
        created = json.loads(r.stdout)
        token = created["token"]
        auth = {"Authorization": "Bearer " + token}
        # No CSRF needed with a token; it acts as its owner.
        r = self.http.get("/api/hello", headers=auth, cookies=False)
        self.assertEqual(r.status, 200, r.body)
        self.assertNotIn("csrf", r.json())
        job = http_job(["true"], self.d.dir)
        r = self.http.post("/api/submit", {"job": job}, headers=auth, cookies=False)
        self.assertEqual(r.status, 200, r.body)
        self.d.wait_state(r.json()["job_id"], "completed")
        # Listed (hash never shown), then revoked: refused at once.
        listed = json.loads(self.d.rota("token", "list", "--json").stdout)
        self.assertEqual([t["name"] for t in listed], ["grafana"])
        self.assertNotIn(token, json.dumps(listed))
        r = self.http.get("/api/token_list", headers=auth, cookies=False)
        self.assertEqual(r.status, 200)
        self.assertEqual(len(r.json()["tokens"]), 1)
        self.d.rota("token", "revoke", str(created["id"]))
        r = self.http.get("/api/status", headers=auth, cookies=False)
        self.assertEqual(r.status, 401)
        self.assertEqual(r.json()["error"]["code"], "unauthenticated")
        self.assertEqual(self.http.get("/api/status", headers={"Authorization": "Bearer nope"}).status, 401)
        # The hash is in the store, the token is not.
        with open(os.path.join(self.d.state, "rota.db"), "rb") as f:
            db = f.read()
        self.assertNotIn(token.encode(), db)

    def test_tokens_survive_a_restart(self):
        token = json.loads(self.d.rota("token", "create", "--json").stdout)["token"]
        self.d.stop()
        self.d.start()
        r = self.http.get("/api/status", headers={"Authorization": "Bearer " + token}, cookies=False)
        self.assertEqual(r.status, 200, r.body)


class StaticTest(HttpTest):
    def test_page_files_types_and_compression(self):
        r = self.http.get("/")
        self.assertEqual(r.status, 200)
        self.assertIn("<title>Rota</title>", r.text())
        self.assertTrue(r.header("Content-Type").startswith("text/html"))
        self.assertEqual(r.header("Cache-Control"), "no-cache")
        r = self.http.get("/js/app.mjs")
        self.assertEqual(r.status, 200)
        self.assertTrue(r.header("Content-Type").startswith("text/javascript"))
        r = self.http.get("/", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r.header("Content-Encoding"), "gzip")
        self.assertIn("<title>Rota</title>", r.text())
        self.assertLess(len(r.body), 3000)
        for path in ("/.secret", "/js/../.secret", "/%2e%2e/etc/passwd", "/../../etc/passwd", "/nope.js"):
            r = self.http.get(path)
            self.assertEqual(r.status, 404, path)
            self.assertNotIn(b"root:", r.body)


def ics_events(text):
    """The VEVENTs of an iCalendar text (lines unfolded) as dicts of their properties."""
    lines = text.replace("\r\n ", "").split("\r\n")
    events, current = [], None
    for line in lines:
        if line == "BEGIN:VEVENT":
            current = {}
        elif line == "END:VEVENT":
            events.append(current)
            current = None
        elif current is not None and ":" in line:
            key, value = line.split(":", 1)
            current[key.split(";")[0]] = value
    return events


class CalendarTest(HttpTest):
    """The bookings as an iCalendar feed a calendar app subscribes to, with a token in the URL."""

    def test_feed_of_ones_own_bookings_and_the_labs(self):
        self.d.rota("book", "--gpus", "1", "--from", "tomorrow 14:00", "--for", "2h", "--note", "微调 bert")
        token = json.loads(self.d.rota("token", "create", "--name", "calendar", "--json").stdout)["token"]
        r = self.http.get("/calendar.ics?token=" + token, cookies=False)
        self.assertEqual(r.status, 200, r.body)
        self.assertTrue(r.header("Content-Type").startswith("text/calendar"), r.header("Content-Type"))
        text = r.text()
        self.assertTrue(text.startswith("BEGIN:VCALENDAR\r\n"), text[:40])
        events = ics_events(text)
        self.assertEqual(len(events), 1, text)
        booking = json.loads(self.d.rota("bookings", "--json").stdout)["bookings"][0]
        self.assertEqual(events[0]["DTSTART"], time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(booking["start"])))
        self.assertEqual(events[0]["DTEND"], time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(booking["end"])))
        self.assertIn("微调 bert", text)
        self.assertEqual(len(ics_events(self.http.get("/calendar.ics?lab=1&token=" + token, cookies=False).text())), 1)
        # No credential, a wrong one, a revoked one: refused, and nothing of the calendar shown.
        r = self.http.get("/calendar.ics", cookies=False)
        self.assertEqual(r.status, 401)
        self.assertIn("rota token create", r.json()["error"]["message"])
        self.assertEqual(self.http.get("/calendar.ics?token=nope", cookies=False).status, 401)
        self.d.rota("token", "revoke", str(json.loads(self.d.rota("token", "list", "--json").stdout)[0]["id"]))
        self.assertEqual(self.http.get("/calendar.ics?token=" + token, cookies=False).status, 401)


class PublicReadTest(HttpTest):
    EXTRA = "public_read = true\n"

    def test_reads_open_writes_closed(self):
        for op in ("status", "queue", "gpus", "bookings", "hello"):
            r = self.http.get("/api/" + op)
            self.assertEqual(r.status, 200, (op, r.body))
        self.assertEqual(self.http.get("/api/hello").json()["admin"], False)
        for op in ("logs", "history", "show"):
            self.assertEqual(self.http.get(f"/api/{op}?job_id=1").status, 401, op)
        r = self.http.post("/api/cancel", {"job_ids": [1]})
        self.assertEqual(r.status, 401)
        # The wall display may subscribe to the lab's calendar; one's own needs a credential.
        r = self.http.get("/calendar.ics?lab=1")
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(self.http.get("/calendar.ics").status, 401)


class RateLimitTest(HttpTest):
    EXTRA = "rate = 1\nburst = 5\n"

    def test_too_many_requests(self):
        statuses = [self.http.get("/api/hello").status for _ in range(8)]
        self.assertEqual(statuses[:5], [401] * 5)
        self.assertEqual(statuses[-1], 429)

    def test_a_refused_request_closes_its_connection_rather_than_misread_its_body(self):
        # Requests with bodies on one keep-alive connection: the refusal comes before the body is
        # read, so the connection closes after it. It used to stay open, and the body was read as
        # the next request: "400 bad HTTP request" for every request after a 429.
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        body = b'{"job_id": 1}'
        request = (b"POST /api/show HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        replies = b""
        try:
            for _ in range(8):
                s.sendall(request)
                time.sleep(0.05)
        except OSError:  # closed by the server: what is wanted
            pass
        s.settimeout(5)
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                replies += chunk
        except (socket.timeout, ConnectionResetError):
            pass
        s.close()
        statuses = [int(m) for m in re.findall(rb"HTTP/1\.1 (\d{3}) ", replies)]
        self.assertIn(429, statuses, replies[:2000])
        self.assertEqual(statuses[-1], 429, statuses)  # nothing after the refusal on this connection
        self.assertNotIn(400, statuses, replies[:2000])
        last = replies[replies.rfind(b"HTTP/1.1 429"):]
        self.assertIn(b"Connection: close", last)


class MetricsTest(HttpTest):
    def metric(self, text, name, labels=None):
        for line in text.splitlines():
            if line.startswith("#"):
                continue
            m = re.match(r"^([a-zA-Z_:]+)(\{.*\})? (\S+)$", line)
            if not m or m.group(1) != name:
                continue
            got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            if all(got.get(k) == v for k, v in (labels or {}).items()):
                return float(m.group(3))
        return None

    def test_metrics_after_a_job_runs(self):
        h = self.signed_in()
        job = http_job(["sh", "-c", "sleep 30"], self.d.dir)
        job_id = h.post("/api/submit", {"job": job}, headers=h.csrf_headers()).json()["job_id"]
        rec = self.d.wait_state(job_id, "running")
        text = self.http.get("/metrics").text()
        gpus = self.d.api({"op": "gpus"})["gpus"]
        g0 = gpus[0]
        labels = {"gpu": "0", "UUID": g0["uuid"], "modelName": "NVIDIA A100-SXM4-80GB"}
        self.assertEqual(self.metric(text, "rota_gpu_memory_total_bytes", labels), 80 * 1024 ** 3)
        self.assertIsNotNone(self.metric(text, "rota_gpu_utilization_percent", labels))
        self.assertIsNotNone(self.metric(text, "rota_gpu_temperature_celsius", labels))
        self.assertEqual(self.metric(text, "rota_gpu_allocated", {"job_id": str(job_id), "user": rec["user"]}), 1)
        self.assertEqual(self.metric(text, "rota_jobs", {"state": "running", "tier": "regular"}), 1)
        self.assertEqual(self.metric(text, "rota_jobs", {"state": "pending", "tier": "regular"}), 0)
        self.assertEqual(self.metric(text, "rota_jobs_started_total"), 1)
        self.assertEqual(self.metric(text, "rota_job_wait_seconds_count"), 1)
        self.assertGreaterEqual(self.metric(text, "rota_schedule_pass_seconds_count"), 1)
        self.assertEqual(self.metric(text, "rota_schedule_pass_seconds_bucket", {"le": "+Inf"}),
                         self.metric(text, "rota_schedule_pass_seconds_count"))
        self.assertEqual(self.metric(text, "rota_build_info", {"version": self.d.api({"op": "hello"})["version"]}), 1)
        self.assertEqual(self.metric(text, "rota_notifications_total", {"result": "sent"}), 0)
        self.assertGreaterEqual(self.metric(text, "rota_http_requests_total", {"code": "200"}), 1)
        self.assertGreaterEqual(self.metric(text, "rota_http_request_duration_seconds_count"), 1)
        h.post("/api/cancel", {"job_ids": [job_id]}, headers=h.csrf_headers())
        self.d.wait_state(job_id, "cancelled")
        text = self.http.get("/metrics").text()
        self.assertEqual(self.metric(text, "rota_jobs_ended_total", {"reason": "cancelled"}), 1)
        self.assertIsNone(self.metric(text, "rota_gpu_allocated"))
        self.assertEqual(self.metric(text, "rota_jobs", {"state": "running", "tier": "regular"}), 0)
        self.assertTrue(self.http.get("/metrics").header("Content-Type").startswith("text/plain; version=0.0.4"))


class RobustnessTest(HttpTest):
    def test_garbage_on_the_wire_never_takes_rotad_down(self):
        import random
        import socket
        rng = random.Random(7)
        samples = [b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"POST /api/submit HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                   b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X: " + b"a" * 100000 + b"\r\n\r\n",
                   b"POST /api/show HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]
        for _ in range(150):
            n = rng.randint(1, 400)
            prefix = rng.choice([b"", b"GET /api/", b"POST /auth/login?token=", b"GET /"])
            samples.append(prefix + bytes(rng.getrandbits(8) for _ in range(n)))
        for data in samples:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            try:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
                while s.recv(65536):
                    pass
            except OSError:
                pass
            finally:
                s.close()
        self.assertIsNone(self.d.proc.poll())
        h = self.signed_in()
        self.assertEqual(h.get("/api/hello").status, 200)


class UsageTest(HttpTest):
    def test_usage_counts_a_finished_job(self):
        h = self.signed_in()
        r = h.get("/api/usage?days=3")
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(len(r.json()["days"]), 3)
        self.assertEqual(r.json()["users"], [])
        # A job that keeps its simulated card 60% busy for a few seconds.
        job = http_job(["sleep", "4"], self.d.dir, env={"ROTA_SIM_GPU_UTIL": "60"})
        job_id = h.post("/api/submit", {"job": job}, headers=h.csrf_headers()).json()["job_id"]
        rec = self.d.wait_state(job_id, "completed")
        u = h.get("/api/usage?days=7").json()
        me = [x for x in u["users"] if x["name"] == rec["user"]]
        self.assertEqual(len(me), 1, u)
        self.assertEqual(me[0]["jobs"], 1)
        self.assertGreater(me[0]["week_gpu_hours"], 3.5 / 3600)
        self.assertLess(me[0]["week_gpu_hours"], 30 / 3600)
        self.assertIsNotNone(me[0]["avg_wait_seconds"])
        # Utilisation of the allocated GPUs from the samples: mostly the declared 60%.
        self.assertIsNotNone(me[0]["allocated_util"], me[0])
        self.assertGreater(me[0]["allocated_util"], 20)
        self.assertLessEqual(me[0]["allocated_util"], 61)
        self.assertIsNotNone(u["totals"]["allocated_util"])
        self.assertIsNotNone(u["days"][-1]["allocated_util"])
        today = u["days"][-1]
        self.assertAlmostEqual(today["total_gpu_hours"], me[0]["week_gpu_hours"], delta=10 / 3600)
        self.assertEqual(h.get("/api/usage?days=0").status, 400)


@unittest.skipUnless(lan_address(), "this machine has no non-loopback IPv4 address")
class LanTest(DaemonTest):
    """Served on the LAN address: requests come from a non-loopback address."""

    def setUp(self):
        self.port = free_port()
        self.address = lan_address()
        self.CONFIG = SMALL_CLUSTER + f'\n[web]\nlisten = "{self.address}:{self.port}"\n'
        super().setUp()
        self.http = Http(self.port, self.address)

    def test_metrics_need_a_credential_off_loopback(self):
        r = self.http.get("/metrics")
        self.assertEqual(r.status, 401, r.body)
        token = json.loads(self.d.rota("token", "create", "--json").stdout)["token"]
        r = self.http.get("/metrics", headers={"Authorization": "Bearer " + token})
        self.assertEqual(r.status, 200)
        self.assertIn("rota_build_info", r.text())
        # The listen address is an allowed Host, another name is not.
        self.assertEqual(self.http.get("/api/status", host="lab.example:%d" % self.port).status, 421)


@unittest.skipUnless(IS_ROOT, "creates real users: run as root (CI does)")
class TwoUsersTest(HttpTest):
    @classmethod
    def setUpClass(cls):
        cls.alice = ensure_user(ALICE)
        cls.bob = ensure_user(BOB)

    def setUp(self):
        # Password sign-in uses a PAM service file of Rota's own; the tests' is pam_unix alone.
        self.pam_dir = pam_dir(self)
        self.EXTRA = f'pam_dir = "{self.pam_dir}"\n'
        super().setUp()

    def test_a_second_users_session_cannot_touch_the_first_users_job_or_booking(self):
        alice, bob = self.signed_in(ALICE), self.signed_in(BOB)
        self.assertEqual(alice.get("/api/hello").json()["user"], ALICE)
        self.assertEqual(bob.get("/api/hello").json()["user"], BOB)
        job = http_job(["sleep", "60"], self.d.dir)
        job_id = alice.post("/api/submit", {"job": job}, headers=alice.csrf_headers()).json()["job_id"]
        self.d.wait_state(job_id, "running")
        start = (int(time.time()) // 3600 + 48) * 3600
        r = alice.post("/api/book", {"booking": {"gpus": 1, "start": start, "end": start + 7200}},
                       headers=alice.csrf_headers())
        self.assertEqual(r.status, 200, r.body)
        booking = r.json()["booking"]["id"]
        # Bob's session (with his own valid CSRF token) is refused on both. cancel answers per job,
        # as on the socket.
        r = bob.post("/api/cancel", {"job_ids": [job_id]}, headers=bob.csrf_headers())
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["results"][0]["error"]["code"], "permission_denied")
        r = bob.post("/api/unbook", {"booking_id": booking}, headers=bob.csrf_headers())
        self.assertEqual(r.status, 403, r.body)
        # Bob sending Alice's CSRF token with his cookie does not help either.
        r = bob.post("/api/unbook", {"booking_id": booking}, headers=alice.csrf_headers())
        self.assertEqual(r.status, 403)
        self.assertEqual(r.json()["error"]["message"], "cross-site request refused")
        self.assertEqual(self.d.job(job_id)["state"], "running")
        b = self.d.api({"op": "bookings", "id": booking})["bookings"][0]
        self.assertIn(b["state"], ("confirmed", "requested"))
        # Alice can.
        self.assertEqual(alice.post("/api/unbook", {"booking_id": booking}, headers=alice.csrf_headers()).status, 200)
        self.assertEqual(alice.post("/api/cancel", {"job_ids": [job_id]}, headers=alice.csrf_headers()).status, 200)
        self.d.wait_state(job_id, "cancelled")

    def test_password_sign_in_through_pam(self):
        subprocess.run(["chpasswd"], input=f"{ALICE}:correct-horse-42\n", text=True, check=True)
        r = self.http.post("/auth/password", {"user": ALICE, "password": "correct-horse-42"},
                           headers={"Origin": "http://evil.example"})
        self.assertEqual(r.status, 403, r.body)  # login CSRF
        self.assertNotIn("rota_session", self.http.cookies)
        r = self.http.post("/auth/password", {"user": ALICE, "password": "wrong"})
        self.assertEqual(r.status, 401, r.body)
        self.assertNotIn("rota_session", self.http.cookies)
        r = self.http.post("/auth/password", {"user": ALICE, "password": "correct-horse-42"})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["user"], ALICE)
        self.assertEqual(self.http.get("/api/hello").json()["user"], ALICE)
        r = self.http.post("/auth/password", {"user": "no-such-user-x", "password": "x"})
        self.assertEqual(r.status, 401)

    def test_a_user_cannot_revoke_another_users_token(self):
        t = json.loads(self.d.rota("token", "create", "--json", user=ALICE).stdout)
        r = self.d.rota("token", "revoke", str(t["id"]), user=BOB, check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        r = self.http.get("/api/hello", headers={"Authorization": "Bearer " + t["token"]}, cookies=False)
        self.assertEqual(r.json()["user"], ALICE)


if __name__ == "__main__":
    unittest.main()
