"""The Slurm engine on a real Slurm (slurm_cluster.py), continued from test_slurm.py: Slurm's
EpilogSlurmctld poking rotad, slurmd's Epilog poking it and waiting, node agents posting their GPUs' readings, and two nodes (the second
in its own network and UTS namespace)."""
import os
import shutil
import tempfile
import time
import unittest

import json
import signal
import subprocess
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from harness import BIN, DEFAULT_USER, ROTA, ROTAD, DaemonTest, ensure_user, wait_for
from http_client import free_port
from slurm_cluster import SlurmCluster, second_node_missing, slurm_config, slurm_missing

WHY_NOT = slurm_missing()
WHY_NOT_TWO = WHY_NOT or second_node_missing()


def logged_lines(path):
    """The lines an Epilog wrote to `path`, each split into words ([] before it wrote any)."""
    try:
        with open(path) as f:
            return [line.split() for line in f]
    except FileNotFoundError:
        return []


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


@unittest.skipIf(WHY_NOT, WHY_NOT)
class NodeEpilogPokeTest(DaemonTest):
    """slurmd's Epilog runs `rota poke --wait` on the node: Slurm waits for it before it lets the
    job go and schedules again, so the job Rota starts on the freed GPUs must be in Slurm's queue
    by the time the poke returns (then Slurm starts it in the cycle the end begins)."""

    def setUp(self):
        self.hook_dir = tempfile.mkdtemp(prefix="rota-epilog-")
        os.chmod(self.hook_dir, 0o755)
        self.addCleanup(shutil.rmtree, self.hook_dir, True)
        hook = os.path.join(self.hook_dir, "epilog")
        self.socket_file = os.path.join(self.hook_dir, "socket")
        self.log = os.path.join(self.hook_dir, "log")
        self.cluster = SlurmCluster(epilog=hook)
        # What the queue lists the moment the poke has returned: every job's name.
        with open(hook, "w") as f:
            f.write(f"""#!/bin/sh
{self.poke_command()}
rc=$?
names=$(SLURM_CONF={self.cluster.conf} squeue -h -a -t all -o %j | tr '\\n' ' ')
echo "$SLURM_JOB_ID rc=$rc $names" >> {self.log}
exit 0
""")
        os.chmod(hook, 0o755)
        self.cluster.start()
        self.addCleanup(self.cluster.stop)
        # A poll of a minute: only the poke can make the end below seen within seconds.
        self.CONFIG = slurm_config(self.cluster, extra=self.extra_config()).replace(
            "poll_interval = 0.2", "poll_interval = 60") + self.web_config()
        super().setUp()
        with open(self.socket_file, "w") as f:
            f.write(self.d.socket)
        os.chmod(os.path.dirname(self.d.socket), 0o755)

    def poke_command(self):
        return f'{ROTA} poke --wait --socket "$(cat {self.socket_file})"'

    def extra_config(self):
        return ""

    def web_config(self):
        return ""

    def epilog_lines(self):
        return logged_lines(self.log)

    def test_the_waiting_poke_returns_once_the_next_job_is_in_slurm(self):
        first = self.d.submit("--gpus", "4", "--", "sleep", "1")
        second = self.d.submit("--gpus", "4", "--", "true")  # waits in Rota: all 4 GPUs are taken
        self.d.wait_state(first, "running", timeout=20)
        self.assertEqual(self.d.job(second)["state"], "pending")
        self.d.wait_state(second, "completed", timeout=20)
        first_slurm = self.d.job(first)["engine_job"].split()[-1]
        wait_for(lambda: len(self.epilog_lines()) >= 2, what="both jobs' epilogs")
        lines = {line[0]: line[1:] for line in self.epilog_lines()}
        self.assertEqual(lines[first_slurm][0], "rc=0")
        self.assertIn(f"rota-{second}", lines[first_slurm][1:])
        # The second job's own epilog: nothing was waiting, its poke returned all the same.
        self.assertEqual(sorted(line[1] for line in self.epilog_lines()), ["rc=0", "rc=0"])

    def test_a_waiting_poke_is_answered_with_nothing_to_wait_for_and_refuses_a_bad_wait(self):
        self.assertEqual(self.d.rota("poke", "--wait").returncode, 0)
        self.assertEqual(self.d.api({"op": "poke", "wait": True, "tag": 7}), {"ok": True, "v": 1, "tag": 7})
        reply = self.d.api({"op": "poke", "wait": "yes"})
        self.assertFalse(reply["ok"])
        self.assertIn('"wait" must be true or false', reply["error"]["message"])

    def test_a_flood_of_waiting_pokes_is_all_answered(self):
        """150 waiting pokes at once from one user: each is answered, ok (past 64 waiting, at
        once) or, where they pile up past the user's 64 connections, with the limit's error;
        nothing hangs, and rotad still pokes and runs jobs."""
        def poke(_):
            try:
                return self.d.api({"op": "poke", "wait": True})
            except OSError as e:  # refused at the connection limit before a reply could be read
                return {"ok": False, "error": {"message": str(e)}}
        with ThreadPoolExecutor(max_workers=150) as pool:
            replies = list(pool.map(poke, range(150)))
        self.assertEqual(len(replies), 150)
        self.assertTrue(all(r is None or "ok" in r for r in replies), replies[:3])
        self.assertGreaterEqual(sum(1 for r in replies if r and r["ok"]), 64)
        self.assertEqual(self.d.rota("poke", "--wait").returncode, 0)
        job = self.d.submit("--gpus", "1", "--", "true")
        self.d.wait_state(job, "completed", timeout=20)


@unittest.skipIf(WHY_NOT, WHY_NOT)
class NodeAgentPokeTest(NodeEpilogPokeTest):
    """The same from a node that cannot reach rotad's socket: its Epilog runs `rotad --agent URL
    --poke`, which waits on the head's POST /agent/poke with the node's token."""
    TOKEN = "token-of-the-first-node-0123456789"

    def setUp(self):
        self.port = free_port()
        self.token_dir = tempfile.mkdtemp(prefix="rota-agent-poke-")
        self.addCleanup(shutil.rmtree, self.token_dir, True)
        os.makedirs(os.path.join(self.token_dir, "tokens"))
        for name, text in (("tokens/rota-n1.token", self.TOKEN), ("agent.token", self.TOKEN),
                           ("wrong.token", "not-any-nodes-token-0123456789")):
            path = os.path.join(self.token_dir, name)
            with open(path, "w") as f:
                f.write(text + "\n")
            os.chmod(path, 0o600)
        super().setUp()

    def poke_command(self, token="agent.token"):
        return f"{ROTAD} --agent http://127.0.0.1:{self.port} --token-file {self.token_dir}/{token} --poke"

    def extra_config(self):
        return f'agent_tokens = "{self.token_dir}/tokens"\n'

    def web_config(self):
        return f'[web]\nlisten = "127.0.0.1:{self.port}"\n'

    def test_a_waiting_poke_is_answered_with_nothing_to_wait_for_and_refuses_a_bad_wait(self):
        ok = subprocess.run(self.poke_command().split(), capture_output=True, text=True, timeout=30)
        self.assertEqual((ok.returncode, ok.stderr), (0, ""))
        wrong = subprocess.run(self.poke_command("wrong.token").split(), capture_output=True, text=True, timeout=30)
        self.assertEqual(wrong.returncode, 1)
        self.assertIn("not a node agent's token", wrong.stderr)
        bare = subprocess.run([ROTAD, "--poke"], capture_output=True, text=True, timeout=30)
        self.assertEqual(bare.returncode, 2)
        self.assertIn("--poke needs --agent URL", bare.stderr)


FAKE_NVML = os.path.join(BIN, "libnvidia-ml-fake.so")


def fake_card(i, util):
    return {"uuid": f"GPU-node-{i}", "name": "NVIDIA A100-SXM4-80GB", "pci": f"00000000:{0x3B + i:02X}:00.0",
            "memory_total_mib": 81920, "memory_used_mib": 1000 * i, "util_gpu": util, "util_memory": 0,
            "temperature": 40 + i, "power_mw": 60000, "processes": []}


class AgentProcess:
    """A node agent (`rotad --agent`) run by a test, with the test's files in self.dir: its tokens,
    its configuration (agent.toml), the fake library's cards (nvml.json) and its log."""

    def write(self, name, text, mode=0o600):
        path = os.path.join(self.dir, name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.chmod(path + ".tmp", mode)
        os.replace(path + ".tmp", path)

    def run_agent(self, url, node, token_file, prefix=()):
        self.agent_log = open(os.path.join(self.dir, "agent.log"), "a")
        self.agent = subprocess.Popen(
            [*prefix, ROTAD, "--agent", url, "--node", node, "--token-file", token_file, "--interval", "0.3",
             "-c", os.path.join(self.dir, "agent.toml")],
            stdout=self.agent_log, stderr=subprocess.STDOUT,
            env=dict(os.environ, FAKE_NVML_STATE=os.path.join(self.dir, "nvml.json")))

    def stop_agent(self):
        if self.agent and self.agent.poll() is None:
            self.agent.send_signal(signal.SIGTERM)
            self.assertEqual(self.agent.wait(timeout=10), 0)
        if self.agent:
            self.agent_log.close()
            self.agent = None

    def agent_said(self):
        with open(os.path.join(self.dir, "agent.log")) as f:
            return f.read()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class AgentTest(AgentProcess, DaemonTest):
    """`rotad --agent` on a compute node (here run beside the head: the token, not the address, says
    which node it is) reads its GPUs through NVML (the fake library) and posts them to the head."""
    TOKEN = "token-of-the-first-node-0123456789"
    OTHER_TOKEN = "token-of-another-node-0123456789"

    def setUp(self):
        self.cluster = SlurmCluster().start()
        self.addCleanup(self.cluster.stop)
        self.dir = tempfile.mkdtemp(prefix="rota-agent-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        os.makedirs(os.path.join(self.dir, "tokens"))
        for name, token in ((self.cluster.node, self.TOKEN), ("rota-n9", self.OTHER_TOKEN)):
            self.write(f"tokens/{name}.token", token + "\n")
        self.write("agent.token", self.TOKEN)
        self.write("agent.toml", f'[gpus]\nsource = "nvml"\nnvml_library = "{FAKE_NVML}"\nnvml_timeout = "1s"\n')
        self.set_nvml([fake_card(i, util) for i, util in enumerate((37, 0, 0, 5))])
        self.port = free_port()
        self.CONFIG = slurm_config(
            self.cluster, extra=f'agent_tokens = "{self.dir}/tokens"\nagent_stale_after = "2s"\n'
        ) + f'[web]\nlisten = "127.0.0.1:{self.port}"\n[watch]\nidle_after = "3s"\nact_after = "6s"\naction = "notify"\n' \
            'outside_action = "stop"\noutside_grace = "1s"\n'
        super().setUp()
        self.agent = None
        self.addCleanup(self.stop_agent)
        self.processes = []
        self.addCleanup(self.stop_processes)

    def stop_processes(self):
        # runuser's child first: killed alone, runuser leaves it running (sleep 300), and ctest
        # waited for it, which held the file's ctest entry 200 s after its last test.
        for p in self.processes:
            if p.poll() is None:
                for child in self.children(p.pid):
                    try:
                        os.kill(child, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                p.kill()
                p.wait()

    def start_on_node(self, user, env):
        """A process started on the node by hand (here: this machine), as `user` with `env` only."""
        p = subprocess.Popen(["runuser", "-u", user, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()],
                              "sleep", "300"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.processes.append(p)
        # runuser forks the command: its child is the process on the card.
        return wait_for(lambda: self.children(p.pid), what="the process to start")[0]

    @staticmethod
    def children(pid):
        """The pids of process `pid`'s children ([] once it is gone)."""
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                return [int(c) for c in f.read().split()]
        except OSError:
            return []

    def set_nvml(self, cards):
        self.write("nvml.json", json.dumps({"driver_version": "550.54.15", "cards": cards}))

    def start_agent(self, node=None, token_file="agent.token"):
        self.run_agent(f"http://127.0.0.1:{self.port}", node or self.cluster.node, os.path.join(self.dir, token_file))

    def utils(self):
        return [g["util"] for g in self.d.api({"op": "gpus"})["gpus"]]

    def post(self, token, body):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/agent/readings", data=body.encode(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def test_the_heads_cards_show_the_nodes_readings_until_they_go_stale(self):
        self.assertEqual(self.utils(), [-1, -1, -1, -1])  # Slurm alone tells no load
        self.start_agent()
        wait_for(lambda: self.utils() == [37, 0, 0, 5], what="the node's readings on the head's cards")
        gpus = self.d.api({"op": "gpus"})["gpus"]
        self.assertEqual([g["temperature"] for g in gpus], [40, 41, 42, 43])
        self.assertEqual(gpus[2]["memory_used"], 2000)
        self.assertIn("37%", self.d.rota("gpus").stdout)
        self.assertRegex(self.d.rota("status").stdout, rf"Agents:\n  {self.cluster.node}: readings of .*\d\n")
        # The load changes on the node: the head follows.
        self.set_nvml([fake_card(i, 90) for i in range(4)])
        wait_for(lambda: self.utils() == [90] * 4, what="the new readings")
        # The agent stops: after agent_stale_after the load reads unknown again (no idle reclaim
        # on readings nobody renewed).
        self.stop_agent()
        wait_for(lambda: self.utils() == [-1] * 4, timeout=15, what="the readings to go stale")
        self.assertIn("(stale: its GPUs' load reads unknown)", self.d.rota("status").stdout)

    def test_an_idle_job_on_a_node_is_seen_through_its_agent_and_only_then(self):
        # Without readings the load is unknown: nothing is called idle, however long.
        job = self.d.submit("--gpus", "1", "--", "sleep", "300")
        self.d.wait_state(job, "running")
        time.sleep(5)
        reasons = lambda: [e["reason"] for e in self.d.show(job)["events"]]
        self.assertFalse([r for r in reasons() if r.startswith("Idle")], reasons())
        # The node's agent says its cards are idle (util 0): the job is warned as on one server.
        self.set_nvml([fake_card(i, 0) for i in range(4)])
        self.start_agent()
        warning = wait_for(lambda: [r for r in reasons() if r.startswith("Idle: ")], timeout=20,
                           what="the idle warning")[0]
        self.assertIn("GPU utilisation 0%", warning)

    def test_processes_on_a_node_are_told_apart_and_outside_ones_stopped_by_its_agent(self):
        # A Rota job through Slurm, whose process is on the card Slurm gave it.
        job = self.d.submit("--gpus", "1", "--", "sh", "-c", "echo $$ > job.pid; exec sleep 300")
        rec = wait_for(lambda: (lambda r: r if r.get("engine_job") and r["gpu_uuids"] else None)(self.d.job(job)),
                       what="the job to run in Slurm")
        slurm_id = rec["engine_job"].split()[-1]
        mine = int(rec["gpu_uuids"][0].rsplit("-", 1)[1])
        job_pid = int(wait_for(lambda: os.path.exists(self.path("job.pid")) and self.read("job.pid").strip(),
                               what="the job's pid"))
        others = [i for i in range(4) if i != mine]
        # On the node by hand, outside Slurm; and another user naming the Rota job's Slurm job.
        by_hand = self.start_on_node(DEFAULT_USER, {"PATH": "/usr/bin:/bin"})
        ensure_user("rota-it-other")
        forger = self.start_on_node("rota-it-other", {"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": slurm_id})
        # And a plain sbatch job, outside Rota but Slurm's.
        sb_id = self.cluster.run("sbatch", "--parsable", "--gres=gpu:1", "-o", "/dev/null", "-D", self.d.dir, "--wrap",
                                 "echo $$ > sb.pid; exec sleep 300", user=DEFAULT_USER).stdout.strip()
        sb_pid = int(wait_for(lambda: os.path.exists(self.path("sb.pid")) and self.read("sb.pid").strip(),
                              what="the sbatch job's pid"))
        cards = [fake_card(i, 50) for i in range(4)]
        cards[mine]["processes"] = [{"pid": job_pid, "used_mib": 2048}]
        cards[others[0]]["processes"] = [{"pid": by_hand, "used_mib": 1024}]
        cards[others[1]]["processes"] = [{"pid": forger, "used_mib": 512}]
        cards[others[2]]["processes"] = [{"pid": sb_pid, "used_mib": 256}]
        self.set_nvml(cards)
        self.start_agent()
        held = lambda: [g["held_outside"] for g in self.d.api({"op": "gpus"})["gpus"]]
        wait_for(lambda: (lambda h: h[others[0]] and h[others[1]] and not h[mine])(held()),
                 what="the cards with outside processes held")
        gpus = self.d.api({"op": "gpus"})["gpus"]
        p = gpus[mine]["processes"]
        self.assertEqual([(x["pid"], x["job_id"], x["allocated"], x["outside"], x["slurm_job"]) for x in p],
                         [(job_pid, job, True, False, slurm_id)])
        self.assertEqual([(x["pid"], x["user"], x["outside"], x["slurm_job"]) for x in gpus[others[0]]["processes"]],
                         [(by_hand, DEFAULT_USER, True, "")])
        self.assertEqual([(x["pid"], x["user"], x["job_id"], x["outside"], x["in_slurm"])
                          for x in gpus[others[1]]["processes"]], [(forger, "rota-it-other", 0, True, False)])
        self.assertEqual([(x["pid"], x["user"], x["job_id"], x["outside"], x["in_slurm"], x["slurm_job"])
                          for x in gpus[others[2]]["processes"]], [(sb_pid, DEFAULT_USER, 0, True, True, sb_id)])
        self.assertIn(f"{DEFAULT_USER}/slurm:{sb_id}(0.2G)", self.d.rota("gpus").stdout)
        told = wait_for(lambda: [e["reason"] for e in json.loads(self.d.rota("events", "--json", user="root").stdout)
                                 ["events"] if e["kind"] == "gpu" and e["to"] == "outside"] or None,
                        what="the outside processes recorded")
        hand = [r for r in told if f"pid {by_hand} ({DEFAULT_USER}) on node {self.cluster.node}" in r]
        self.assertTrue(hand, told)
        self.assertIn("it is stopped in 1s unless it ends", hand[0])
        self.assertFalse([r for r in told if f"pid {sb_pid} " in r], told)  # Slurm's job: not an outside process
        # outside_action = "stop": the head asks the node's agent, which stops the process started
        # by hand (SIGTERM: runuser reports its child's signal) ...
        self.assertEqual(self.processes[0].wait(timeout=20), 128 + signal.SIGTERM)
        stopped = wait_for(lambda: [e["reason"] for e in json.loads(self.d.rota("events", "--json", user="root").stdout)
                                    ["events"] if e["kind"] == "gpu" and e["to"] == "outside_stopped"] or None,
                           what="the stop recorded")
        self.assertIn(f"pid {by_hand} ({DEFAULT_USER}) on node {self.cluster.node}: its agent asked to stop it",
                      stopped[0])
        # ... but not one that names a Slurm job (Slurm's to judge), nor the Rota job's own.
        wait_for(lambda: not self.d.api({"op": "gpus"})["gpus"][others[0]]["processes"],
                 what="the stopped process gone from its card")
        time.sleep(2)
        self.assertIsNone(self.processes[1].poll())
        self.assertEqual(self.d.job(job)["state"], "running")
        self.assertEqual(self.cluster.run("squeue", "-h", "-j", sb_id, "-o", "%T").stdout.strip(), "RUNNING")
        # What is held counts: with the job, the forger and the sbatch job on a card each, a
        # 3-GPU job waits; once the job and the forger's process are gone, it runs.
        three = self.d.submit("--gpus", "3", "--", "true")
        time.sleep(1.5)
        self.assertEqual(self.d.job(three)["state"], "pending")
        self.d.rota("cancel", str(job))
        self.set_nvml([fake_card(i, 50) for i in range(4)])
        self.d.wait_state(three, "completed", timeout=30)

    def test_a_wrong_or_another_nodes_token_is_refused(self):
        body = json.dumps({"node": self.cluster.node, "cards": [{"index": 0, "util_gpu": 1}]})
        self.assertEqual(self.post("not-a-token-of-anyone-at-all", body)[0], 403)
        self.assertEqual(self.post("", body)[0], 401)
        # rota-n9's token may speak only for rota-n9.
        code, reply = self.post(self.OTHER_TOKEN, body)
        self.assertEqual(code, 403)
        self.assertIn("rota-n9", reply["error"]["message"])
        self.assertEqual(self.post(self.TOKEN, "[" * 5000)[0], 400)
        self.assertEqual(self.post(self.TOKEN, json.dumps({"node": self.cluster.node, "cards": [{"index": 0, "util_gpu": 900}]}))[0], 400)
        self.assertEqual(self.utils(), [-1] * 4)
        self.assertEqual(self.post(self.TOKEN, body), (200, {"ok": True, "v": 1}))
        wait_for(lambda: self.utils()[0] == 1, what="the accepted reading")
        # An agent whose token file others may read does not start.
        os.chmod(os.path.join(self.dir, "agent.token"), 0o644)
        self.start_agent()
        self.assertEqual(self.agent.wait(timeout=10), 1)
        self.assertIn("may be read by others", self.agent_said())


@unittest.skipIf(WHY_NOT_TWO, WHY_NOT_TWO)
class TwoNodesTest(DaemonTest):
    """Two nodes of 2 GPUs: the second in its own network and UTS namespace (slurm_cluster.py)."""

    def setUp(self):
        self.cluster = SlurmCluster(gpus=2, second_node="rota-n2").start()
        self.addCleanup(self.cluster.stop)
        # An installation's own tag ([engine] tag): its jobs are lab-<id> in Slurm, not rota-<id>.
        self.CONFIG = slurm_config(self.cluster, extra='tag = "lab"\n')
        super().setUp()

    def node_of(self, job):
        """The node Slurm runs Rota job `job` on (squeue %N, by the job's name under the tag)."""
        out = self.cluster.run("squeue", "-h", "-n", f"lab-{job}", "-o", "%N").stdout.split()
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
        # Rota's record agrees with where Slurm runs each job, and the queue says the node.
        queue = self.d.rota("queue").stdout
        for job in (a, b):
            uuids = self.d.job(job)["gpu_uuids"]
            self.assertEqual({u.rsplit("-", 1)[0] for u in uuids}, {"SLURM-" + self.node_of(job)}, uuids)
            self.assertEqual(self.d.job(job)["node"], self.node_of(job))
            self.assertRegex(queue, rf"(?m)^\s*{job}\s.*\sgpu\d,\d@{self.node_of(job)}\s", queue)
        # A job larger than any node can never run: refused at once, with why (not split over the
        # nodes, and then refused by Slurm).
        big = self.d.rota("submit", "--gpus", "3", "--", "true", check=False)
        self.assertNotEqual(big.returncode, 0)
        self.assertIn("3 GPUs, but a job runs on one node, and the largest here has 2 whole GPUs", big.stderr)
        # A third 2-GPU job waits: no node has two free GPUs (and a job is never split).
        c = self.d.submit("--gpus", "2", "--", "true")
        time.sleep(1.5)
        self.assertEqual(self.d.job(c)["state"], "pending")
        self.d.rota("cancel", str(a))
        self.d.wait_state(c, "completed", timeout=30)
        wait_for(lambda: os.path.exists(self.path(f"rota-{b}.out")) and self.read(f"rota-{b}.out"), what="b's output")
        self.assertEqual(self.read(f"rota-{b}.out").split()[1], "0,1")

    def test_a_job_outside_rota_over_both_nodes_holds_the_cards_slurm_gave_on_each(self):
        # Two plain sbatch jobs of a user: one GPU on the first node, then one GPU on each node. Slurm
        # gives the second job GPU 1 of the first node and GPU 0 of the second (its lowest free ones):
        # Rota names exactly those, on both nodes, not the count's guess (the last free card).
        sbatch = lambda *argv: self.cluster.run("sbatch", "--parsable", "-o", "/dev/null", "-D", "/tmp", *argv,
                                                "--wrap", "sleep 300", user=DEFAULT_USER).stdout.strip()
        one = sbatch("-w", self.cluster.node, "--gres=gpu:1")
        running = lambda job: self.cluster.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip() == "RUNNING"
        wait_for(lambda: running(one), what="the first outside job running")
        both = sbatch("-N2", "--gres=gpu:1")
        wait_for(lambda: running(both), what="the outside job over both nodes running")
        held = lambda: {g["uuid"]: sorted(h["slurm_job"] for h in g["held_by"]) for g in self.d.api({"op": "gpus"})["gpus"]}
        wait_for(lambda: held() == {"SLURM-rota-n1-0": [one], "SLURM-rota-n1-1": [both],
                                    "SLURM-rota-n2-0": [both], "SLURM-rota-n2-1": []},
                 what="the cards of both outside jobs named", timeout=15)
        gpus = {g["uuid"]: g for g in self.d.api({"op": "gpus"})["gpus"]}
        self.assertFalse(gpus["SLURM-rota-n2-1"]["held_outside"])
        listing = self.d.rota("gpus").stdout
        self.assertEqual(listing.count(f"{DEFAULT_USER}/slurm:{both}(outside Rota)"), 2, listing)
        # The one free card takes a Rota job, and Slurm agrees it is that card.
        job = self.d.submit("--gpus", "1", "--", "sleep", "300")
        wait_for(lambda: self.node_of(job), what="the Rota job running in Slurm")
        self.assertEqual(self.node_of(job), self.cluster.second)
        wait_for(lambda: self.d.job(job)["gpu_uuids"] == ["SLURM-rota-n2-1"], what="the job on the free card")
        self.cluster.run("scancel", both)
        wait_for(lambda: held()["SLURM-rota-n2-0"] == [] and held()["SLURM-rota-n1-1"] == [],
                 what="the cards of the ended job no longer held")

    def test_a_node_that_fails_under_a_job_requeues_it_elsewhere(self):
        # Both GPUs of the first node taken, so the requeue-able job goes to the second.
        blocker = self.d.submit("--gpus", "2", "--", "sleep", "300")
        wait_for(lambda: self.node_of(blocker), what="the blocker running")
        job = self.d.submit("--gpus", "1", "--requeue", "--", "sh", "-c", "echo $(hostname) >> where; sleep 300")
        wait_for(lambda: self.node_of(job) == self.cluster.second, what="the job on the second node")
        self.cluster.kill_second_slurmd()
        # Slurm declares the node down after SlurmdTimeout (20 s; how soon after depends on its
        # pings, so the wait for Slurm is its own, long one) and ends the job NODE_FAIL. Rota then
        # requeues it (it asked) at its next look and, the node's cards out of service, waits for room.
        self.cluster.wait_node_down(self.cluster.second)
        wait_for(lambda: any(e["to"] == "pending" and "NodeFail" in e["reason"] for e in self.d.show(job)["events"]),
                 timeout=20, what="the job requeued after its node failed")
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



@unittest.skipIf(WHY_NOT_TWO, WHY_NOT_TWO)
class SecondNodeOverTheNetworkTest(AgentProcess, DaemonTest):
    """The second node as a compute node is: in its own network namespace, it reaches the head only
    over the veth pair, at the head's address there (not loopback, no socket). Its agent posts its
    cards' readings and its slurmd's Epilog pokes with `rotad --agent URL --poke`, each with the
    node's own token (picked by the node's hostname, as a site's shared Epilog would)."""
    TOKENS = {"rota-n1": "token-of-the-first-node-0123456789", "rota-n2": "token-of-the-second-node-012345678"}

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rota-node2-")
        os.chmod(self.dir, 0o755)
        self.addCleanup(shutil.rmtree, self.dir, True)
        os.makedirs(os.path.join(self.dir, "tokens"))
        for node, token in self.TOKENS.items():
            self.write(f"tokens/{node}.token", token + "\n")
            self.write(f"agent-{node}.token", token + "\n")
        self.write("agent.toml", f'[gpus]\nsource = "nvml"\nnvml_library = "{FAKE_NVML}"\nnvml_timeout = "1s"\n')
        self.write("nvml.json", json.dumps({"driver_version": "550.54.15",
                                            "cards": [fake_card(0, 63), fake_card(1, 8)]}))
        self.hook = os.path.join(self.dir, "epilog")
        self.log = os.path.join(self.dir, "log")
        self.write("epilog", "#!/bin/sh\nexit 0\n", mode=0o755)
        self.cluster = SlurmCluster(gpus=2, second_node="rota-n2", epilog=self.hook).start()
        self.addCleanup(self.cluster.stop)
        self.url = f"http://{self.cluster.addr[0]}:{free_port()}"
        # What the queue lists the moment the poke has returned, with the node that poked.
        self.write("epilog", f"""#!/bin/sh
{ROTAD} --agent {self.url} --token-file {self.dir}/agent-$(uname -n).token --poke
rc=$?
names=$(SLURM_CONF={self.cluster.conf} squeue -h -a -t all -o %j | tr '\\n' ' ')
echo "$SLURM_JOB_ID $(uname -n) rc=$rc $names" >> {self.log}
exit 0
""", mode=0o755)
        # A poll of a minute: only the poke can make an end seen within seconds.
        self.CONFIG = slurm_config(
            self.cluster, extra=f'agent_tokens = "{self.dir}/tokens"\nagent_stale_after = "3s"\n'
        ).replace("poll_interval = 0.2", "poll_interval = 60") + \
            f'[web]\nlisten = "{self.url.removeprefix("http://")}"\n'
        super().setUp()
        self.agent = None
        self.addCleanup(self.stop_agent)

    def start_agent(self, token_node="rota-n2"):
        """`rotad --agent` for the second node, run in its network namespace."""
        self.run_agent(self.url, self.cluster.second, os.path.join(self.dir, f"agent-{token_node}.token"),
                       prefix=["nsenter", f"--net=/run/netns/{self.cluster.netns}"])

    def utils(self):
        return {g["uuid"]: g["util"] for g in self.d.api({"op": "gpus"})["gpus"]}

    def epilog_lines(self):
        return logged_lines(self.log)

    def test_the_second_nodes_agent_reaches_the_head_over_the_network(self):
        # The namespace has no route to the head's loopback: only the veth address reaches it.
        loop = subprocess.run(["nsenter", f"--net=/run/netns/{self.cluster.netns}", ROTAD, "--agent",
                               f"http://127.0.0.1:{self.url.rsplit(':', 1)[1]}", "--token-file",
                               os.path.join(self.dir, "agent-rota-n2.token"), "--poke"],
                              capture_output=True, text=True, timeout=30)
        self.assertEqual(loop.returncode, 1, loop.stderr)
        self.start_agent()
        wait_for(lambda: self.utils() == {"SLURM-rota-n1-0": -1, "SLURM-rota-n1-1": -1,
                                          "SLURM-rota-n2-0": 63, "SLURM-rota-n2-1": 8},
                 what="the second node's readings on its cards, and only on its")
        self.assertRegex(self.d.rota("status").stdout, r"Agents:\n  rota-n2: readings of .*\d\n")
        self.stop_agent()
        wait_for(lambda: self.utils()["SLURM-rota-n2-0"] == -1, timeout=15, what="the readings to go stale")
        # The first node's token does not speak for the second node: refused, the agent says so and
        # keeps trying, and the second node's cards stay unknown.
        self.start_agent(token_node="rota-n1")
        wait_for(lambda: "node rota-n1's: it may post only that node's readings" in self.agent_said(),
                 what="the refusal")
        self.assertEqual(self.utils()["SLURM-rota-n2-0"], -1)
        self.stop_agent()

    def test_the_second_nodes_epilog_poke_brings_the_next_job_into_slurm_before_it_returns(self):
        # The first node's GPUs taken, the short job runs on the second; the third waits in Rota.
        blocker = self.d.submit("--gpus", "2", "--", "sleep", "300")
        self.d.wait_state(blocker, "running", timeout=20)
        short = self.d.submit("--gpus", "2", "--", "sleep", "1")
        self.d.wait_state(short, "running", timeout=20)
        after = self.d.submit("--gpus", "2", "--", "true")
        self.assertEqual(self.d.job(after)["state"], "pending")
        self.d.wait_state(after, "completed", timeout=20)
        short_slurm = self.d.job(short)["engine_job"].split()[-1]
        wait_for(lambda: any(line[0] == short_slurm for line in self.epilog_lines()), what="the short job's epilog")
        line = next(line for line in self.epilog_lines() if line[0] == short_slurm)
        self.assertEqual(line[1:3], ["rota-n2", "rc=0"], line)
        self.assertIn(f"rota-{after}", line[3:])
        self.d.rota("cancel", str(blocker))


if __name__ == "__main__":
    unittest.main()
