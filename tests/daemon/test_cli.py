"""The rota command line against a real daemon: #ROTA scripts, logs -f, queue --start, and
rotad's systemd readiness notification."""
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import unittest

from harness import BIN, DaemonTest, Rotad, SMALL_CLUSTER, until, wait_for


class CliTest(DaemonTest):
    def test_rota_lines_in_a_script_set_options_and_flags_override_them(self):
        script = self.write_script("train.sh", "#!/bin/sh\n#ROTA --gpus 2 --name from-script --time 30m\n"
                                   "#ROTA --tier explore\necho \"$ROTA_GPUS\"\n")
        job = self.d.submit(script)
        rec = self.d.wait_state(job, "completed")
        self.assertEqual(rec["request"], {"kind": "gpus", "gpus": 2})
        self.assertEqual((rec["name"], rec["time_limit"], rec["tier"]), ("from-script", 1800, "explore"))
        self.assertEqual(self.read(f"rota-{job}.out").strip(), "0,1")
        job = self.d.submit("--name", "from-flag", script)
        self.assertEqual(self.d.wait_state(job, "completed")["name"], "from-flag")

    def test_submit_says_which_job_and_history_since_filters_by_end(self):
        day = time.strftime("%Y-%m-%d", time.gmtime())
        r = self.d.rota("submit", "--name", "said", "--", "true")
        m = re.fullmatch(r"Submitted job (\d+)\n", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        job = int(m.group(1))
        rec = self.d.wait_state(job, "completed")
        # Without --signal (and no lab default) a job gets no warning signal: SIGTERM at its limit.
        self.assertEqual((rec["signal"], rec["grace"]), (0, 0))

        def listed(*since):
            out = self.d.rota("history", *since, "--json").stdout
            return job in [j["id"] for j in json.loads(out)]

        self.assertTrue(listed())  # the default: the last 7 days
        self.assertTrue(listed("--since", "1h"))
        self.assertTrue(listed("--since", "2000-01-01"))
        if time.strftime("%Y-%m-%d", time.gmtime()) == day:  # not across midnight
            self.assertTrue(listed("--since", "today"))  # the server's day (UTC here): its 00:00
        # Read in the server's zone (UTC: no [policy] timezone), not the client's: read at UTC-8,
        # an hour ago would be seven hours ahead, and the job would not be listed.
        hour_ago = time.strftime("%Y-%m-%d %H:%M", time.gmtime(time.time() - 3600))
        out = self.d.rota("history", "--since", hour_ago, "--json", env={"TZ": "PST8"}).stdout
        self.assertIn(job, [j["id"] for j in json.loads(out)])
        time.sleep(2)
        self.assertFalse(listed("--since", time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - 1))))
        # A time still to come is refused, saying how it was read.
        later = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 2 * 86400))
        r = self.d.rota("history", "--since", later, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn(f'rota: --since: "{later}" is {later} 00:00 (server time, UTC), which has not come yet',
                      r.stderr)
        r = self.d.rota("history", "--since", "last week", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn('rota: --since: cannot read "last week" as a time; use how long ago (7d, 12h, 90m)', r.stderr)

    def test_show_says_why_a_job_waits_and_what_its_priority_is_made_of(self):
        held = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go"))
        self.d.wait_state(held, "running")
        explore = self.d.submit("--gpus", "2", "--tier", "explore", "--", "true")
        thesis = self.d.submit("--gpus", "2", "--tier", "thesis", "--", "true")

        def pending(job):
            return wait_for(lambda: self.d.job(job).get("pending", {}).get("factors") and self.d.job(job)["pending"],
                            what=f"job {job}'s place in a pass")

        low, high = pending(explore), pending(thesis)
        self.assertGreater(high["factors"]["tier"], low["factors"]["tier"])
        self.assertGreater(high["priority"], low["priority"])
        self.assertEqual(high["reason"], "resources")
        text = self.d.rota("show", str(thesis)).stdout
        self.assertRegex(text, r"\nReason: Resources\n")
        self.assertRegex(text, r"\nPriority: \d+\.\d\n")
        self.assertRegex(text, r"\nFactors: tier=\d\.\d\d fairshare=\d\.\d\d age=\d\.\d\d size=\d\.\d\d "
                               r"penalty=\d\.\d\d time_of_day=\d\.\d\d")
        self.assertIn("pending", [e["to"] for e in self.d.show(thesis)["events"]])
        self.open_gate("go")
        for job in (held, thesis, explore):
            self.d.wait_state(job, "completed")

    def test_rota_rotad_and_the_api_give_one_version(self):
        cli = self.d.rota("--version").stdout.split()
        daemon = subprocess.run([os.path.join(BIN, "rotad"), "--version"], capture_output=True, text=True).stdout.split()
        self.assertEqual((cli[0], daemon[0]), ("rota", "rotad"))
        self.assertRegex(cli[1], r"^\d+\.\d+\.\d+$")
        self.assertEqual(cli[1], daemon[1])
        self.assertEqual(self.d.api({"op": "status"})["version"], cli[1])

    def test_logs_follow_prints_everything_and_ends_with_the_job(self):
        job = self.d.submit("--", "sh", "-c", "for i in 1 2 3; do echo line-$i; sleep 0.3; done")
        r = self.d.rota("logs", "-f", str(job), timeout=30)
        self.assertEqual([l for l in r.stdout.splitlines() if l.startswith("line-")], ["line-1", "line-2", "line-3"])
        self.assertEqual(self.d.job(job)["state"], "completed")

    def test_queue_start_shows_expected_start_of_waiting_jobs(self):
        blocker = self.d.submit("--gpus", "2", "--time", "2h", "--", "sleep", "30")
        self.d.wait_state(blocker, "running")
        waiting = self.d.submit("--gpus", "2", "--", "true")
        out = wait_for(lambda: (lambda o: o if "START" in o and str(waiting) in o and "(" in o else None)(
            self.d.rota("queue", "--start").stdout), what="queue --start")
        row = [l for l in out.splitlines() if l.strip().startswith(str(waiting))][0]
        self.assertRegex(row, r"\d{4}-\d\d-\d\d \d\d:\d\d")
        self.d.rota("cancel", str(blocker), str(waiting))

    def test_a_new_submission_has_its_place_in_the_queue_at_once(self):
        # Submissions wait a few milliseconds for a shared pass; anything asked meanwhile runs it.
        blocker = self.d.submit("--gpus", "2", "--", "sleep", "30")  # both whole cards
        self.d.wait_state(blocker, "running")
        waiting = self.d.submit("--gpus", "2", "--", "true")
        jobs = {j["id"]: j for j in json.loads(self.d.rota("queue", "--json").stdout)}
        self.assertEqual(jobs[waiting]["pending"]["reason"], "resources")
        self.assertEqual(self.d.job(waiting)["pending"]["reason"], "resources")
        self.d.rota("cancel", str(blocker), str(waiting))

    def test_reasons_are_made_when_asked_for_not_in_every_pass(self):
        # The passes that act list no reasons (design.md, "Reasons on demand"): the first
        # question after them has the queue explained, once, and later ones read that.
        def explained():
            return json.loads(self.d.rota("status", "--json").stdout)["scheduler"]["explained"]

        blocker = self.d.submit("--gpus", "2", "--time", "1h", "--", "sleep", "60")
        self.d.wait_state(blocker, "running")
        before = explained()
        waiting = [self.d.submit("--gpus", "1", "--time", "10m", "--", "true") for _ in range(3)]
        self.assertEqual(explained(), before)  # their passes ran (status waits for them), unexplained
        jobs = {j["id"]: j for j in json.loads(self.d.rota("queue", "--json").stdout)}
        self.assertEqual(explained(), before + 1)
        # The first waits for the cards, the others behind it.
        self.assertEqual([jobs[w]["pending"]["reason"] for w in waiting], ["resources", "priority", "priority"])
        self.assertEqual(self.d.job(waiting[2])["pending"]["reason"], "priority")
        self.assertIn("Reason: Resources", self.d.rota("show", str(waiting[0])).stdout)
        self.assertEqual(explained(), before + 1)  # the same notes until the next pass
        self.d.rota("cancel", str(waiting[0]))
        queue = json.loads(self.d.rota("queue", "--json").stdout)
        self.assertEqual([j["id"] for j in queue if j["state"] == "pending"], waiting[1:])
        self.assertTrue(all(j["pending"]["expected_start"] for j in queue if j["state"] == "pending"))
        self.assertEqual(explained(), before + 2)
        self.d.rota("cancel", str(blocker), *[str(w) for w in waiting[1:]])

    def test_status_reports_how_long_scheduling_passes_take(self):
        job = self.d.submit("--", "true")
        self.d.wait_state(job, "completed")
        s = json.loads(self.d.rota("status", "--json").stdout)["scheduler"]
        self.assertGreaterEqual(s["passes"], 2)  # one started the job, one followed its end
        self.assertGreater(s["max_ms"], 0)
        self.assertGreaterEqual(s["max_ms"], s["last_ms"])
        self.assertGreaterEqual(s["max_ms"], s["mean_ms"])
        self.assertRegex(self.d.rota("status").stdout,
                         r"Scheduler: \d+ passes, last \d+\.\d\d ms, mean \d+\.\d\d ms, max \d+\.\d\d ms")


class ServerZoneTest(DaemonTest):
    """Times are shown in the server's zone ([policy] timezone), the one rotad reads them in,
    whatever the client's own $TZ: every read-only reply carries the zone."""
    CONFIG = SMALL_CLUSTER + """
[policy]
timezone = "Asia/Shanghai"
"""

    def test_show_and_status_use_the_servers_zone(self):
        job = self.d.submit("--", "sh", "-c", until("go"))
        rec = self.d.wait_state(job, "running")
        shanghai = time.strftime("%Y-%m-%d %H:%M", time.gmtime(rec["start_time"] + 8 * 3600))
        client = {"TZ": "PST8"}
        out = self.d.rota("show", str(job), env=client).stdout
        self.assertIn(shanghai, out)
        pacific = time.strftime("%Y-%m-%d %H:%M", time.gmtime(rec["start_time"] - 8 * 3600))
        self.assertNotIn(pacific, out)
        self.open_gate("go")
        self.d.wait_state(job, "completed")
        started = json.loads(self.d.rota("status", "--json", env=client).stdout)["started"]
        out = self.d.rota("status", env=client).stdout
        self.assertIn("up since " + time.strftime("%Y-%m-%d %H:%M", time.gmtime(started + 8 * 3600)), out)


def big_before_small(test, gate, held, big, small):
    """Opens `gate` (which ends `held`): the protected 2-card job `big` starts, `small` still waits
    for it; then each ends in turn (their gates "big" and "small")."""
    test.open_gate(gate)
    test.d.wait_state(big, "running")
    test.assertEqual(test.d.job(small)["state"], "pending")
    test.open_gate("big")
    test.d.wait_state(small, "running")
    test.open_gate("small")
    for job in (held, big, small):
        test.d.wait_state(job, "completed")


class ProtectionTest(DaemonTest):
    """The bound on overtaking ([policy] protect_after): a job that waited that long is first in
    line within its tier, whatever its priority, and rota show says so."""
    CONFIG = SMALL_CLUSTER + """
[policy]
protect_after = "2s"
time_of_day = []  # at night the time-of-day rules favour the big job
"""

    def test_a_job_that_waited_past_the_bound_goes_before_a_smaller_later_one(self):
        held = self.d.submit("--gpus", "2", "--", "sh", "-c", until("go"))
        self.d.wait_state(held, "running")
        big = self.d.submit("--gpus", "2", "--time", "10h", "--", "sh", "-c", until("big"))
        small = self.d.submit("--gpus", "1", "--time", "5m", "--", "sh", "-c", until("small"))

        def pending(job):
            return self.d.job(job).get("pending", {})

        # The small job ranks higher (size); once the big one has waited 2 s it is protected.
        wait_for(lambda: pending(big).get("protected"), what="the big job protected")
        self.assertGreater(pending(small)["priority"], pending(big)["priority"])
        self.assertFalse(pending(small).get("protected"))
        self.assertIn("\nProtected: yes", self.d.rota("show", str(big)).stdout)
        self.assertNotIn("Protected:", self.d.rota("show", str(small)).stdout)
        queue = self.d.rota("queue").stdout
        rows = {int(l.split()[0]): l for l in queue.splitlines()[1:]}
        self.assertTrue(rows[big].endswith("(Resources,Protected)"), queue)
        self.assertNotIn("Protected", rows[small])
        # Both cards free at once: the protected job takes them; the small one would have delayed it.
        big_before_small(self, "go", held, big, small)


class PromiseTest(DaemonTest):
    """Promises ([policy] promise_slack): each job is promised, when it comes, the start first
    come first served would give it; once past it, the job is protected as after the week. Here
    without protection foreseen (ForeseenTest), so that the job is protected when it is due."""
    CONFIG = SMALL_CLUSTER + """
[policy]
promise_slack = "0s"
protect_foreseen = false
time_of_day = []  # at night the time-of-day rules favour the big job
"""

    def test_a_job_past_its_promise_goes_before_a_smaller_later_one(self):
        # Both cards for 6 s: the 2-card job behind it is promised their end (the time limit),
        # even though the small job ranks higher and would otherwise take a card first.
        held = self.d.submit("--gpus", "2", "--time", "6s", "--", "sleep", "60")
        rec = self.d.wait_state(held, "running")
        big = self.d.submit("--gpus", "2", "--time", "10h", "--", "sh", "-c", until("big"))
        small = self.d.submit("--gpus", "1", "--time", "5m", "--", "sh", "-c", until("small"))
        wait_for(lambda: "promise" in self.d.job(big).get("pending", {}), what="big promised")
        promise = self.d.job(big)["pending"]["promise"]
        self.assertEqual(promise, rec["start_time"] + 6)
        self.assertGreater(self.d.job(small)["pending"]["priority"], self.d.job(big)["pending"]["priority"])
        self.assertFalse(self.d.job(big)["pending"]["protected"])
        self.assertIn("\nPromised: ", self.d.rota("show", str(big)).stdout)
        self.assertIn("每个作业提交时都会得到一个承诺", self.d.rota("rules").stdout)
        # The held job's limit ends: the big job is due then and takes both cards.
        self.d.wait_state(held, "timeout")
        self.d.wait_state(big, "running")
        self.assertEqual(self.d.job(small)["state"], "pending")
        # The small job was promised behind the big one, on the two cards that could hold it
        # (not on the MIG card, which takes slices only).
        small_promise = self.d.job(small)["pending"]["promise"]
        self.assertEqual(small_promise, promise + 10 * 3600)
        # A restart keeps the promises.
        self.d.stop()
        self.d.start()
        self.assertEqual(self.d.job(small)["pending"]["promise"], small_promise)
        self.open_gate("big")
        self.d.wait_state(small, "running")
        self.open_gate("small")
        for job in (big, small):
            self.d.wait_state(job, "completed")


class ForeseenTest(DaemonTest):
    """Protection foreseen (the default): a job the plan shows still waiting when it is due is
    protected at once, so that the expected starts of the jobs it will go before say so. The
    time-of-day rules are off: at night they favour the big job."""
    CONFIG = SMALL_CLUSTER + """
[policy]
protect_after = "30s"
time_of_day = []
"""

    def test_a_job_the_plan_starts_past_its_due_time_is_protected_at_once(self):
        # Both cards for a minute. The 2-card job is due in 30 s; the smaller job ranks higher and
        # would take a card first, pushing the big one to five minutes past the minute: so the
        # big one (the longer waiting of the two the plan starts late) is protected now, and the
        # small one is expected after its ten hours.
        held = self.d.submit("--gpus", "2", "--time", "60s", "--", "sh", "-c", until("held"))
        rec = self.d.wait_state(held, "running")
        big = self.d.submit("--gpus", "2", "--time", "10h", "--", "sh", "-c", until("big"))
        small = self.d.submit("--gpus", "1", "--time", "5m", "--", "sh", "-c", until("small"))
        wait_for(lambda: self.d.job(big).get("pending", {}).get("protected"), what="big protected")
        self.assertLess(time.time(), self.d.job(big)["submit_time"] + 30)  # before it was due
        self.assertEqual(self.d.job(big)["pending"]["expected_start"], rec["start_time"] + 60)
        self.assertFalse(self.d.job(small)["pending"]["protected"])
        self.assertGreater(self.d.job(small)["pending"]["priority"], self.d.job(big)["pending"]["priority"])
        self.assertGreaterEqual(self.d.job(small)["pending"]["expected_start"], rec["start_time"] + 60 + 10 * 3600)
        rules = " ".join(self.d.rota("rules", "--lang", "en").stdout.split())
        self.assertIn("is due for protection is protected at once", rules)
        # The held job ends early: the big one starts, the small one still waits for it.
        big_before_small(self, "held", held, big, small)


class SystemdNotifyTest(unittest.TestCase):
    def test_rotad_tells_systemd_when_it_is_ready(self):
        d = Rotad(SMALL_CLUSTER)
        self.addCleanup(d.cleanup)
        path = os.path.join(d.dir, "notify.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(path)
        s.settimeout(20)
        self.addCleanup(s.close)
        os.environ["NOTIFY_SOCKET"] = path
        try:
            d.start(wait=False)
        finally:
            del os.environ["NOTIFY_SOCKET"]
        self.assertEqual(s.recv(64), b"READY=1")
        # Ready means serving: the socket answers now.
        self.assertTrue(d.api({"op": "hello"})["ok"])
        d.stop()
        self.assertEqual(s.recv(64), b"STOPPING=1")

    def test_under_journald_lines_carry_their_priority_and_no_time(self):
        # With JOURNAL_STREAM set (systemd's StandardError=journal) each line starts with its
        # syslog priority, which journald takes as the entry's: `journalctl -p warning` then
        # finds rotad's warnings. A default host memory beyond this machine's is one.
        d = Rotad('default_mem_per_gpu = "1000T"\n' + SMALL_CLUSTER, env={"JOURNAL_STREAM": "8:12345"})
        self.addCleanup(d.cleanup)
        d.start()
        d.stop()
        lines = d.read_log().splitlines()
        self.assertTrue(lines)
        for line in lines:
            self.assertRegex(line, r"^<[2-7]>(critical|error|warning|info|debug): ", line)
        self.assertTrue(any(re.match(r"<4>warning: default_mem_per_gpu = 1024000G is more than", line)
                            for line in lines), lines)
        self.assertTrue(any(line.startswith("<6>info: rotad ") and "serving" in line for line in lines), lines)


if __name__ == "__main__":
    unittest.main()

