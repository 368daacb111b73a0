"""Bad input over the socket and at submit: an error reply, and the daemon keeps serving."""
import json
import re
import socket
import unittest

from harness import DaemonTest, SMALL_CLUSTER


class ProtocolTest(DaemonTest):
    def assertServes(self):
        self.assertTrue(self.d.api({"op": "hello"})["ok"])

    def test_malformed_requests_get_errors_and_the_connection_stays(self):
        replies = self.d.api(b"this is not json\n", b"[1,2]\n", b'{"op":"hello"}\n', b'{"v":99,"op":"hello"}\n',
                             b'{"v":1,"op":"frobnicate"}\n', b'{"v":1,"op":"show","job_id":"x"}\n',
                             b'{"v":1,"op":"submit","job":{"command":[],"cwd":"/"}}\n',
                             b'{"v":1,"op":"hello","tag":7}\n')
        codes = [r["error"]["code"] if not r["ok"] else "ok" for r in replies]
        self.assertEqual(codes, ["invalid_argument", "invalid_argument", "invalid_argument", "unsupported_version",
                                 "invalid_argument", "invalid_argument", "invalid_argument", "ok"])
        self.assertEqual(replies[-1]["tag"], 7)
        self.assertServes()

    def test_fields_of_the_wrong_type_are_refused_not_fatal(self):
        # Every operation that reads fields, each given a field of the wrong type.
        bad = [{"op": "drain", "gpu": 5, "reason": "x"},
               {"op": "bookings", "all": 1, "from": [1]}, {"op": "book", "booking": {"gpus": 1, "start": 1.5}},
               {"op": "book", "booking": {"gpus": 1, "start": "tomorrow 14:00", "for": 3600, "tier": 3}},
               {"op": "history", "since": "x"}, {"op": "resume", "gpu": []}, {"op": "reject", "booking_id": 1,
                                                                              "reason": 2},
               {"op": "events", "since": 1.5}, {"op": "notify_log", "since": "x"},
               {"op": "notify_log", "state": "lost"}, {"op": "notify_log", "limit": 0}]
        replies = self.d.api(*bad)
        for request, reply in zip(bad, replies):
            self.assertIsNotNone(reply, request)
            self.assertFalse(reply["ok"], (request, reply))
            self.assertIn(reply["error"]["code"], ("invalid_argument", "not_found", "permission_denied",
                                                   "failed_precondition"), (request, reply))
        self.assertServes()

    def test_truncated_request_then_disconnect(self):
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.d.socket)
        s.sendall(b'{"v":1,"op":"submit","job":{"command":["tr')
        s.close()
        self.assertServes()
        self.assertEqual(self.d.api({"op": "queue", "all": True})["jobs"], [])

    def test_oversized_line_is_refused_and_closed(self):
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.d.socket)
        s.settimeout(20)
        chunk = b"x" * 65536
        try:
            for _ in range(20):  # 1.25 MiB without a newline
                s.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        try:
            while not data.endswith(b"\n"):
                more = s.recv(65536)
                if not more:
                    break
                data += more
        except ConnectionResetError:
            pass
        s.close()
        reply = json.loads(data.split(b"\n")[0])
        self.assertFalse(reply["ok"])
        self.assertIn("longer than", reply["error"]["message"])
        self.assertServes()

    def test_impossible_requests_are_refused_at_submit(self):
        # SMALL_CLUSTER: two whole 80G cards, one card in MIG mode.
        for args, words in ((["--gpus", "9"], "9 GPUs, but this server has 2 whole GPUs (cards in MIG mode"),
                            (["--mig", "7g.80gb"], "MIG profile 7g.80gb, which no card here offers (offered: "
                                                   "3g.40gb, 2g.20gb, 1g.10gb)"),
                            (["--gpu-mem", "200G"], "a memory share of 200G, larger than any card (the largest has 80G)")):
            r = self.d.rota("submit", *args, "--", "true", check=False)
            self.assertEqual(r.returncode, 1, r)
            self.assertIn("this job can never run here: it asks for " + words, r.stderr)
        # More host memory than this machine has, for a batch job and for a session.
        with open("/proc/meminfo") as f:
            mem_total_g = int(f.readline().split()[1]) / (1024 * 1024)  # MemTotal, kB
        for command in ("submit", "run"):
            r = self.d.rota(command, "--gpus", "2", "--mem-per-gpu", "900T", "--", "true", check=False)
            self.assertEqual(r.returncode, 1, r)
            m = re.search(r"this job can never run here: it asks for 921600G of host memory per GPU "
                          r"\(1843200G in all\), but this server has ([0-9.]+)G", r.stderr)
            self.assertIsNotNone(m, r.stderr)
            self.assertAlmostEqual(float(m.group(1)), mem_total_g, delta=0.1)
        r = self.d.rota("submit", "--time", "0", "--", "true", check=False)
        self.assertEqual(r.returncode, 2)
        r = self.d.rota("submit", "--after", "999", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("999", r.stderr)
        self.assertEqual(self.d.api({"op": "queue", "all": True})["jobs"], [])
        # A limit this machine can honour is taken.
        r = self.d.rota("submit", "--mem-per-gpu", "1G", "--", "true", check=False)
        self.assertEqual(r.returncode, 0, r)

    def test_a_usage_error_points_to_the_help_of_its_command(self):
        for args, help in ((["show", "abc"], "rota show --help"), (["cancel"], "rota cancel --help"),
                           (["notify", "log", "--limit", "0"], "rota notify log --help")):
            r = self.d.rota(*args, check=False)
            self.assertEqual(r.returncode, 2, r)
            self.assertTrue(r.stderr.startswith("rota: "), r.stderr)
            self.assertTrue(r.stderr.rstrip().endswith(f"(see {help})"), r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = self.d.rota("cancel", "12,13", check=False)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('"12,13" is not a job id: ids are numbers, as rota queue shows them; give several separated '
                      'by spaces', r.stderr)

    def test_unreachable_daemon_is_exit_3(self):
        r = self.d.rota("queue", env={"ROTA_SOCKET": self.d.dir + "/nowhere.sock"}, check=False)
        self.assertEqual(r.returncode, 3)
        self.assertIn("rotad", r.stderr)


class MigOnlyServerTest(DaemonTest):
    """Every card in MIG mode: a request for a whole card or a share says to ask for a slice."""
    CONFIG = """
[gpus]
source = "simulated"
[[gpus.card]]
model = "NVIDIA A100-SXM4-80GB"
memory = "80G"
count = 1
mig = ["3g.40gb", "3g.40gb"]
"""

    def test_whole_gpus_and_shares_are_pointed_to_the_slices(self):
        for args, words in ((["--gpus", "1"], "1 GPU, but"), (["--gpu-mem", "20G"], "a memory share of 20G, but")):
            r = self.d.rota("submit", *args, "--", "true", check=False)
            self.assertEqual(r.returncode, 1, r)
            self.assertIn("it asks for " + words + " every card here is in MIG mode: ask for a slice with --mig "
                          "(3g.40gb)", r.stderr)
        self.d.submit("--mig", "3g.40gb", "--", "true")


class ProjectsTest(DaemonTest):
    CONFIG = SMALL_CLUSTER + '\n[projects.nlp]\nhours = 100\n'

    def test_unknown_project_is_refused(self):
        r = self.d.rota("submit", "--project", "vision", "--", "true", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown project", r.stderr)
        job = self.d.submit("--project", "nlp", "--", "true")
        self.assertEqual(self.d.wait_state(job, "completed")["project"], "nlp")


if __name__ == "__main__":
    unittest.main()
