"""The Slurm engine on a real Slurm (slurm_cluster.py), continued from test_slurm.py: Slurm's
EpilogSlurmctld poking rotad, and two nodes (the second in its own network and UTS namespace)."""
import os
import shutil
import tempfile
import time
import unittest

from harness import ROTA, DaemonTest, ensure_user, wait_for
from slurm_cluster import SlurmCluster, second_node_missing, slurm_config, slurm_missing

WHY_NOT = slurm_missing()
WHY_NOT_TWO = WHY_NOT or second_node_missing()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class PokeTest(DaemonTest):
    """Slurm's EpilogSlurmctld runs `rota poke`: rotad sees an end at once, not at its next poll."""

    def setUp(self):
        self.hook_dir = tempfile.mkdtemp(prefix="rota-poke-")
        os.chmod(self.hook_dir, 0o755)
        self.addCleanup(shutil.rmtree, self.hook_dir, True)
        hook = os.path.join(self.hook_dir, "epilog")
        self.socket_file = os.path.join(self.hook_dir, "socket")
        with open(hook, "w") as f:
            f.write(f"#!/bin/sh\nexec {ROTA} poke --socket \"$(cat {self.socket_file})\"\n")
        os.chmod(hook, 0o755)
        self.cluster = SlurmCluster(epilog_ctld=hook).start()
        self.addCleanup(self.cluster.stop)
        # A poll of a minute: only the poke can make the ends below seen within seconds.
        self.CONFIG = slurm_config(self.cluster).replace("poll_interval = 0.2", "poll_interval = 60")
        super().setUp()
        with open(self.socket_file, "w") as f:
            f.write(self.d.socket)
        os.chmod(os.path.dirname(self.d.socket), 0o755)

    def test_the_epilog_poke_makes_ends_seen_at_once(self):
        first = self.d.submit("--gpus", "4", "--", "true")
        self.d.wait_state(first, "completed", timeout=20)
        second = self.d.submit("--gpus", "4", "--", "true")
        done = self.d.wait_state(second, "completed", timeout=20)
        self.assertLess(done["end_time"] - self.d.job(first)["end_time"], 20)

    def test_anyone_may_poke_and_a_loop_of_pokes_is_not_a_storm(self):
        for _ in range(50):
            self.d.rota("poke")
        ensure_user("rota-it-other")
        self.assertEqual(self.d.rota("poke", user="rota-it-other").returncode, 0)
        self.assertIn("Engine: Slurm", self.d.rota("status").stdout)


@unittest.skipIf(WHY_NOT_TWO, WHY_NOT_TWO)
class TwoNodesTest(DaemonTest):
    """Two nodes of 2 GPUs: the second in its own network and UTS namespace (slurm_cluster.py)."""

    def setUp(self):
        self.cluster = SlurmCluster(gpus=2, second_node="rota-n2").start()
        self.addCleanup(self.cluster.stop)
        self.CONFIG = slurm_config(self.cluster)
        super().setUp()

    def node_of(self, job):
        """The node Slurm runs Rota job `job` on (squeue %N)."""
        out = self.cluster.run("squeue", "-h", "-n", f"rota-{job}", "-o", "%N").stdout.split()
        return out[0] if out else ""

    def test_jobs_are_placed_on_both_nodes_each_on_one(self):
        gpus = self.d.api({"op": "gpus"})["gpus"]
        self.assertEqual([g["uuid"] for g in gpus],
                         ["SLURM-rota-n1-0", "SLURM-rota-n1-1", "SLURM-rota-n2-0", "SLURM-rota-n2-1"])
        script = "echo $(hostname) $CUDA_VISIBLE_DEVICES; sleep 300"
        a = self.d.submit("--gpus", "2", "--", "sh", "-c", script)
        b = self.d.submit("--gpus", "2", "--", "sh", "-c", script)
        wait_for(lambda: self.node_of(a) and self.node_of(b), what="both jobs running in Slurm")
        self.assertEqual({self.node_of(a), self.node_of(b)}, {"rota-n1", "rota-n2"})
        # Rota's record agrees with where Slurm runs each job.
        for job in (a, b):
            uuids = self.d.job(job)["gpu_uuids"]
            self.assertEqual({u.rsplit("-", 1)[0] for u in uuids}, {"SLURM-" + self.node_of(job)}, uuids)
        # A third 2-GPU job waits: no node has two free GPUs (and a job is never split).
        c = self.d.submit("--gpus", "2", "--", "true")
        time.sleep(1.5)
        self.assertEqual(self.d.job(c)["state"], "pending")
        self.d.rota("cancel", str(a))
        self.d.wait_state(c, "completed", timeout=30)
        wait_for(lambda: os.path.exists(self.path(f"rota-{b}.out")) and self.read(f"rota-{b}.out"), what="b's output")
        self.assertEqual(self.read(f"rota-{b}.out").split()[1], "0,1")

    def test_a_node_that_fails_under_a_job_requeues_it_elsewhere(self):
        # Both GPUs of the first node taken, so the requeue-able job goes to the second.
        blocker = self.d.submit("--gpus", "2", "--", "sleep", "300")
        wait_for(lambda: self.node_of(blocker), what="the blocker running")
        job = self.d.submit("--gpus", "1", "--requeue", "--", "sh", "-c", "echo $(hostname) >> where; sleep 300")
        wait_for(lambda: self.node_of(job) == self.cluster.second, what="the job on the second node")
        self.cluster.kill_second_slurmd()
        # Slurm declares the node down after SlurmdTimeout (20 s) and ends the job NODE_FAIL;
        # Rota requeues it (it asked) and, the second node's cards out of service, waits for room.
        wait_for(lambda: any(e["to"] == "pending" and "NodeFail" in e["reason"] for e in self.d.show(job)["events"]),
                 timeout=90, what="the job requeued after its node failed")
        # A restart now finds its earlier run, ended NODE_FAIL, still in Slurm's queue under the
        # same tag: that is not a launch of the pending job, which stays pending.
        self.d.kill9()
        self.d.start()
        self.assertEqual(self.d.job(job)["state"], "pending")
        reasons = [e["reason"] for e in self.d.show(job)["events"]]
        self.assertFalse([r for r in reasons if "after a restart" in r], reasons)
        gpus = {g["uuid"]: g for g in self.d.api({"op": "gpus"})["gpus"]}
        self.assertTrue(gpus["SLURM-rota-n2-0"]["drained"])
        self.assertIn("Slurm node rota-n2", gpus["SLURM-rota-n2-0"]["drain_reason"])
        self.d.rota("cancel", str(blocker))
        self.d.wait_state(job, "running", timeout=30)
        wait_for(lambda: self.node_of(job) == self.cluster.node, what="the job running on the first node")


if __name__ == "__main__":
    unittest.main()
