"""`rota simulate --from-store` and `rota tune` (issue 29) on a store filled by a real rotad: the
jobs that ran, with their recorded limits, replayed on this server's cards through each policy,
with each user's waits as recorded and as each policy would have made them; `--set` changes count;
the jobs that never ran left out; `rota tune` replays a grid of the lab's configured weights and
proposes a change or says to keep them; nothing to replay, a bad `--since` and an unreadable
configuration said clearly."""
import json
import os
import subprocess
import time
import unittest

from harness import DEFAULT_USER, IS_ROOT, DaemonTest, as_user, ensure_user

OTHER = "rota-it-sim2"


class SimulateFromStoreTest(DaemonTest):
    def fill(self):
        """Two users' jobs: one whole-card job each that holds both cards a moment, then a queue."""
        users = [None] + ([OTHER] if IS_ROOT else [])
        if IS_ROOT:
            ensure_user(OTHER)
        jobs = []
        for user in users:
            jobs.append(self.d.submit("--gpus", "2", "--time", "10m", "--", "sleep", "1", user=user))
            jobs.append(self.d.submit("--gpus", "1", "--time", "5m", "--", "true", user=user))
        never = self.d.submit("--gpus", "2", "--time", "5m", "--after", str(jobs[0]), "--", "true")
        self.d.rota("cancel", str(never))
        for job in jobs:
            self.d.wait_state(job, "completed", timeout=30)
        return users, jobs

    def simulate(self, *args, user=None, check=True):
        return self.d.rota("simulate", "--from-store", "--since", "1d", *args, user=user, check=check)

    def test_the_lab_history_replays_through_each_policy_with_each_users_waits(self):
        users, jobs = self.fill()
        # A booking still to come is no part of the history (bookings of the replayed days are:
        # store_trace_test.cc).
        day = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 3 * 86400))
        self.d.rota("book", "--gpus", "1", "--from", f"{day} 10:00", "--until", f"{day} 12:00")
        r = json.loads(self.simulate("--json").stdout)
        self.assertEqual(r["jobs"], len(jobs))
        self.assertEqual(r["skipped"], 1)  # the cancelled one never ran
        self.assertEqual(r["gpus"], 3)     # this server's cards (two whole, one in MIG mode)
        self.assertEqual(r["estimates"], "recorded")
        self.assertEqual([x["policy"] for x in r["results"]], ["fifo", "backfill", "rota"])
        self.assertNotIn("bookings", r)
        names = sorted(u["user"] for u in r["recorded"]["per_user"])
        self.assertEqual(len(names), len(users))
        self.assertEqual(sum(u["jobs"] for u in r["recorded"]["per_user"]), len(jobs))
        self.assertGreaterEqual(r["recorded"]["max_wait"], 0)
        for res in r["results"]:
            self.assertEqual(res["jobs"], len(jobs), res)
            self.assertEqual(sorted(u["user"] for u in res["per_user"]), names)
        # The text: the usual tables and the per-user one.
        text = self.simulate().stdout
        self.assertIn("Trace the store (jobs ended since 1d): %d jobs" % len(jobs), text)
        self.assertIn("Waits per user: as recorded, and as each policy would have made them", text)
        self.assertIn("RECORDED AVG", text)
        # Any user may replay the lab's history (everyone sees the queue and the history's jobs).
        if IS_ROOT:
            mine = json.loads(self.simulate("--json", "--policy", "rota", user=OTHER).stdout)
            self.assertEqual(mine["jobs"], len(jobs))
        # A change to the policy is replayed: fifo against rota with every weight but age at 0.
        changed = json.loads(self.simulate("--json", "--policy", "rota", "--set", "weight.fairshare=0").stdout)
        self.assertEqual(changed["results"][0]["jobs"], len(jobs))

    def test_slices_and_shares_replay_on_the_cards_as_they_are(self):
        # The MIG card has one 3g.40gb slice: two such jobs ran one after the other, and so they
        # replay (a slice is not half of a whole card that two could share).
        first = self.d.submit("--mig", "3g.40gb", "--time", "5m", "--", "sleep", "4")
        second = self.d.submit("--mig", "3g.40gb", "--time", "5m", "--", "true")
        share = self.d.submit("--gpu-mem", "20G", "--time", "5m", "--", "true")
        for job in (first, second, share):
            self.d.wait_state(job, "completed", timeout=30)
        r = json.loads(self.simulate("--json", "--policy", "fifo,rota").stdout)
        self.assertEqual(r["jobs"], 3)
        self.assertEqual(r["mig_slices"], 4)
        # In the replay the first starts as it arrives and the second waits for the first's
        # recorded run to end (a sanitized `rota submit` can take a second: timed from its arrival).
        a, b = self.d.job(first), self.d.job(second)
        waited = a["submit_time"] + (a["end_time"] - a["start_time"]) - b["submit_time"]
        self.assertGreater(waited, 0)
        for res in r["results"]:
            self.assertEqual(res["rejected"], 0, res)
            self.assertEqual(res["max_wait"], waited, res)
        self.assertIn("this server's 3 GPUs as they are (4 MIG slices)", self.simulate("--policy", "fifo").stdout)
        # Asked for other cards, the replay runs on those.
        other = json.loads(self.simulate("--json", "--policy", "fifo", "--gpus", "2").stdout)
        self.assertNotIn("mig_slices", other)
        # The page's replay says the same cluster and the same waits.
        page = self.replayed("replay", since="1d")
        self.assertTrue(page["ok"], page)
        self.assertEqual(page["result"]["mig_slices"], 4)
        cli = json.loads(self.simulate("--json").stdout)
        for mine, theirs in zip(page["result"]["results"], cli["results"]):
            self.assertEqual(mine["max_wait"], theirs["max_wait"], mine["policy"])

    def test_tune_replays_a_grid_of_the_configured_weights_and_proposes(self):
        users, jobs = self.fill()
        conf = self.path("lab.toml")
        with open(conf, "w") as f:
            f.write("[policy.weights]\nfairshare = 0\nage = 0\nsize = 0\n[policy]\ntime_of_day = []\n")
        os.chmod(conf, 0o644)
        r = json.loads(self.d.rota("tune", "--since", "1d", "--config", conf, "--json").stdout)
        self.assertEqual(r["jobs"], len(jobs))
        # Size 0, or 1000 and 2000 on the limit or the prediction; no time-of-day table to turn off.
        self.assertEqual(r["tried"], 4 * 5 * 5 + 1)  # and the proposal with promises
        other = r["proposed_other_promises"]
        self.assertEqual(other["promise_slack"], 0)
        self.assertEqual(other["weights"], r["proposed"]["weights"])
        self.assertEqual(r["proposed"]["promise_slack"], -1)
        self.assertEqual(r["current"]["size_by"], "limit")
        self.assertIn(r["proposed"]["size_by"], ("limit", "prediction"))
        self.assertEqual(r["current"]["weights"]["fairshare"], 0)
        self.assertEqual(r["current"]["time_of_day"], False)
        self.assertLessEqual(r["proposed"]["avg_wait"], r["current"]["avg_wait"])
        self.assertLessEqual(r["proposed"]["p99_wait"], r["current"]["p99_wait"])
        self.assertEqual(sorted(u["user"] for u in r["proposed"]["per_user"]),
                         sorted(u["user"] for u in r["current"]["per_user"]))
        self.assertEqual(r["change"], bool(r["changes"]))
        text = self.d.rota("tune", "--since", "1d", "--config", conf).stdout
        self.assertIn("under 101 configurations of the rota policy", text)
        self.assertRegex(text, r"average wait +\S+ +\S+ +\S+")
        self.assertIn("PROPOSED, PROMISES KEPT", text)
        self.assertTrue("Keep the current weights" in text or "Proposed change to " + conf in text, text)
        # Without --config: the lab's file, or the defaults when there is none (said, not an error).
        self.assertEqual(self.d.rota("tune", "--since", "1d", "--json", check=False).returncode, 0)
        bad = self.d.rota("tune", "--since", "1d", "--config", self.path("missing.toml"), check=False)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("rota tune: ", bad.stderr)
        self.assertIn("missing.toml", bad.stderr)

    def replayed(self, op, **fields):
        """Asks rotad for a replay (ops `replay`, `tune`: the page's) until it is done."""
        deadline = time.time() + 120
        while True:
            r = self.d.api(dict({"op": op}, **fields))
            if not r["ok"] or r["state"] == "done":
                return r
            self.assertEqual(r["state"], "running", r)
            self.assertLess(time.time(), deadline, "the replay did not finish in 2 minutes")
            time.sleep(0.2)

    def test_rotad_replays_the_history_for_the_page_as_the_command_line_does(self):
        users, jobs = self.fill()
        first = self.d.api({"op": "replay", "since": "1d"})
        self.assertTrue(first["ok"], first)
        self.assertEqual((first["state"], first["since"], first["kind"]), ("running", "1d", "replay"))
        r = self.replayed("replay", since="1d")
        self.assertTrue(r["ok"], r)
        page = r["result"]
        # The same figures as `rota simulate --from-store`: the lab's configuration here is the
        # defaults, under which the command line replays.
        cli = json.loads(self.simulate("--json").stdout)
        for k in ("jobs", "skipped", "gpus", "mig_slices"):
            self.assertEqual(page[k], cli[k], k)
        self.assertEqual(page["recorded"], cli["recorded"])
        self.assertEqual([x["policy"] for x in page["results"]], ["fifo", "backfill", "rota"])
        for mine, theirs in zip(page["results"], cli["results"]):
            for k in ("jobs", "avg_wait", "p99_wait", "max_wait", "utilisation", "jain_slowdown", "per_user"):
                self.assertEqual(mine[k], theirs[k], (mine["policy"], k))
        # Asked again: the same replay, not a new one; fresh: a new one.
        self.assertEqual(self.d.api({"op": "replay", "since": "1d"})["made"], r["made"])
        self.assertEqual(self.d.api({"op": "replay", "since": "1d", "fresh": True})["state"], "running")
        self.replayed("replay", since="1d")
        # The tuning, as `rota tune` gives it with rotad's own configuration.
        t = self.replayed("tune", since="1d")
        self.assertTrue(t["ok"], t)
        cli_t = json.loads(self.d.rota("tune", "--since", "1d", "--config", self.d.config_path, "--json").stdout)
        for k in ("tried", "change", "changes"):
            self.assertEqual(t["result"][k], cli_t[k], k)
        for k in ("current", "proposed", "proposed_other_promises"):
            self.assertEqual(t["result"][k]["avg_wait"], cli_t[k]["avg_wait"], k)
            self.assertEqual(t["result"][k]["weights"], cli_t[k]["weights"], k)
        # Bad input, and nothing to replay.
        bad = self.d.api({"op": "replay", "since": "yesterday-ish"})
        self.assertEqual(bad["error"]["code"], "invalid_argument", bad)
        self.assertEqual(self.d.api({"op": "tune", "fresh": "yes"})["error"]["message"], "\"fresh\" must be true or false")
        if IS_ROOT:
            # Anyone may replay; only admins tune.
            ask = ("import json, socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
                   "s.sendall((json.dumps({'v': 1, 'op': sys.argv[2], 'since': '1d'}) + '\\n').encode()); "
                   "print(s.makefile().readline())")
            def as_student(op):  # Debian's python3: the test's own may be under /root
                out = subprocess.run(as_user(DEFAULT_USER, ["/usr/bin/python3", "-c", ask, self.d.socket, op], {}),
                                     capture_output=True, text=True, timeout=30, check=True).stdout
                return json.loads(out)
            self.assertTrue(as_student("replay")["ok"])
            refused = as_student("tune")
            self.assertEqual(refused["error"]["code"], "permission_denied", refused)
            self.assertIn("only admins may tune the lab's policy", refused["error"]["message"])

    def test_nothing_to_replay_and_bad_input_are_said(self):
        nothing = self.d.api({"op": "replay", "since": "1d"})
        self.assertEqual(nothing["error"]["code"], "not_found", nothing)
        self.assertIn("nothing to replay", nothing["error"]["message"])
        r = self.simulate(check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no job that ran has ended since then: nothing to replay", r.stderr)
        r = self.d.rota("simulate", "--from-store", "--since", "yesterday-ish", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("--since", r.stderr)
        r = self.d.rota("simulate", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("give either --trace FILE or --from-store", r.stderr)
        r = self.d.rota("simulate", "--from-store", "--trace", "x.csv", check=False)
        self.assertIn("give either --trace FILE or --from-store", r.stderr)
        r = self.d.rota("tune", "--since", "1d", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("nothing to replay", r.stderr)


if __name__ == "__main__":
    unittest.main()
