"""Memory shares, MIG slices and Rota's own choice of cards on a real Slurm whose GPUs are each
their own gres type with shards (slurm_cluster.py's `shards`): `--gpus N` goes to exactly the
cards Rota chose, `--gpu-mem` to its card's shards (gres/shard), `--mig` to one slice of its MIG
gres type (`mig`). Real rotad and rota processes; a cluster per
test. The untyped cluster, where Slurm chooses and shares are refused: test_slurm.py."""
import json
import os
import time
import unittest

from harness import DEFAULT_USER, DaemonTest, wait_for
from slurm_cluster import SlurmCluster, slurm_config, slurm_missing

WHY_NOT = slurm_missing()
SHARDS = 4  # of each 80 GiB card: 20 GiB a shard


@unittest.skipIf(WHY_NOT, WHY_NOT)
class SlurmSharesTest(DaemonTest):
    def setUp(self):
        self.cluster = SlurmCluster(shards=SHARDS).start()
        self.addCleanup(self.cluster.stop)
        self.CONFIG = slurm_config(self.cluster)
        super().setUp()

    def output(self, job):
        """The job's output once it has written its first line."""
        path = self.path(f"rota-{job}.out")
        return wait_for(lambda: os.path.exists(path) and "\n" in self.read(f"rota-{job}.out")
                        and self.read(f"rota-{job}.out"), what=f"job {job}'s output")

    def slurm_gres(self, job):
        """What Slurm holds for Rota job `job` (squeue %b: "gres:shard:card0:1")."""
        entries = self.cluster.jobs().get(f"rota-{job}", [])
        self.assertEqual(len(entries), 1, entries)
        return self.cluster.run("squeue", "-h", "-o", "%b", "-j", entries[0][2]).stdout.strip()

    def test_shares_are_their_cards_shards_and_whole_gpus_go_where_rota_put_them(self):
        report = "echo cards=$CUDA_VISIBLE_DEVICES shards=$SLURM_SHARDS_ON_NODE; sleep 300"
        a = self.d.submit("--gpu-mem", "20G", "--", "sh", "-c", report)
        # 30 GiB is two of the card's 20 GiB shares: what Slurm gives, and what Rota counts.
        b = self.d.submit("--gpu-mem", "30G", "--", "sh", "-c", report)
        self.assertEqual(self.d.job(b)["request"], {"kind": "gpu_mem", "memory": 40960})
        for job in (a, b):
            self.d.wait_state(job, "running")
        card_a, card_b = (self.d.job(j)["gpu_uuids"] for j in (a, b))
        self.assertEqual(card_a, card_b)  # Rota packs shares on a card already shared
        index = int(card_a[0].rsplit("-", 1)[1])
        self.assertEqual(self.output(a).split(), [f"cards={index}", "shards=1"])
        self.assertEqual(self.output(b).split(), [f"cards={index}", "shards=2"])
        self.assertEqual(self.slurm_gres(a), f"gres:shard:card{index}:1")
        self.assertEqual(self.slurm_gres(b), f"gres:shard:card{index}:2")

        # The three other cards whole, beside the shared one: Slurm gives exactly those.
        whole = self.d.submit("--gpus", "3", "--", "sh", "-c", report)
        self.d.wait_state(whole, "running")
        others = sorted(set(range(4)) - {index})
        self.assertEqual(self.output(whole).split()[0], "cards=" + ",".join(map(str, others)))
        self.assertEqual(sorted(self.d.job(whole)["gpu_uuids"]),
                         [f"SLURM-{self.cluster.node}-{i}" for i in others])

        # A fifth share of 20 GiB fits the shared card's last share; a 40 GiB one waits in Rota,
        # not in Slurm, and starts once the card has room.
        c = self.d.submit("--gpu-mem", "20G", "--", "sh", "-c", report)
        self.d.wait_state(c, "running")
        self.assertEqual(self.output(c).split(), [f"cards={index}", "shards=1"])
        waiting = self.d.submit("--gpu-mem", "40G", "--", "sh", "-c", report)
        time.sleep(1.5)
        self.assertEqual(self.d.job(waiting)["state"], "pending")
        self.assertEqual(self.cluster.jobs().get(f"rota-{waiting}", []), [])
        self.d.rota("cancel", str(b))
        self.d.wait_state(waiting, "running", timeout=30)
        self.assertEqual(self.output(waiting).split(), [f"cards={index}", "shards=2"])
        self.assertIn(f"SLURM-{self.cluster.node}-{index}", self.d.rota("show", str(waiting)).stdout)

    def test_odd_sizes_are_whole_shares_or_refused(self):
        tiny = self.d.submit("--gpu-mem", "1M", "--", "sh", "-c", "echo shards=$SLURM_SHARDS_ON_NODE")
        self.assertEqual(self.d.job(tiny)["request"]["memory"], 20480)  # one share: the least Slurm gives
        whole = self.d.submit("--gpu-mem", "80G", "--", "sh", "-c", "echo shards=$SLURM_SHARDS_ON_NODE")
        self.assertEqual(self.d.job(whole)["request"]["memory"], 81920)
        for job, shards in ((tiny, 1), (whole, SHARDS)):
            self.d.wait_state(job, "completed", timeout=30)
            self.assertEqual(self.read(f"rota-{job}.out"), f"shards={shards}\n")
        r = self.d.rota("submit", "--gpu-mem", "81G", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("can never run here", r.stderr)
        self.assertEqual(self.d.rota("queue", "--all", "--json").stdout.strip(), "[]")  # nothing queued

    def test_a_session_with_a_share_runs_on_its_cards_shards(self):
        r = self.d.rota("run", "--gpu-mem", "10G", "--", "sh", "-c",
                        "echo cards=$CUDA_VISIBLE_DEVICES shards=$SLURM_SHARDS_ON_NODE; id -un", check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.split()
        self.assertRegex(lines[0], r"^cards=[0-3]$")
        self.assertEqual(lines[1:], ["shards=1", DEFAULT_USER])

    def test_a_card_drained_in_rota_is_one_slurm_does_not_give(self):
        # Untyped, Slurm gives its lowest free GPU whatever Rota chose (test_slurm.py's
        # test_the_record_follows_the_gpus_slurm_gave); named, it gives Rota's choice.
        self.d.rota("drain", "0", "--reason", "fan noise", user="root")
        job = self.d.submit("--gpus", "1", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES; sleep 300")
        self.d.wait_state(job, "running")
        chosen = self.d.job(job)["gpu_uuids"]
        self.assertNotEqual(chosen, [f"SLURM-{self.cluster.node}-0"])
        index = chosen[0].rsplit("-", 1)[1]
        self.assertEqual(self.output(job), index + "\n")
        self.assertEqual(self.slurm_gres(job), f"gres:gpu:card{index}:1")
        time.sleep(1)  # Slurm's own word on its cards (scontrol -d) does not move the record
        self.assertEqual(self.d.job(job)["gpu_uuids"], chosen)

    def test_a_job_outside_rota_holds_the_cards_slurm_gave_it(self):
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:2", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 300", user=DEFAULT_USER).stdout.strip()
        held = wait_for(lambda: [g["uuid"] for g in self.d.api({"op": "gpus"})["gpus"] if g["held_by"]]
                        if sum(len(g["held_by"]) for g in self.d.api({"op": "gpus"})["gpus"]) == 2 else None,
                        what="the two cards named with their Slurm job")
        job = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES; sleep 300")
        self.d.wait_state(job, "running")
        self.assertEqual(set(self.d.job(job)["gpu_uuids"]) & set(held), set())
        third = self.d.submit("--gpus", "1", "--", "true")
        time.sleep(1.5)
        self.assertEqual(self.d.job(third)["state"], "pending")
        self.cluster.run("scancel", outside)
        self.d.wait_state(third, "completed", timeout=30)


    def test_shards_held_outside_rota_hold_their_card(self):
        # A user's plain sbatch of two shards: Slurm gives no whole GPU on that card while they are
        # held, so Rota counts the card held (named with the job), not free for a whole-GPU job.
        outside = self.cluster.run("sbatch", "--parsable", "--gres=shard:2", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 300", user=DEFAULT_USER).stdout.strip()
        held = wait_for(lambda: [g["uuid"] for g in self.d.api({"op": "gpus"})["gpus"] if g["held_by"]] or None,
                        what="the card whose shards the job holds, named")
        self.assertEqual(len(held), 1, held)
        self.assertIn(f"{DEFAULT_USER}/slurm:{outside}(outside Rota)", self.d.rota("gpus").stdout)
        job = self.d.submit("--gpus", "3", "--", "true")
        self.d.wait_state(job, "completed", timeout=30)
        self.assertNotIn(held[0], self.d.job(job)["gpu_uuids"])
        four = self.d.submit("--gpus", "4", "--", "true")
        time.sleep(1.5)
        self.assertEqual(self.d.job(four)["state"], "pending")
        self.cluster.run("scancel", outside)
        self.d.wait_state(four, "completed", timeout=30)

    def test_shards_held_outside_rota_are_charged_as_their_part_of_the_card(self):
        # Two of a card's four shards for 6 s: half a GPU, so 3 GPU-seconds, counted for its owner
        # while it runs and charged once it ends, as whole GPUs held outside Rota are (test_slurm.py).
        start = time.time()
        outside = self.cluster.run("sbatch", "--parsable", "--gres=shard:2", "-o", "/dev/null", "-D", "/tmp",
                                   "--wrap", "sleep 6", user=DEFAULT_USER).stdout.strip()

        def mine():
            return next((u for u in json.loads(self.d.rota("usage", "--json").stdout)["users"]
                         if u["name"] == DEFAULT_USER), None)
        wait_for(lambda: (lambda u: u and u["week_gpu_hours"] > 0)(mine()), timeout=5,
                 what=f"Slurm job {outside} counted while it runs")
        self.assertEqual(self.cluster.run("squeue", "-h", "-j", outside, "-o", "%T").stdout.strip(), "RUNNING")
        wait_for(lambda: not any(g["held_by"] for g in self.d.api({"op": "gpus"})["gpus"]), timeout=60,
                 what=f"Slurm job {outside} seen ended")
        row = mine()
        seconds = row["outside_gpu_hours"] * 3600
        self.assertGreaterEqual(seconds, 0.5 * 5, row)  # Slurm's seconds are whole
        self.assertLessEqual(seconds, 0.5 * (time.time() - start + 1), row)
        self.assertAlmostEqual(row["week_gpu_hours"], row["outside_gpu_hours"], places=6)


@unittest.skipIf(WHY_NOT, WHY_NOT)
class SlurmNamedCardsWithoutShardsTest(DaemonTest):
    """Cards of their own types but no shards: whole GPUs by name, shares refused at submission."""

    def setUp(self):
        self.cluster = SlurmCluster(shards=0).start()
        self.addCleanup(self.cluster.stop)
        self.CONFIG = slurm_config(self.cluster)
        super().setUp()

    def test_a_share_is_refused_and_whole_gpus_run_on_the_cards_rota_chose(self):
        for verb in ("submit", "run"):
            r = self.d.rota(verb, "--gpu-mem", "20G", "--", "true", check=False)
            self.assertNotEqual(r.returncode, 0, verb)
            self.assertIn("memory shares (--gpu-mem) need Slurm to share every GPU", r.stderr)
            self.assertIn(f"GPU 0 on {self.cluster.node} has no shards", r.stderr)
        job = self.d.submit("--gpus", "2", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES")
        self.d.wait_state(job, "completed")
        cards = sorted(int(u.rsplit("-", 1)[1]) for u in self.d.job(job)["gpu_uuids"])
        self.assertEqual(self.read(f"rota-{job}.out"), ",".join(map(str, cards)) + "\n")


@unittest.skipIf(WHY_NOT, WHY_NOT)
class SlurmMigTest(DaemonTest):
    """Four whole cards of their own types with shards and two MIG slices of type a100_1g.10gb,
    as NVML's autodetection names them: a slice job asks Slurm for one of the type."""

    def setUp(self):
        self.cluster = SlurmCluster(shards=SHARDS, mig=2).start()
        self.addCleanup(self.cluster.stop)
        self.CONFIG = slurm_config(self.cluster)
        super().setUp()

    def test_slices_run_as_their_gres_type_beside_whole_cards(self):
        gpus = {g["uuid"]: g for g in self.d.api({"op": "gpus"})["gpus"]}
        slices = gpus[f"SLURM-{self.cluster.node}-a100_1g.10gb"]
        self.assertEqual([m["profile"] for m in slices["mig"]], ["1g.10gb", "1g.10gb"])
        self.assertEqual(len(gpus), 5)

        report = "echo $CUDA_VISIBLE_DEVICES; sleep 300"
        first, second = (self.d.submit("--mig", "1g.10gb", "--", "sh", "-c", report) for _ in range(2))
        whole = self.d.submit("--gpus", "4", "--", "sh", "-c", report)
        for job in (first, second, whole):
            self.d.wait_state(job, "running")
        wait_for(lambda: all(os.path.exists(self.path(f"rota-{j}.out")) and self.read(f"rota-{j}.out")
                             for j in (first, second, whole)), what="the jobs' output")
        # Slurm numbers the slices after the node's four cards; the whole job got those four.
        self.assertEqual({self.read(f"rota-{j}.out") for j in (first, second)}, {"4\n", "5\n"})
        self.assertEqual(self.read(f"rota-{whole}.out"), "0,1,2,3\n")
        entries = self.cluster.jobs()[f"rota-{first}"]
        gres = self.cluster.run("squeue", "-h", "-o", "%b", "-j", entries[0][2]).stdout.strip()
        self.assertEqual(gres, "gres:gpu:a100_1g.10gb:1")

        third = self.d.submit("--mig", "1g.10gb", "--", "sh", "-c", report)
        time.sleep(1.5)
        self.assertEqual(self.d.job(third)["state"], "pending")  # in Rota, not waiting in Slurm
        self.assertEqual(self.cluster.jobs().get(f"rota-{third}", []), [])
        self.d.rota("cancel", str(first))
        self.d.wait_state(third, "running", timeout=30)

        r = self.d.rota("submit", "--mig", "3g.40gb", "--", "true", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("can never run here", r.stderr)
        self.assertIn("1g.10gb", r.stderr)  # what the cards offer

    def test_a_slice_held_outside_rota_takes_no_rota_job_and_is_charged_as_a_slice(self):
        # A user's plain sbatch of one slice: Slurm counts it among the type's slices in use, so Rota
        # holds one of its two slices (the last), starts one slice job, not two, and charges the
        # outside run as a slice job of Rota's is charged (10 GiB of an 80 GiB card: 1/8 GPU).
        start = time.time()
        outside = self.cluster.run("sbatch", "--parsable", "--gres=gpu:a100_1g.10gb:1", "-o", "/dev/null",
                                   "-D", "/tmp", "--wrap", "sleep 8", user=DEFAULT_USER).stdout.strip()
        slices_card = f"SLURM-{self.cluster.node}-a100_1g.10gb"

        def held():
            card = next(g for g in self.d.api({"op": "gpus"})["gpus"] if g["uuid"] == slices_card)
            return [m["held_outside"] for m in card["mig"]]
        wait_for(lambda: held() == [False, True], what=f"a slice held by Slurm job {outside}")

        def mine():
            return next((u for u in json.loads(self.d.rota("usage", "--json").stdout)["users"]
                         if u["name"] == DEFAULT_USER), None)
        wait_for(lambda: (lambda u: u and u["week_gpu_hours"] > 0)(mine()), timeout=5,
                 what=f"Slurm job {outside} counted while it runs")
        first, second = (self.d.submit("--mig", "1g.10gb", "--", "sleep", "30") for _ in range(2))
        self.d.wait_state(first, "running")
        time.sleep(1.5)
        self.assertEqual(self.d.job(second)["state"], "pending")  # in Rota, not waiting in Slurm
        self.assertEqual(self.cluster.jobs().get(f"rota-{second}", []), [])
        self.d.wait_state(second, "running", timeout=30)  # once the outside job ended
        ended = time.time()
        row = mine()
        seconds = row["outside_gpu_hours"] * 3600
        self.assertGreaterEqual(seconds, 0.125 * 7, row)  # Slurm's seconds are whole
        self.assertLessEqual(seconds, 0.125 * (ended - start + 1), row)
        for job in (first, second):
            self.d.rota("cancel", str(job))

    def test_a_restart_keeps_slices_and_shares_where_rota_put_them(self):
        # Re-adopted after kill -9, a slice's and a share's records stay as placed: Slurm's index
        # of a slice names no card of Rota's, and a share's card is the one it named.
        run = f"sleep 4; echo ran >> {self.d.dir}/ran-$ROTA_JOB_ID"
        slice_job = self.d.submit("--mig", "1g.10gb", "--", "sh", "-c", run)
        share = self.d.submit("--gpu-mem", "20G", "--", "sh", "-c", run)
        for job in (slice_job, share):
            self.d.wait_state(job, "running")
        placed = {j: self.d.job(j)["gpu_uuids"] for j in (slice_job, share)}
        self.d.kill9()
        time.sleep(0.5)
        self.d.start()
        time.sleep(1)  # a read of the queue, and of the jobs' GPUs if they were asked
        for job in (slice_job, share):
            self.assertEqual(self.d.job(job)["gpu_uuids"], placed[job], job)
        # Not asked back at all: Slurm's answer for a slice names no card of Rota's.
        self.assertNotIn("which GPUs Slurm job", self.d.read_log())
        for job in (slice_job, share):
            self.d.wait_state(job, "completed", timeout=30)
            with open(os.path.join(self.d.dir, f"ran-{job}")) as f:
                self.assertEqual(f.read(), "ran\n", job)
            self.assertEqual(self.d.job(job)["gpu_uuids"], placed[job], job)


if __name__ == "__main__":
    unittest.main()
