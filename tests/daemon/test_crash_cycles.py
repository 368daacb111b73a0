"""Crash cycles (docs/reliability.md): rotad killed with SIGKILL at random moments of a mixed
workload, again and again, and restarted each time; in some cycles a job's shepherd or its process
group is killed from outside instead. What must hold after every restart and at the end:

- every acknowledged submission is in the store, exactly once (each carries a token of its own),
  and nothing else is (at most the submissions in flight at a kill);
- an acknowledged cancel ends its job cancelled; an acknowledged booking is on the calendar once;
- no job ran more often than its history says it started (each run appends a marker), and every
  completed job ran;
- no card was held by two jobs at once: each run holds a lock on each of its cards (flock), and a
  run that finds one taken says so;
- at the end no shepherd, job process or cgroup is left;
- every message the outbox holds as sent was received, at most once more than the outbox holds
  it (a kill between a send and its record sends it again, as docs/notify.md says).

ROTA_CRASH_CYCLES sets the number of cycles (default 200), ROTA_CRASH_SEED the seed (default:
random, printed); scripts/crash-soak.sh runs thousands."""
import os
import random
import re
import signal
import subprocess
import threading
import time
import unittest

from harness import DEFAULT_USER, FINAL, SMALL_CLUSTER, DaemonTest, wait_for
from test_notify import Receiver

CYCLES = int(os.environ.get("ROTA_CRASH_CYCLES", "200"))
SEED = int(os.environ.get("ROTA_CRASH_SEED", "0")) or random.randrange(1, 1 << 30)

JOB = r"""#!/bin/sh
# A crash-cycle job: $1 its token, $2 how long it runs. It notes each run, and holds a lock on each
# of its cards while it runs: a card another run holds is a card given twice.
dir=$(dirname "$0")
echo "run $1 $ROTA_JOB_ID" >> "$dir/markers"
echo $$ > "$dir/pid-$ROTA_JOB_ID"
for g in $(echo "$ROTA_GPUS" | tr ',' ' '); do
  eval "exec $((7 + g))>>\"$dir/gpu$g.lock\""
  flock -n $((7 + g)) || echo "conflict $1 $ROTA_JOB_ID gpu$g" >> "$dir/markers"
done
sleep "$2"
"""


class CrashCyclesTest(DaemonTest):
    KILL_WAIT = 1

    def setUp(self):
        self.receiver = Receiver()
        self.addCleanup(self.receiver.close)
        self.CONFIG = SMALL_CLUSTER + f"""
[notify]
language = "en"
user_channels = ["hook"]
user_events = ["job_ended", "job_failed", "job_preempted", "job_requeued"]
first_backoff = "1s"
max_backoff = "1s"

[notify.channels.hook]
type = "webhook"
url = "http://127.0.0.1:{self.receiver.port}/hook"
"""
        super().setUp()
        self.script = self.write_script("job.sh", JOB)
        self.rng = random.Random(SEED)
        self.acked = {}        # token -> job id, for each acknowledged submission
        self.unacked = set()   # tokens of submissions in flight at a kill
        self.cancelled = {}    # job id -> when its cancel was acknowledged
        self.booked = set()    # notes of acknowledged bookings
        self.token = 0
        self.day = int(time.time()) // 86400 * 86400
        self.lock = threading.Lock()

    # --- the workload ---

    def submit(self):
        with self.lock:
            self.token += 1
            token = f"t{self.token}"
        kind = self.rng.choice(["regular", "explore", "thesis"])
        args = ["--tier", kind, "--gpus", str(self.rng.choice([1, 1, 2])), "--time", "5m"]
        if kind == "explore" or self.rng.random() < 0.3:
            args.append("--requeue")
        seconds = self.rng.choice(["0", "0.05", "0.2", "0.6", "1.5"])
        r = self.d.rota("submit", "--parsable", *args, "--", self.script, token, seconds, check=False, timeout=30)
        with self.lock:
            if r.returncode == 0:
                self.acked[token] = int(r.stdout.strip())
            else:
                self.unacked.add(token)

    def cancel(self):
        with self.lock:
            ids = sorted(set(self.acked.values()) - set(self.cancelled))
        if not ids:
            return
        job = self.rng.choice(ids[-6:])
        r = self.d.rota("cancel", str(job), check=False, timeout=30)
        if r.returncode == 0:
            with self.lock:
                self.cancelled[job] = time.time()

    def book(self):
        with self.lock:
            self.token += 1
            note = f"b{self.token}"
        # A slot of its own, from tomorrow on (bookings may start up to 14 days ahead).
        start = time.localtime(self.day + 86400 + (self.token % 400) * 2400)
        r = self.d.rota("book", "--gpus", "1", "--from", time.strftime("%Y-%m-%d %H:%M", start),
                        "--for", "30m", "--note", note, check=False, timeout=30)
        if r.returncode == 0:
            with self.lock:
                self.booked.add(note)

    def actions(self, n):
        for _ in range(n):
            self.rng.choice([self.submit, self.submit, self.submit, self.cancel, self.book])()

    # --- faults ---

    def shepherds(self):
        r = subprocess.run(["pgrep", "-f", f"rota-shepherd --job [0-9]+ --spec {self.d.state}"],
                           capture_output=True, text=True)
        return [int(p) for p in r.stdout.split()]

    def kill_a_job_from_outside(self):
        """SIGKILL to a running job's shepherd, or to its process group."""
        running = [j for j in self.d.api({"op": "queue", "all": True})["jobs"] if j["state"] == "running"]
        if not running:
            return None
        if self.rng.random() < 0.5:
            shepherds = self.shepherds()
            try:
                if shepherds:
                    os.kill(self.rng.choice(shepherds), signal.SIGKILL)
                    return "shepherd"
            except ProcessLookupError:  # its job ended since pgrep saw it
                pass
            return None
        job = self.rng.choice(running)["id"]
        try:
            os.killpg(os.getpgid(int(self.read(f"pid-{job}"))), signal.SIGKILL)
            return "process group"
        except (OSError, ValueError):  # not started yet, or ended since
            return None

    # --- what must hold ---

    def history(self):
        """Every job: the queue (pending, running) and the history (ended)."""
        queue, ended = self.d.api({"op": "queue", "all": True}, {"op": "history", "since": 0, "all": True})
        self.assertNotIn("next", ended, "more than one page of history")
        # A job that ended between the two answers is in both: the later answer says how.
        jobs = {j["id"]: j for j in queue["jobs"] + ended["jobs"]}
        return list(jobs.values())

    def token_of(self, job):
        return job["command"][1] if len(job.get("command", [])) > 2 else None

    def check_store(self, jobs, where):
        tokens = {}
        for j in jobs:
            t = self.token_of(j)
            self.assertNotIn(t, tokens, f"{where}: token {t} stored twice: jobs {tokens.get(t)} and {j['id']}")
            tokens[t] = j["id"]
        for t, job in self.acked.items():
            self.assertEqual(tokens.get(t), job, f"{where}: acknowledged submission {t} (job {job}) is not stored")
        extra = set(tokens) - set(self.acked) - self.unacked
        self.assertFalse(extra, f"{where}: stored but never submitted: {extra}")

    def markers(self):
        runs, conflicts = {}, []
        if os.path.exists(self.path("markers")):
            for line in self.read("markers").splitlines():
                parts = line.split()
                if parts[0] == "run":
                    runs[int(parts[2])] = runs.get(int(parts[2]), 0) + 1
                elif parts[0] == "conflict":
                    conflicts.append(line)
        return runs, conflicts

    def check_runs(self, jobs, where, final=False):
        runs, conflicts = self.markers()
        self.assertFalse(conflicts, f"{where}: a card held by two jobs at once: {conflicts}")
        by_id = {j["id"]: j for j in jobs}
        for job, n in runs.items():
            self.assertIn(job, by_id, f"{where}: job {job} ran but is not stored")
            if final:
                starts = [e for e in self.d.show(job)["events"] if e["to"] == "running"]
                self.assertLessEqual(n, len(starts), f"{where}: job {job} ran {n} times, started {len(starts)}")
        if final:
            for j in jobs:
                if j["state"] == "completed":
                    self.assertGreaterEqual(runs.get(j["id"], 0), 1, f"job {j['id']} completed without running")

    def check_bookings(self, where):
        bookings = self.d.api({"op": "bookings", "all": True, "from": self.day, "to": self.day + 20 * 86400})
        notes = [b.get("note") for b in bookings.get("bookings", [])]
        for note in self.booked:
            self.assertEqual(notes.count(note), 1, f"{where}: booking {note}: {notes.count(note)} on the calendar")

    def test_rotad_killed_at_random_moments_loses_and_repeats_nothing(self):
        print(f"\ncrash cycles: {CYCLES}, seed {SEED} (ROTA_CRASH_SEED={SEED} repeats them)")
        faults = {"rotad": 0, "shepherd": 0, "process group": 0}
        for cycle in range(CYCLES):
            where = f"cycle {cycle} (seed {SEED})"
            jobs = self.history()
            self.check_store(jobs, where)
            self.check_runs(jobs, where)
            worker = threading.Thread(target=self.actions, args=(self.rng.randint(1, 4),))
            worker.start()
            time.sleep(self.rng.random() * 0.3)
            if cycle % 5 == 4:
                outside = self.kill_a_job_from_outside()
                if outside:
                    faults[outside] += 1
                worker.join()
                continue
            self.d.kill9()
            faults["rotad"] += 1
            worker.join()
            self.d.start()
        print(f"crash cycles: faults {faults}; {len(self.acked)} submissions acknowledged, "
              f"{len(self.unacked)} in flight at a kill, {len(self.cancelled)} cancels, {len(self.booked)} bookings")
        # The end: every job to a final state, every message out, then nothing left behind.
        wait_for(lambda: all(j["state"] in FINAL for j in self.history()), timeout=120,
                 what="every job to end")
        jobs = self.history()
        self.check_store(jobs, "the end")
        self.check_runs(jobs, "the end", final=True)
        self.check_bookings("the end")
        # A job whose cancel was acknowledged is cancelled, or had ended on its own by then.
        by_id = {j["id"]: j for j in jobs}
        for job, at in self.cancelled.items():
            if by_id[job]["state"] != "cancelled":
                self.assertLessEqual(by_id[job]["end_time"], at + 1, f"job {job} went on after its cancel")
        self.check_outbox()
        self.d.stop()
        self.assertFalse(self.shepherds(), "shepherds left")
        r = subprocess.run(["pgrep", "-f", self.script], capture_output=True, text=True)
        self.assertEqual(r.stdout.split(), [], "job processes left")
        base = self.d.cgroup_base()
        if base and os.path.isdir(base):
            self.assertEqual([n for n in os.listdir(base) if n.startswith("job-")], [], "cgroups left")

    def check_outbox(self):
        def settled():
            rows = self.d.api({"op": "notify_log", "since": 0, "limit": 10000})["messages"]
            return rows if rows and all(m["state"] != "pending" for m in rows) else None
        rows = wait_for(settled, timeout=60, what="every message sent")
        received = {}
        for r in self.receiver.requests:
            key = (r["body"].get("event"), r["body"].get("subject"))
            received[key] = received.get(key, 0) + 1
        held = {}
        for m in rows:
            self.assertEqual(m["state"], "sent", m)
            key = (m["event"], m["subject"])
            held[key] = held.get(key, 0) + 1
        for key, n in held.items():
            self.assertGreaterEqual(received.get(key, 0), n, f"message {key}: sent {n}, received fewer")
            self.assertLessEqual(received.get(key, 0), 2 * n, f"message {key}: sent {n}, received more than twice")
        self.assertFalse(set(received) - set(held), "received but not in the outbox")
        # Every end was told (but a cancel by the owner, who knows), whenever rotad learnt of it.
        told = {int(m) for _, subject in held for m in re.findall(r"\bJob (\d+) ", subject)}
        untold = [j["id"] for j in self.history() if j["state"] != "cancelled" and j["id"] not in told]
        self.assertFalse(untold, "jobs that ended untold")


if __name__ == "__main__":
    unittest.main()
