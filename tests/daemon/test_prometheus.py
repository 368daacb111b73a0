"""/metrics scraped by a real Prometheus (Debian's `prometheus` binary, installed by
scripts/install-deps.sh): started with its own configuration (scrape rotad every second) and
data directory in a temporary directory; a query through its HTTP API returns the value rotad
exposes."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import urllib.parse
import urllib.request

from harness import DaemonTest, SMALL_CLUSTER, wait_for
from http_client import Http, free_port, http_job

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


@unittest.skipUnless(os.path.exists(PROMETHEUS),
                     "the prometheus binary is missing: run scripts/install-deps.sh (CI does)")
class PrometheusTest(DaemonTest):
    def setUp(self):
        self.port = free_port()
        self.CONFIG = SMALL_CLUSTER + f'\n[web]\nlisten = "127.0.0.1:{self.port}"\n'
        super().setUp()
        self.prom_dir = tempfile.mkdtemp(prefix="rota-it-prom-")
        self.addCleanup(shutil.rmtree, self.prom_dir, True)
        self.prom_port = free_port()
        config = os.path.join(self.prom_dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: rota
    scrape_interval: 1s
    static_configs:
      - targets: ["127.0.0.1:{self.port}"]
""")
        self.prom_log = open(os.path.join(self.prom_dir, "prometheus.log"), "w")
        self.prom = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={self.prom_dir}/data",
             f"--web.listen-address=127.0.0.1:{self.prom_port}"],
            stdout=self.prom_log, stderr=subprocess.STDOUT)
        self.addCleanup(self._stop_prometheus)

    def _stop_prometheus(self):
        self.prom.terminate()
        try:
            self.prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.prom.kill()
            self.prom.wait()
        self.prom_log.close()

    def query(self, expr):
        url = f"http://127.0.0.1:{self.prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                body = json.load(r)
        except OSError:
            return None
        if self.prom.poll() is not None:
            raise AssertionError("prometheus exited:\n" + open(self.prom_log.name).read())
        if body.get("status") != "success":
            return None
        return body["data"]["result"]

    def test_prometheus_scrapes_rotad(self):
        # A job holding a card makes a known value: rota_gpu_allocated for it, and running = 1.
        token = json.loads(self.d.rota("token", "create", "--json").stdout)["token"]
        h = Http(self.port)
        job = http_job(["sleep", "120"], self.d.dir)
        r = h.post("/api/submit", {"job": job}, headers={"Authorization": "Bearer " + token}, cookies=False)
        self.assertEqual(r.status, 200, r.body)
        job_id = r.json()["job_id"]
        self.d.wait_state(job_id, "running")
        up = wait_for(lambda: self.query('up{job="rota"} == 1'), timeout=60, what="prometheus to scrape rotad")
        self.assertEqual(up[0]["value"][1], "1")
        result = wait_for(lambda: self.query(f'rota_gpu_allocated{{job_id="{job_id}"}}'), timeout=30,
                          what="rota_gpu_allocated in prometheus")
        self.assertEqual(len(result), 1)
        self.assertEqual(result[0]["value"][1], "1")
        self.assertEqual(result[0]["metric"]["modelName"], "NVIDIA A100-SXM4-80GB")
        self.assertTrue(result[0]["metric"]["UUID"])
        total = self.query('rota_gpu_memory_total_bytes{gpu="0"}')
        self.assertEqual(total[0]["value"][1], str(80 * 1024 ** 3))
        running = self.query('sum(rota_jobs{state="running"})')
        self.assertEqual(running[0]["value"][1], "1")


if __name__ == "__main__":
    unittest.main()
