"""`--conda ENV` with a real rotad: the job runs in the user's conda environment, found the way
the user's conda finds it (here a miniconda3 layout under the user's home, made by the test:
Debian has no conda), activated as `conda activate` would (PATH, CONDA_DEFAULT_ENV, the
environment's own variables, its activate.d scripts), from a flag, a #ROTA line and `rota run`.
A missing environment is refused at submit; one removed before the job starts fails it with a
clear message."""
import json
import os
import shutil
import unittest

from harness import DaemonTest

PYTHON = """#!/bin/sh
echo "python of $CONDA_DEFAULT_ENV: hf=$HF_HOME activated=$ACTIVATED args=$*"
"""


class CondaTest(DaemonTest):
    def setUp(self):
        super().setUp()
        self.home = self.path("home")
        self.prefix = os.path.join(self.home, "miniconda3", "envs", "exp1")
        os.makedirs(os.path.join(self.prefix, "bin"))
        os.makedirs(os.path.join(self.prefix, "etc", "conda", "activate.d"))
        os.makedirs(os.path.join(self.prefix, "conda-meta"))
        with open(os.path.join(self.prefix, "conda-meta", "state"), "w") as f:
            json.dump({"env_vars": {"HF_HOME": "/data/hf"}}, f)
        with open(os.path.join(self.prefix, "etc", "conda", "activate.d", "cuda.sh"), "w") as f:
            f.write("export ACTIVATED=yes\n")
        python = os.path.join(self.prefix, "bin", "python")
        with open(python, "w") as f:
            f.write(PYTHON)
        os.chmod(python, 0o755)
        for root, dirs, _ in os.walk(self.home):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        os.chmod(self.home, 0o755)
        self.env = {"HOME": self.home}

    def output(self, job):
        return self.read(f"rota-{job}.out").strip()

    def test_a_job_runs_in_its_conda_environment(self):
        job = self.d.submit("--conda", "exp1", "--", "python", "train.py", env=self.env)
        self.d.wait_state(job, "completed", timeout=30)
        self.assertEqual(self.output(job), "python of exp1: hf=/data/hf activated=yes args=train.py")
        show = self.d.rota("show", str(job), env=self.env).stdout
        self.assertIn(f"\nCommand: python train.py\nConda: {self.prefix}\n", show)  # the user's command, not the wrapper
        self.assertEqual(self.d.job(job)["name"], "python")

    def test_a_rota_line_in_a_script_and_rota_run(self):
        script = self.write_script("train.sh", "#!/bin/sh\n#ROTA --conda exp1\npython from-script\n")
        job = self.d.submit("--", script, env=self.env)
        self.d.wait_state(job, "completed", timeout=30)
        self.assertEqual(self.output(job), "python of exp1: hf=/data/hf activated=yes args=from-script")
        r = self.d.rota("run", "--conda", "exp1", "--", "python", "here", env=self.env)
        self.assertIn("python of exp1: hf=/data/hf activated=yes args=here", r.stdout)

    def test_a_missing_environment_is_refused_at_submit(self):
        r = self.d.rota("submit", "--conda", "exp2", "--", "python", env=self.env, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('conda environment "exp2" not found', r.stderr)
        self.assertIn("environments there: exp1", r.stderr)
        self.assertEqual(self.d.api({"op": "queue", "all": True})["jobs"], [])  # nothing was queued

    def test_an_environment_removed_before_the_start_fails_the_job_clearly(self):
        gate = self.path("gate")
        first = self.d.submit("--", "sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.05; done", env=self.env)
        self.d.wait_state(first, "running")
        job = self.d.submit("--conda", "exp1", "--after", str(first), "--", "python", env=self.env)
        shutil.rmtree(self.prefix)
        self.open_gate("gate")
        self.d.wait_state(job, "failed", timeout=30)
        self.assertIn(f"rota: the conda environment {self.prefix} is gone", self.output(job))


if __name__ == "__main__":
    unittest.main()
