"""The GPU layer in the running daemon: rotad loads the fake libnvidia-ml (the real NVML code
path, driven by a state file this test writes), samples it every second, attributes each GPU
process to its Rota job or marks it as outside Rota, moves failing cards from healthy to suspect
to drained (stopping their jobs), and lets admins drain and resume cards."""
import json
import os
import pwd
import signal
import subprocess
import sys
import time
import unittest

import unicodedata

from harness import BIN, DEFAULT_USER, IS_ROOT, DaemonTest, Rotad, as_user, ensure_user, wait_for

FAKE = os.path.join(BIN, "libnvidia-ml-fake.so")
MINIMAL = os.path.join(BIN, "libnvidia-ml-minimal.so")


def card(i, **extra):
    c = {"uuid": f"GPU-fake-{i}", "name": "NVIDIA A100-SXM4-80GB", "pci": f"00000000:{0x3B + i:02X}:00.0",
         "memory_total_mib": 81920, "memory_used_mib": 0, "util_gpu": 0, "util_memory": 0,
         "temperature": 35, "power_mw": 60000, "processes": []}
    c.update(extra)
    return c


def mig_card(i):
    return card(i, mig_mode=1, mig=[
        {"uuid": f"MIG-fake-{i}-0", "profile": "3g.40gb", "memory_total_mib": 40192, "memory_used_mib": 0,
         "processes": []},
        {"uuid": f"MIG-fake-{i}-1", "profile": "3g.40gb", "memory_total_mib": 40192, "memory_used_mib": 0,
         "processes": []}])


def config(library=FAKE, drain_after=2):
    return f"""
[gpus]
source = "nvml"
nvml_library = "{library}"
sample_interval = "1s"
nvml_timeout = "1s"
drain_after = {drain_after}
[inventory]
storage = ["/tmp", "/no/such/disk"]
"""


class FakeNvmlTest(unittest.TestCase):
    DRAIN_AFTER = 2
    LIBRARY = FAKE
    EXTRA_CONFIG = ""  # more of rota.toml, after [gpus] and [inventory]

    def setUp(self):
        self.d = Rotad(config(self.LIBRARY, self.DRAIN_AFTER) + self.EXTRA_CONFIG)
        self.state_path = os.path.join(self.d.dir, "nvml.json")
        self.state = {"driver_version": "550.54.15", "cards": [card(0), card(1), mig_card(2)]}
        self.write_state()
        self.d.env = {"FAKE_NVML_STATE": self.state_path}
        self.addCleanup(self._cleanup)
        self.outside = []
        self.d.start()

    def _cleanup(self):
        for p in self.outside:
            p.kill()
            p.wait()
        if any(t is self for t, _ in self._outcome.result.failures + self._outcome.result.errors):
            print("---- rotad log ----\n" + self.d.read_log())
        self.d.cleanup()

    def write_state(self):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_path)  # the fake re-reads the file on every call: never half of it

    def gpus(self, user=None):
        return json.loads(self.d.rota("gpus", "--json", user=user).stdout)

    def card_of(self, reply, uuid):
        return [g for g in reply["gpus"] if g["uuid"] == uuid][0]

    def job_pid(self, name):
        """The pid of a job's own process, which wrote it to a file."""
        path = os.path.join(self.d.dir, name)

        def written():
            if not os.path.exists(path):
                return None
            with open(path) as f:
                return f.read().strip()
        return int(wait_for(written, what=f"{name} to be written"))

    def submit_holder(self, name, *args):
        """A job that writes its pid and sleeps; returns (job id, pid)."""
        pidfile = os.path.join(self.d.dir, name)
        job = self.d.submit(*args, "--", "sh", "-c", f"echo $$ > {pidfile}; exec sleep 300")
        self.d.wait_state(job, "running")
        return job, self.job_pid(name)

    def start_outside(self):
        """A process started directly, not through Rota."""
        p = subprocess.Popen(["sleep", "300"])
        self.outside.append(p)
        return p.pid


class AttributionTest(FakeNvmlTest):
    def test_processes_are_attributed_to_jobs_users_or_outside(self):
        job, pid = self.submit_holder("a.pid", "--gpus", "1", "--tier", "thesis")
        rec = self.d.job(job)
        uuid = rec["gpu_uuids"][0]
        idx = int(uuid.rsplit("-", 1)[1])
        other = 1 - idx
        outside = self.start_outside()
        mig_job, mig_pid = self.submit_holder("m.pid", "--mig", "3g.40gb")
        mig_rec = self.d.job(mig_job)
        slice_pos = int(mig_rec["mig_uuid"].rsplit("-", 1)[1])

        self.state["cards"][idx]["processes"] = [{"pid": pid, "used_mib": 20480, "sm_util": 70}]
        self.state["cards"][idx]["memory_used_mib"] = 20480
        # The job's process also shows up on a card it does not hold, next to an outside process.
        self.state["cards"][other]["processes"] = [{"pid": pid, "used_mib": 512},
                                                   {"pid": outside, "used_mib": 3276}]
        self.state["cards"][2]["mig"][slice_pos]["processes"] = [{"pid": mig_pid, "used_mib": 10240}]
        self.write_state()

        def attributed():
            r = self.gpus()
            c = self.card_of(r, uuid)
            return r if c["processes"] and c["processes"][0]["job_id"] == job else None
        r = wait_for(attributed, what="the job's process to be attributed")
        c = self.card_of(r, uuid)
        owner = rec["user"]
        self.assertEqual(c["processes"][0], {"pid": pid, "memory": 20480, "sm_util": 70, "uid": pwd.getpwnam(owner).pw_uid,
                                             "user": owner, "job_id": job, "outside": False, "allocated": True})
        self.assertEqual([(h["job_id"], h["memory_used"], h["tier"]) for h in c["jobs"]], [(job, 20480, "thesis")])
        self.assertEqual(c["memory_used"], 20480)
        self.assertEqual(r["driver_version"], "550.54.15")

        o = self.card_of(r, f"GPU-fake-{other}")
        by_pid = {p["pid"]: p for p in o["processes"]}
        self.assertEqual((by_pid[pid]["job_id"], by_pid[pid]["allocated"], by_pid[pid]["outside"]), (job, False, False))
        me = pwd.getpwuid(os.getuid()).pw_name
        self.assertEqual((by_pid[outside]["job_id"], by_pid[outside]["outside"], by_pid[outside]["user"]),
                         (0, True, me))
        self.assertEqual(o["jobs"], [])

        m = self.card_of(r, "GPU-fake-2")
        sl = [s for s in m["mig"] if s["uuid"] == mig_rec["mig_uuid"]][0]
        self.assertEqual([(p["pid"], p["job_id"]) for p in sl["processes"]], [(mig_pid, mig_job)])
        held = [h for h in m["jobs"] if h["job_id"] == mig_job][0]
        self.assertEqual((held["mig_uuid"], held["memory_used"]), (mig_rec["mig_uuid"], 10240))

        # The table says the same: who, which job, how much; outside processes marked.
        table = self.d.rota("gpus", "--color", "never").stdout
        line = [l for l in table.splitlines() if l.split()[:1] == [str(idx)]][0]
        self.assertRegex(line, rf"{owner}/{job}\b.*\(20\.0G thesis")
        line = [l for l in table.splitlines() if l.split()[:1] == [str(other)]][0]
        self.assertIn(f"{me}/outside(3.2G)", line)
        self.assertRegex(line, rf"{owner}/{job}!.*not allocated here")
        self.assertRegex(table, rf"3g\.40gb .*{owner}/{mig_job}\b.*\(10\.0G")

    def test_a_sessions_processes_count_as_inside(self):
        pidfile = os.path.join(self.d.dir, "s.pid")
        session = self.d.start_rota("run", "--gpus", "1", "--", "sh", "-c", f"echo $$ > {pidfile}; exec sleep 300")
        self.outside.append(session)  # stopped with the test
        job = wait_for(lambda: self.d.sessions("running"), what="the session to run")[0]
        pid = self.job_pid("s.pid")
        uuid = job["gpu_uuids"][0]
        idx = int(uuid.rsplit("-", 1)[1])
        self.state["cards"][idx]["processes"] = [{"pid": pid, "used_mib": 4096}]
        self.write_state()
        c = wait_for(lambda: (lambda c: c if c["processes"] else None)(self.card_of(self.gpus(), uuid)),
                     what="the session's process to show")
        self.assertEqual((c["processes"][0]["job_id"], c["processes"][0]["outside"]), (job["id"], False))
        held = [h for h in c["jobs"] if h["job_id"] == job["id"]][0]
        self.assertEqual((held["interactive"], held["memory_used"]), (True, 4096))

    def test_a_process_that_is_gone_or_unknown_is_outside_with_no_user(self):
        self.state["cards"][0]["processes"] = [{"pid": 4194000, "used_mib": 100}]  # no such pid
        self.write_state()
        r = wait_for(lambda: (lambda c: c if c["processes"] else None)(self.card_of(self.gpus(), "GPU-fake-0")),
                     what="the process to show")
        self.assertEqual((r["processes"][0]["outside"], r["processes"][0]["uid"], r["processes"][0]["user"]),
                         (True, -1, ""))


class HealthTest(FakeNvmlTest):
    def test_a_failing_card_goes_suspect_then_drained_and_its_jobs_stop(self):
        keep, _ = self.submit_holder("k.pid", "--gpus", "1", "--requeue")
        drop, _ = self.submit_holder("d.pid", "--gpus", "1")
        cards = {self.d.job(keep)["gpu_uuids"][0]: keep, self.d.job(drop)["gpu_uuids"][0]: drop}
        self.assertEqual(len(cards), 2)
        # Card 0 is lost; the other card keeps its job.
        bad = "GPU-fake-0"
        victim = cards[bad]
        survivor = cards["GPU-fake-1"]
        self.state["cards"][0].update(error="GPU_IS_LOST", error_at="memory")
        self.write_state()
        c = wait_for(lambda: (lambda c: c if c["health"] != "healthy" else None)(self.card_of(self.gpus(), bad)),
                     what="the card to be suspect")
        self.assertEqual(c["health"], "suspect")
        self.assertIn("GPU_IS_LOST", c["health_error"])
        c = wait_for(lambda: (lambda c: c if c["health"] == "drained" else None)(self.card_of(self.gpus(), bad)),
                     what="the card to be drained")
        self.assertEqual((c["drained"], c["drained_by"]), (True, "health"))
        self.assertIn("GPU_IS_LOST", c["drain_reason"])
        events = self.d.show(victim)["events"]
        if victim == keep:
            # Requeued: back to pending (then it may start on another card: the MIG card has none).
            self.d.wait_state(victim, {"pending", "running"})
            wait_for(lambda: any("NodeFail: GPU 0 failed" in e["reason"] and "(requeued)" in e["reason"]
                                 for e in self.d.show(victim)["events"]), what="the NodeFail event")
        else:
            rec = self.d.wait_state(victim, "node_fail")
            self.assertIn("NodeFail: GPU 0 failed", rec["end_reason"])
            self.assertIn("GPU_IS_LOST", rec["end_reason"])
        self.assertEqual(self.d.job(survivor)["state"], "running")
        # No new work lands on the drained card.
        new = self.d.submit("--gpus", "1", "--", "sleep", "300")
        time.sleep(2)
        rec = self.d.job(new)
        self.assertTrue(rec["state"] == "pending" or rec["gpu_uuids"] != [bad], rec)

        # The card reads fine again and nothing is on it: back in service by itself.
        del self.state["cards"][0]["error"]
        self.write_state()
        c = wait_for(lambda: (lambda c: c if c["health"] == "healthy" else None)(self.card_of(self.gpus(), bad)),
                     timeout=30, what="the card to be healthy again")
        self.assertFalse(c["drained"])
        self.assertIn("healthy and empty again", self.d.read_log())

    def test_a_card_missing_from_enumeration_is_drained(self):
        del self.state["cards"][1]
        self.write_state()
        c = wait_for(lambda: (lambda c: c if c["health"] == "drained" else None)(
            self.card_of(self.gpus(), "GPU-fake-1")), what="the missing card to be drained")
        self.assertEqual(c["health_error"], "missing from enumeration")

    def test_uncorrected_ecc_errors_drain_the_card_and_an_xid_shows(self):
        self.state["cards"][1]["ecc_uncorrected"] = 3
        self.state["cards"][0]["xid"] = [13]
        self.write_state()
        c = wait_for(lambda: (lambda c: c if c["health"] == "drained" else None)(
            self.card_of(self.gpus(), "GPU-fake-1")), what="the ECC card to be drained")
        self.assertEqual(c["ecc_uncorrected"], 3)
        self.assertIn("uncorrected ECC", c["health_error"])
        self.assertEqual(self.card_of(self.gpus(), "GPU-fake-0")["health"], "healthy")  # Xid 13: the program's
        wait_for(lambda: "GPU 0 (GPU-fake-0): Xid 13" in self.d.read_log(), what="the Xid in the log")

    def test_a_hung_driver_does_not_block_the_daemon_and_drains_the_hung_card(self):
        job, _ = self.submit_holder("h.pid", "--gpus", "1")
        uuid = self.d.job(job)["gpu_uuids"][0]
        idx = int(uuid.rsplit("-", 1)[1])
        self.state["cards"][idx]["hang_ms"] = 10000  # nvmlDeviceGetMemoryInfo sleeps 10 s per call
        self.write_state()
        time.sleep(1.5)  # a sample is now stuck in the driver
        # Requests are answered while the driver hangs: the loop never waits for it. (Not a speed
        # target: a daemon blocked in the driver would answer only after the 10 s hang.)
        start = time.time()
        self.assertTrue(self.d.api({"op": "hello"})["ok"])
        self.d.rota("queue")
        self.assertLess(time.time() - start, 5)
        c = wait_for(lambda: (lambda c: c if c["health"] == "drained" else None)(self.card_of(self.gpus(), uuid)),
                     timeout=30, what="the hung card to be drained")
        self.assertIn("NVML", c["health_error"])
        rec = self.d.wait_state(job, "node_fail", timeout=30)
        self.assertIn(f"GPU {idx} failed", rec["end_reason"])
        # Only the card it hung on: the other whole card was never in error.
        other = self.card_of(self.gpus(), f"GPU-fake-{1 - idx}")
        self.assertEqual(other["health"], "healthy")
        del self.state["cards"][idx]["hang_ms"]
        self.write_state()
        wait_for(lambda: self.card_of(self.gpus(), uuid)["health"] == "healthy", timeout=40,
                 what="the card to come back once the driver answers")


class DrainTest(FakeNvmlTest):
    ADMIN = "root" if IS_ROOT else None

    def test_admin_drain_survives_restart_and_resume_waits_for_leftovers(self):
        running, _ = self.submit_holder("r.pid", "--gpus", "1")
        held = self.d.job(running)["gpu_uuids"][0]
        free = [u for u in ("GPU-fake-0", "GPU-fake-1") if u != held][0]
        free_idx = free.rsplit("-", 1)[1]
        if IS_ROOT:
            r = self.d.rota("drain", free_idx, "--reason", "fan", check=False)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("only admins", r.stderr)
        r = self.d.rota("drain", free_idx, "--reason", "fan noise, vendor coming", user=self.ADMIN)
        self.assertIn("drained", r.stdout)
        c = self.card_of(self.gpus(), free)
        self.assertEqual((c["drained"], c["drain_reason"]), (True, "fan noise, vendor coming"))
        self.assertEqual(c["drained_by"], pwd.getpwuid(0).pw_name if IS_ROOT else pwd.getpwuid(os.getuid()).pw_name)
        waiting = self.d.submit("--gpus", "1", "--", "sleep", "300")
        time.sleep(1.5)
        self.assertEqual(self.d.job(waiting)["state"], "pending")
        self.assertEqual(self.d.job(running)["state"], "running")  # a drain lets running jobs finish

        # Drains are on disk.
        self.d.stop()
        self.d.start()
        c = self.card_of(self.gpus(), free)
        self.assertEqual((c["drained"], c["drain_reason"]), (True, "fan noise, vendor coming"))
        self.assertEqual(self.d.job(waiting)["state"], "pending")

        # A process outside Rota on the card: resume is refused, naming it.
        outside = self.start_outside()
        self.state["cards"][int(free_idx)]["processes"] = [{"pid": outside, "used_mib": 100}]
        self.write_state()
        wait_for(lambda: self.card_of(self.gpus(), free)["processes"], what="the outside process to show")
        r = self.d.rota("resume", free_idx, user=self.ADMIN, check=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(f"pid {outside}", r.stderr)
        self.state["cards"][int(free_idx)]["processes"] = []
        self.write_state()
        wait_for(lambda: not self.card_of(self.gpus(), free)["processes"], what="the process to leave")
        self.d.rota("resume", free, user=self.ADMIN)  # by UUID this time
        self.assertEqual(self.d.wait_state(waiting, "running")["gpu_uuids"], [free])
        r = self.d.rota("resume", free_idx, user=self.ADMIN, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("is not drained", r.stderr)

    def test_drain_needs_a_known_gpu_and_a_reason(self):
        r = self.d.rota("drain", "7", "--reason", "x", user=self.ADMIN, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no GPU '7'", r.stderr)
        r = self.d.api({"op": "drain", "gpu": "0"})
        self.assertFalse(r["ok"])
        self.assertIn("reason", r["error"]["message"])
        # A MIG slice names its card.
        self.d.rota("drain", "MIG-fake-2-1", "--reason", "reconfiguring MIG", user=self.ADMIN)
        self.assertTrue(self.card_of(self.gpus(), "GPU-fake-2")["drained"])


class OutsideTest(FakeNvmlTest):
    """Processes no allocation covers: told once, the card kept from new work while they hold it."""

    def events(self, event):
        r = json.loads(self.d.rota("events", "--json", user="root" if IS_ROOT else None).stdout)["events"]
        return [e for e in r if e["kind"] == "gpu" and e["to"] == event]

    def put(self, card, *pids):
        self.state["cards"][card]["processes"] = [{"pid": p, "used_mib": 3276} for p in pids]
        self.write_state()

    def test_an_outside_process_is_recorded_once_and_keeps_its_card_from_new_work(self):
        outside = self.start_outside()
        me = pwd.getpwuid(os.getuid()).pw_name
        self.put(0, outside)
        wait_for(lambda: self.card_of(self.gpus(), "GPU-fake-0")["held_outside"], what="card 0 to be held outside")
        first = self.d.submit("--gpus", "1", "--", "sleep", "300")
        second = self.d.submit("--gpus", "1", "--", "sleep", "300")
        self.assertEqual(self.d.wait_state(first, "running")["gpu_uuids"], ["GPU-fake-1"])
        time.sleep(1.5)  # samples and passes go by: card 0 stays out of scheduling
        self.assertEqual(self.d.job(second)["state"], "pending")
        told = self.events("outside")
        self.assertEqual(len(told), 1, told)  # once per process, not once per sample
        self.assertEqual(told[0]["id"], 0)
        self.assertIn(f"pid {outside} ({me}) uses GPU 0 (3.2G) outside Rota", told[0]["reason"])
        self.assertIn("takes no new work", told[0]["reason"])
        self.assertNotIn("stopped in", told[0]["reason"])  # notify is the default action
        self.assertIn(f"pid {outside}", self.d.read_log())
        # It leaves: the card takes work again.
        self.put(0)
        self.assertEqual(self.d.wait_state(second, "running")["gpu_uuids"], ["GPU-fake-0"])
        self.assertFalse(self.card_of(self.gpus(), "GPU-fake-0")["held_outside"])
        self.assertIsNone(self.outside[0].poll())  # notify only: the process still runs

    def test_a_process_on_another_users_allocation_names_whose_card_it_is(self):
        job, pid = self.submit_holder("j.pid", "--gpus", "1")
        uuid = self.d.job(job)["gpu_uuids"][0]
        card = int(uuid.rsplit("-", 1)[1])
        outside = self.start_outside()
        self.put(card, pid, outside)
        told = wait_for(lambda: self.events("outside"), what="the outside process to be recorded")
        self.assertEqual(len(told), 1, told)  # the job's own process on its card is not outside
        owner = self.d.job(job)["user"]
        self.assertIn(f"pid {outside}", told[0]["reason"])
        self.assertIn(f"the card is {owner}'s job {job}'s", told[0]["reason"])


class OutsideStopTest(FakeNvmlTest):
    """outside_action = "stop": after the grace the process is stopped, root's never."""
    EXTRA_CONFIG = '[watch]\noutside_action = "stop"\noutside_grace = "2s"\n'

    def start_as(self, user):
        argv = ["sleep", "300"] if user is None else as_user(user, ["sleep", "300"], {})
        p = subprocess.Popen(argv)
        self.outside.append(p)
        return p

    def test_the_process_is_stopped_after_the_grace(self):
        # Running as root, the process belongs to an ordinary user (root's are never stopped).
        victim = self.start_as(DEFAULT_USER if IS_ROOT else None)
        self.state["cards"][0]["processes"] = [{"pid": victim.pid, "used_mib": 100}]
        self.write_state()
        told = wait_for(lambda: [e for e in json.loads(self.d.rota("events", "--json", user="root" if IS_ROOT else None)
                                                       .stdout)["events"] if e["to"] == "outside"],
                        what="the outside process to be recorded")
        self.assertIn("it is stopped in 2s unless it ends", told[0]["reason"])
        self.assertEqual(victim.wait(timeout=20), -signal.SIGTERM)
        # Not before the grace: timed from when rotad recorded it (whole seconds), not from when this
        # test read the record, which on a loaded machine can come a second or more later.
        self.assertGreaterEqual(time.time() - told[0]["time"], 1.5)
        events = json.loads(self.d.rota("events", "--json", user="root" if IS_ROOT else None).stdout)["events"]
        self.assertTrue([e for e in events if e["to"] == "outside_stopped" and f"pid {victim.pid}" in e["reason"]],
                        events)

    @unittest.skipUnless(IS_ROOT, "needs root to own a process as root")
    def test_roots_processes_are_never_stopped(self):
        mine = self.start_as(None)
        self.state["cards"][0]["processes"] = [{"pid": mine.pid, "used_mib": 100}]
        self.write_state()
        wait_for(lambda: self.card_of(self.gpus(), "GPU-fake-0")["held_outside"], what="card 0 to be held outside")
        time.sleep(4)  # twice the grace
        self.assertIsNone(mine.poll())


class MinimalLibraryTest(FakeNvmlTest):
    LIBRARY = MINIMAL

    def test_a_library_without_optional_functions_still_lists_the_cards(self):
        r = self.gpus()
        self.assertEqual([g["uuid"] for g in r["gpus"]], ["GPU-fake-0", "GPU-fake-1", "GPU-fake-2"])
        self.assertTrue(all(g["health"] == "healthy" for g in r["gpus"]))
        self.assertEqual(r["gpus"][0]["util"], -1)  # no utilisation function in the minimal build
        self.assertIn("without", r["source"])


class InventoryTest(FakeNvmlTest):
    def test_inventory_lists_cards_mig_and_storage(self):
        inv = json.loads(self.d.rota("inventory", "--json").stdout)
        self.assertEqual([g["index"] for g in inv["gpus"]], [0, 1, 2])
        self.assertEqual(inv["driver_version"], "550.54.15")
        self.assertEqual(inv["storage"], ["/tmp", "/no/such/disk"])
        self.assertEqual([m["profile"] for m in inv["gpus"][2]["mig"]], ["3g.40gb", "3g.40gb"])
        self.assertTrue(inv["gpus"][2]["mig_enabled"])
        md = self.d.rota("inventory", "--markdown").stdout
        self.assertIn("NVIDIA A100-SXM4-80GB", md)
        self.assertIn("550.54.15", md)
        self.assertIn("| /tmp", md)
        self.assertIn("/no/such/disk", md)


def width(text):
    """Terminal columns of text: East Asian wide and fullwidth characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


class SimulatedGpusTest(DaemonTest):
    """`rota gpus` on the simulated cards of `make run`: load comes from what jobs declare."""

    def sampled(self, predicate):
        return wait_for(lambda: (lambda r: r if predicate(r) else None)(json.loads(self.d.rota("gpus", "--json").stdout)),
                        what="a sample showing the job")

    def test_gpus_shows_load_and_who_holds_each_card(self):
        job = self.d.submit("--gpus", "1", "--tier", "thesis", "--", "sleep", "30",
                            env={"ROTA_SIM_GPU_MEM": "20G", "ROTA_SIM_GPU_UTIL": "80"})
        rec = self.d.wait_state(job, "running")
        uuid = rec["gpu_uuids"][0]
        reply = self.sampled(lambda r: any(g["uuid"] == uuid and g["memory_used"] == 20480 for g in r["gpus"]))
        card = [g for g in reply["gpus"] if g["uuid"] == uuid][0]
        self.assertEqual(card["util"], 80)
        self.assertEqual([(h["job_id"], h["user"], h["tier"], h["memory_used"]) for h in card["jobs"]],
                         [(job, rec["user"], "thesis", 20480)])
        # The simulated process is the job's (its shepherd's pid), attributed like a real one.
        self.assertEqual([(p["job_id"], p["outside"]) for p in card["processes"]], [(job, False)])
        others = [g for g in reply["gpus"] if g["uuid"] != uuid and not g["mig"]]
        self.assertTrue(others and all(g["jobs"] == [] and g["memory_used"] == 0 for g in others))
        table = self.d.rota("gpus").stdout
        line = [l for l in table.splitlines() if l.split()[:1] == [str(card["index"])]][0]
        self.assertRegex(line, rf"{rec['user']}/{job}\b.*\(20\.0G thesis")
        self.assertIn("20.0/80.0G", line)
        self.assertIn("3g.40gb", table)
        self.assertNotIn("\x1b[", table)  # not a terminal: no colour
        self.d.rota("cancel", str(job))

    @unittest.skipUnless(IS_ROOT, "needs root to create a user with a Chinese name")
    def test_chinese_names_keep_the_columns_aligned(self):
        user = "张伟测试"
        ensure_user(user)
        a = self.d.submit("--gpus", "1", "--name", "训练模型", "--", "sleep", "30", user=user,
                          env={"ROTA_SIM_GPU_MEM": "10G", "ROTA_SIM_GPU_UTIL": "50"})
        b = self.d.submit("--gpus", "1", "--", "sleep", "30", env={"ROTA_SIM_GPU_MEM": "5G"})
        for j in (a, b):
            self.d.wait_state(j, "running")
        self.sampled(lambda r: sum(g["memory_used"] > 0 for g in r["gpus"]) == 2)
        table = self.d.rota("gpus").stdout
        lines = [l for l in table.splitlines() if l.split()[:1] in (["0"], ["1"])]
        self.assertEqual(len(lines), 2, table)
        self.assertRegex(table, rf"{user}/{a}\b.*\(10\.0G")  # whole characters, nothing cut mid-name
        # The holders column starts at the same display column on both lines.
        other = self.d.job(b)["user"]
        starts = [width(l[:l.index(f"{user}/{a}" if user in l else f"{other}/{b}")]) for l in lines]
        self.assertEqual(starts[0], starts[1], table)


if __name__ == "__main__":
    unittest.main()
