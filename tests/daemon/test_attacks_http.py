"""The attack catalogue, part four: the HTTP front end from the lab's network (slow clients,
password guessing, plain HTTP, scoped tokens, login CSRF). docs/security.md lists every attack."""
import json
import os
import socket
import subprocess
import threading
import time
import unittest

from attacks import ADMIN, MALLORY, VICTIM, AttackTest
from http_client import Http, free_port, lan_address
from test_http import pam_dir


class HttpAttackTest(AttackTest):
    WEB = ""

    def setUp(self):
        self.port = free_port()
        self.CONFIG = AttackTest.CONFIG + f'\n[web]\nlisten = "127.0.0.1:{self.port}"\n' + self.WEB
        super().setUp()
        self.http = Http(self.port)

    def assertHttpServes(self, bound=3.0):
        """rotad answers an ordinary request from another address (127.0.0.1) within the bound."""
        started = time.monotonic()
        r = Http(self.port).get("/api/status")
        self.assertEqual(r.status, 401)  # answered: "sign in first"
        self.assertLess(time.monotonic() - started, bound)


def slow_client(port, source="127.0.0.2", interval=0.5):
    """A connection from `source` that sends a request head one byte every `interval` seconds."""
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    stop = threading.Event()

    def trickle():
        for b in b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 10000:
            if stop.is_set():
                return
            try:
                s.send(bytes([b]))
            except OSError:
                return
            time.sleep(interval)
    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    return s, stop


class SlowClientTest(HttpAttackTest):
    WEB = 'request_timeout = "3s"\nconnections_per_address = 8\n'

    def test_slow_connections_do_not_starve_the_page(self):
        # The audit: 20 slow unauthenticated connections left a normal request unanswered for 35 s.
        clients = [slow_client(self.port) for _ in range(40)]
        self.addCleanup(lambda: [(stop.set(), s.close()) for s, stop in clients])
        time.sleep(1)
        self.assertHttpServes()
        self.assertServesOthers()
        # Those over the per-address limit were told at once; the rest are cut off at the deadline.
        refused = 0
        for s, _ in clients:
            s.settimeout(8)
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            refused += b"503 Service Unavailable" in data
        self.assertGreaterEqual(refused, 40 - 8)
        self.assertLogged(r"HTTP: refused an HTTP request from 127\.0\.0\.2: resource_exhausted: too many connections "
                          r"from 127\.0\.0\.2")

    def test_a_trickled_request_is_cut_off_at_its_deadline(self):
        s, stop = slow_client(self.port, interval=0.3)
        self.addCleanup(lambda: (stop.set(), s.close()))
        s.settimeout(15)
        started = time.monotonic()
        try:
            while s.recv(4096):
                pass
        except OSError:
            pass
        self.assertLess(time.monotonic() - started, 3 + 3)
        self.assertHttpServes()


def post_from(port, source, path, body, origin=True):
    """A POST of JSON `body` from client address `source` (127.0.0.x); returns (status, body, seconds)."""
    s = socket.create_connection(("127.0.0.1", port), source_address=(source, 0), timeout=30)
    data = json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n")
    if origin:
        head += f"Origin: http://127.0.0.1:{port}\r\n"
    started = time.monotonic()
    s.sendall(head.encode() + b"\r\n" + data)
    reply = b""
    while True:
        more = s.recv(65536)
        if not more:
            break
        reply += more
    s.close()
    took = time.monotonic() - started
    status = int(reply.split(b" ", 2)[1])
    return status, reply.split(b"\r\n\r\n", 1)[1], took


class PasswordTest(HttpAttackTest):
    def setUp(self):
        self.WEB = f'pam_dir = "{pam_dir(self)}"\n'
        super().setUp()
        subprocess.run(["chpasswd"], input=f"{VICTIM}:right-horse-42\n", text=True, check=True)

    def guesses(self, source, user, passwords):
        """The guesses at once (one connection each); returns [(status, seconds)]."""
        out = [None] * len(passwords)

        def one(i):
            st, _, took = post_from(self.port, source, "/auth/password", {"user": user, "password": passwords[i]})
            out[i] = (st, took)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(passwords))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out

    def test_the_right_guess_after_the_limit_is_not_told_apart(self):
        # The audit: PAM ran before the limiter, so a right guess succeeded while wrong ones got 429.
        # Eight guesses at once from one address: five are checked (and fail), three are refused.
        results = self.guesses("127.0.0.2", VICTIM, [f"wrong-{i}" for i in range(8)])
        self.assertEqual(sorted(st for st, _ in results), [401] * 5 + [429] * 3, results)
        status, body, _ = post_from(self.port, "127.0.0.2", "/auth/password",
                                    {"user": VICTIM, "password": "right-horse-42"})
        self.assertEqual(status, 429, body)  # the right password, but not checked
        self.assertHttpServes()
        self.assertLogged(r"HTTP: refused an HTTP request from 127\.0\.0\.2: resource_exhausted: too many failed "
                          r"password sign-ins")

    def test_one_user_is_limited_across_addresses(self):
        for source in ("127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7"):
            status, _, _ = post_from(self.port, source, "/auth/password", {"user": VICTIM, "password": "wrong"})
            self.assertEqual(status, 401)
        status, _, _ = post_from(self.port, "127.0.0.8", "/auth/password",
                                 {"user": VICTIM, "password": "right-horse-42"})
        self.assertEqual(status, 429)
        # Another user from that address is not held back.
        subprocess.run(["chpasswd"], input=f"{MALLORY}:mallorys-own-1\n", text=True, check=True)
        status, body, _ = post_from(self.port, "127.0.0.8", "/auth/password",
                                    {"user": MALLORY, "password": "mallorys-own-1"})
        self.assertEqual(status, 200, body)

    def test_failures_take_the_same_time_whether_the_user_exists_or_not(self):
        # The audit: 2.57 s for a real user's wrong password, 0.00 s for a name that does not exist.
        _, _, real = post_from(self.port, "127.0.0.9", "/auth/password", {"user": VICTIM, "password": "no"})
        _, _, unknown = post_from(self.port, "127.0.0.10", "/auth/password", {"user": "no-such-user-z", "password": "no"})
        _, _, root = post_from(self.port, "127.0.0.11", "/auth/password", {"user": "root", "password": "no"})
        for took in (real, unknown, root):
            self.assertGreaterEqual(took, 2.9)
            self.assertLess(took, 4.5)
        self.assertLess(abs(real - unknown), 0.6)

    def test_root_and_system_accounts_do_not_sign_in_on_the_web(self):
        # Their passwords are never checked (so never guessed) over HTTP.
        for user in ("root", "daemon", "nobody"):
            status, body, _ = post_from(self.port, "127.0.0.12", "/auth/password", {"user": user, "password": "x"})
            self.assertEqual(status, 401, body)
            self.assertIn(b"wrong user name or password", body)
        self.assertLogged(r'failed password sign-in for "root" from 127\.0\.0\.12 \(root and system accounts do not '
                          r'sign in on the web\)')

    def test_without_rotas_own_pam_file_there_is_no_password_sign_in(self):
        # No /etc/pam.d/rota (here: an empty pam_dir): no other program's stack (`login`) is used.
        self.d.stop()
        empty = pam_dir(self)
        os.remove(os.path.join(empty, "rota"))
        self.d.write_config(self.CONFIG.replace(self.WEB, f'pam_dir = "{empty}"\n'))
        self.d.start()
        status, body, _ = post_from(self.port, "127.0.0.13", "/auth/password",
                                    {"user": VICTIM, "password": "right-horse-42"})
        self.assertEqual(status, 404, body)
        self.assertIn(f"password sign-in needs {empty}/rota".encode(), body)
        self.assertLogged("HTTP: password sign-in is off: password sign-in needs")


class LoginCsrfTest(HttpAttackTest):
    def test_a_link_only_signs_in_after_a_same_origin_confirmation(self):
        # The audit: a victim who opened an attacker's one-time link was signed in as the attacker.
        url = json.loads(self.d.rota("web", "--json", user=MALLORY).stdout)["url"]
        path = url[url.index("/auth/"):]
        victim = Http(self.port)
        page = victim.get(path)
        self.assertEqual(page.status, 200)
        self.assertNotIn("rota_session", victim.cookies)  # opening it signs in no one
        self.assertIn(f"This link signs you in as <b>{MALLORY}</b>", page.text())
        self.assertEqual(page.header("X-Frame-Options"), "DENY")
        token = path.split("token=", 1)[1]
        # The attacker's page posting the form for the victim: refused.
        r = victim.post("/auth/login", "token=" + token, headers={"Content-Type": "application/x-www-form-urlencoded",
                                                                   "Origin": "http://evil.example"})
        self.assertEqual(r.status, 403)
        self.assertNotIn("rota_session", victim.cookies)
        self.assertLogged(r"refused an HTTP request from 127\.0\.0\.1: .*login CSRF")
        # The link still works for the one who asked for it, once.
        r = victim.sign_in(url)
        self.assertEqual(r.status, 303)
        self.assertEqual(victim.get("/api/hello").json()["user"], MALLORY)
        self.assertEqual(Http(self.port).sign_in(url).status, 401)


@unittest.skipUnless(lan_address(), "this machine has no non-loopback IPv4 address")
class PlainHttpTest(AttackTest):
    """The page on the LAN address over plain HTTP, as a lab might serve it by mistake."""

    def setUp(self):
        self.port = free_port()
        self.address = lan_address()
        self.CONFIG = AttackTest.CONFIG + f'\n[web]\nlisten = "{self.address}:{self.port}"\n'
        super().setUp()

    def test_no_credential_is_set_up_over_plain_http_from_another_machine(self):
        url = json.loads(self.d.rota("web", "--json", user=VICTIM).stdout)["url"]
        h = Http(self.port, self.address)
        r = h.get(url[url.index("/auth/"):])
        self.assertEqual(r.status, 403, r.body)
        self.assertIn("plain HTTP", r.json()["error"]["message"])
        self.assertNotIn("rota_session", h.cookies)
        r = h.post("/auth/password", {"user": VICTIM, "password": "x"},
                   headers={"Origin": f"http://{self.address}:{self.port}"})
        self.assertIn(r.status, (403, 404), r.body)
        self.assertLogged("is plain HTTP off loopback: sign-in from other machines is refused")

    def test_an_admin_may_allow_it_on_a_trusted_network(self):
        self.d.stop()
        self.d.write_config(self.CONFIG + "insecure_http = true\n")
        self.d.start()
        url = json.loads(self.d.rota("web", "--json", user=VICTIM).stdout)["url"]
        h = Http(self.port, self.address)
        self.assertEqual(h.sign_in(url).status, 303)
        self.assertEqual(h.get("/api/hello").json()["user"], VICTIM)


class HeldHttpTest(HttpAttackTest):
    """The HTTP defences the audit found holding, kept as attacks that must go on failing."""

    def signed_in(self, user=VICTIM):
        h = Http(self.port)
        url = json.loads(self.d.rota("web", "--json", user=user).stdout)["url"]
        self.assertEqual(h.sign_in(url).status, 303)
        return h

    def victims_job(self):
        return self.d.submit("--", "sleep", "300", user=VICTIM, cwd=self.home(VICTIM))

    def test_no_credential(self):
        job = self.victims_job()
        r = self.http.post("/api/cancel", {"job_ids": [job]})
        self.assertEqual(r.status, 401)
        self.assertIn(self.d.job(job)["state"], ("pending", "running"))
        self.assertHttpServes()
        self.assertLogged(r"HTTP: refused an HTTP request from 127\.0\.0\.1: invalid_argument: /api/cancel without a "
                          r"credential")

    def test_a_host_that_is_not_this_servers(self):
        # DNS rebinding: a page of evil.example whose name now points here.
        h = self.signed_in()
        r = h.get("/api/queue", host="evil.example")
        self.assertEqual(r.status, 421)
        self.assertLogged(r'permission_denied: Host "evil\.example" is not this server')

    def test_csrf_without_the_token_and_from_another_origin(self):
        job = self.victims_job()
        h = self.signed_in()
        r = h.post("/api/cancel", {"job_ids": [job]})  # the cookie alone
        self.assertEqual(r.status, 403)
        r = h.post("/api/cancel", {"job_ids": [job]}, headers=dict(h.csrf_headers(), Origin="http://evil.example"))
        self.assertEqual(r.status, 403)
        self.assertIn(self.d.job(job)["state"], ("pending", "running"))
        self.assertLogged(rf"session without its CSRF token or from another site")
        r = h.post("/api/cancel", {"job_ids": [job]}, headers=h.csrf_headers())
        self.assertEqual(r.status, 200)

    def test_a_change_by_get(self):
        job = self.victims_job()
        h = self.signed_in()
        r = h.get(f"/api/cancel?job_ids=[{job}]")
        self.assertEqual(r.status, 405)
        self.assertIn(self.d.job(job)["state"], ("pending", "running"))

    def test_session_fixation_and_reuse(self):
        # A session id chosen by the attacker is no session; signing in makes a new one.
        h = Http(self.port)
        h.cookies["rota_session"] = "attacker-chosen"
        self.assertEqual(h.get("/api/hello").status, 401)
        url = json.loads(self.d.rota("web", "--json", user=VICTIM).stdout)["url"]
        self.assertEqual(h.sign_in(url).status, 303)
        self.assertNotEqual(h.cookies["rota_session"], "attacker-chosen")
        old = dict(h.cookies)
        # The link again, and the cookie after logout: nothing.
        self.assertEqual(Http(self.port).sign_in(url).status, 401)
        self.assertEqual(h.post("/auth/logout", headers={"Origin": f"http://127.0.0.1:{self.port}"}).status, 200)
        h.cookies = old
        self.assertEqual(h.get("/api/hello").status, 401)

    def test_paths_out_of_the_page(self):
        for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/js/../../etc/passwd", "/.git/config",
                     "/..%2fetc%2fpasswd", "//etc/passwd"):
            r = self.http.get(path)
            self.assertIn(r.status, (400, 404), path)
            self.assertNotIn(b"root:", r.body, path)
        self.assertHttpServes()

    def test_an_oversized_body(self):
        h = self.signed_in()
        r = h.post("/api/submit", "x" * (2 << 20), headers=dict(h.csrf_headers(), **{"Content-Type": "application/json"}))
        self.assertEqual(r.status, 413)
        self.assertHttpServes()


class TlsTest(HttpAttackTest):
    def setUp(self):
        d = self.tls_dir = __import__("tempfile").mkdtemp(prefix="rota-it-tls-")
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", d], check=False))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=127.0.0.1", "-keyout", f"{d}/key.pem", "-out", f"{d}/cert.pem"],
                       check=True, capture_output=True)
        self.WEB = f'tls_cert = "{d}/cert.pem"\ntls_key = "{d}/key.pem"\n'
        super().setUp()

    def test_https_with_secure_cookies(self):
        import http.client
        import ssl
        ctx = ssl.create_default_context(cafile=f"{self.tls_dir}/cert.pem")
        ctx.check_hostname = False
        url = json.loads(self.d.rota("web", "--json").stdout)["url"]
        self.assertTrue(url.startswith("https://"), url)
        path = url[url.index("/auth/"):]
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=ctx, timeout=20)
        conn.request("GET", path)
        self.assertEqual(conn.getresponse().read().count(b"Sign in as"), 1)
        token = path.split("token=", 1)[1]
        conn.request("POST", "/auth/login", "token=" + token,
                     {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"https://127.0.0.1:{self.port}"})
        r = conn.getresponse()
        r.read()
        self.assertEqual(r.status, 303)
        cookies = [v for k, v in r.getheaders() if k.lower() == "set-cookie"]
        self.assertTrue(all("Secure" in c for c in cookies), cookies)
        conn.close()
        # Plain HTTP on the TLS port gets nowhere, and rotad serves on.
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            s.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try:
                data = s.recv(100)
            except OSError:
                data = b""
            self.assertNotIn(b"200 OK", data)
        self.assertServesOthers()


if __name__ == "__main__":
    unittest.main()
