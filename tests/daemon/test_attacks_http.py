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
from http_client import Http, free_port


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
    WEB = 'request_timeout = "3s"\n'

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


if __name__ == "__main__":
    unittest.main()
