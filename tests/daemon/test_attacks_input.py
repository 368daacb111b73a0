"""The attack catalogue, part one: hostile request texts on the socket and over HTTP (deep JSON,
echoed structures). docs/security.md lists every attack with its test."""
import json
import os
import unittest

from attacks import MALLORY, VICTIM, AttackTest, nested, request_line
from harness import SMALL_CLUSTER
from http_client import Http, free_port
from test_http import pam_dir

DEEP = 100_000  # levels: 200 KB, under the 1 MiB line limit; the audit's crash of rotad


class DeepJsonTest(AttackTest):
    def test_deep_tag_on_any_operation(self):
        # nlohmann::json copies and dumps recursively: echoing this tag overflowed root rotad's stack.
        line = ('{"v":1,"op":"hello","tag":' + nested(DEEP) + '}\n').encode()
        self.assertRefused(self.send_as(MALLORY, line)[0], "invalid_argument", "nests deeper than 32 levels")
        self.assertServesOthers()
        self.assertLogged(rf"refused a request from {MALLORY}: invalid_argument: .*nests deeper than 32 levels")

    def test_deep_tag_on_a_submission(self):
        job = {"command": ["true"], "cwd": self.home(MALLORY), "env": {"PATH": "/usr/bin:/bin"}}
        line = ('{"v":1,"op":"submit","job":' + json.dumps(job) + ',"tag":' + nested(DEEP) + '}\n').encode()
        self.assertRefused(self.send_as(MALLORY, line)[0], "invalid_argument", "nests deeper")
        self.assertServesOthers()
        self.assertEqual(self.d.api({"op": "queue", "all": True})["jobs"], [])  # nothing was queued
        self.assertLogged(rf"refused a request from {MALLORY}")

    def test_deep_field_in_a_request_the_daemon_copies(self):
        # bookings_export copied the whole request (list_request = request) before reading it.
        line = ('{"v":1,"op":"bookings_export","format":"csv","note":' + nested(DEEP) + '}\n').encode()
        self.assertRefused(self.send_as(MALLORY, line)[0], "invalid_argument", "nests deeper")
        self.assertServesOthers()

    def test_deep_job_fields(self):
        for field in ("env", "command", "request", "after_ok", "name"):
            job = {"command": ["true"], "cwd": self.home(MALLORY), "env": {"PATH": "/usr/bin:/bin"}}
            job[field] = "@deep@"
            line = ('{"v":1,"op":"submit","job":' + json.dumps(job).replace('"@deep@"', nested(DEEP)) + '}\n').encode()
            self.assertRefused(self.send_as(MALLORY, line)[0], "invalid_argument", "nests deeper")
        self.assertServesOthers()
        self.assertEqual(self.d.api({"op": "queue", "all": True})["jobs"], [])

    def test_a_structured_tag_is_not_echoed(self):
        # Even shallow: a tag is a scalar (docs/api.md), so no structure of a caller's is copied back.
        reply = self.request_as(MALLORY, {"op": "hello", "tag": {"a": [1, 2, {"b": "c"}]}})
        self.assertRefused(reply, "invalid_argument", '"tag" must be a number or a string')
        self.assertNotIn("tag", reply)
        reply = self.request_as(MALLORY, {"op": "hello", "tag": "x" * 257})
        self.assertRefused(reply, "invalid_argument", "at most 256 bytes")
        self.assertEqual(self.request_as(MALLORY, {"op": "hello", "tag": "x" * 256})["tag"], "x" * 256)
        self.assertServesOthers()

    def test_a_line_of_only_opening_brackets(self):
        # 1 MiB less one byte of "[": unbalanced and as deep as a line can be.
        replies = self.send_as(MALLORY, b"[" * ((1 << 20) - 2) + b"\n")
        self.assertRefused(replies[0], "invalid_argument", "nests deeper")
        self.assertServesOthers()


class DeepJsonOverHttpTest(AttackTest):
    def setUp(self):
        self.port = free_port()
        # With a PAM service file, so that password sign-in reads its body.
        self.CONFIG = self.CONFIG + f'\n[web]\nlisten = "127.0.0.1:{self.port}"\npam_dir = "{pam_dir(self)}"\n'
        super().setUp()
        self.http = Http(self.port)
        self.token = json.loads(self.d.rota("token", "create", "--json", user=MALLORY).stdout)["token"]

    def test_deep_body_of_an_api_call(self):
        # POST /api/bookings_export with any valid token was the HTTP way to the same crash.
        body = '{"format":"ics","all":' + nested(DEEP) + '}'
        r = self.http.post("/api/bookings_export", body, headers={"Authorization": "Bearer " + self.token,
                                                                  "Content-Type": "application/json"}, cookies=False)
        self.assertEqual(r.status, 400, r.body)
        self.assertIn("nests deeper than 32 levels", r.json()["error"]["message"])
        self.assertServesOthers()
        r = self.http.get("/api/hello", headers={"Authorization": "Bearer " + self.token}, cookies=False)
        self.assertEqual(r.status, 200)

    def test_deep_body_of_a_password_sign_in(self):
        body = '{"user":' + nested(DEEP) + ',"password":"x"}'
        r = self.http.post("/auth/password", body, headers={"Content-Type": "application/json"}, cookies=False)
        self.assertEqual(r.status, 400, r.body)
        self.assertIn("send {", r.json()["error"]["message"])
        self.assertServesOthers()


if __name__ == "__main__":
    unittest.main()
