"""Where jobs' cgroups go when rotad is not in the root cgroup (docs/design.md, Executor)."""
import os
import subprocess
import unittest

from harness import IS_ROOT, Rotad, cgroup2_mount, own_cgroup, wait_for


@unittest.skipUnless(IS_ROOT, "moving processes between cgroups needs root")
class SharedParentCgroupTest(unittest.TestCase):
    """Two daemons started from one cgroup that is not the root (as from one login session):
    each moves itself into <cgroup>/daemon and puts its jobs in a base of its own below it. When
    both used <cgroup>/job-<id> (up to b82cea7), the second daemon's job 1 could not start while
    the first's ran (its cgroup held processes), and the end of either could kill the other's."""

    def setUp(self):
        mount = cgroup2_mount()
        if not mount or own_cgroup(os.getpid()) != "/" or not os.access(mount, os.W_OK):
            self.skipTest("needs a writable cgroup v2 and this test in its root cgroup")
        self.mount = mount
        self.parent = os.path.join(mount, f"rota-it-shared-{os.getpid()}")
        os.mkdir(self.parent)
        self.addCleanup(self.remove_parent)
        # What a login shell is: a process that stays in the cgroup the daemons were started from.
        self.shell = subprocess.Popen(["sleep", "300"])
        self.join(self.shell.pid)
        self.daemons = []
        for _ in range(2):
            d = Rotad()
            self.daemons.append(d)
            self.addCleanup(d.cleanup)
            d.start(wrapper=["sh", "-c", f'echo $$ > {self.parent}/cgroup.procs && exec "$@"', "sh"])

    def join(self, pid):
        with open(os.path.join(self.parent, "cgroup.procs"), "w") as f:
            f.write(str(pid))

    def remove_parent(self):
        self.shell.kill()
        self.shell.wait()
        for d in self.daemons:  # stopped by now (cleanups run last in, first out)
            if d.proc and d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()
        for sub in sorted((os.path.join(root, n) for root, dirs, _ in os.walk(self.parent) for n in dirs),
                          key=len, reverse=True):
            os.rmdir(sub)
        os.rmdir(self.parent)

    def relative(self, path):
        return "/" + os.path.relpath(path, self.mount)

    def test_each_daemon_keeps_its_jobs_in_a_base_of_its_own(self):
        first, second = self.daemons
        jobs = [d.submit("--", "sh", "-c", "cat /proc/self/cgroup > cg; exec sleep 60") for d in self.daemons]
        self.assertEqual(jobs, [1, 1])  # the same number in both: the names that used to collide
        for d in self.daemons:
            d.wait_state(1, "running", timeout=10)

        rel_parent = self.relative(self.parent)
        bases = []
        for d in self.daemons:
            self.assertEqual(own_cgroup(d.proc.pid), rel_parent + "/daemon")
            base = d.cgroup_base()
            self.assertIsNotNone(base, d.read_log())
            self.assertEqual(os.path.dirname(base), self.parent)
            self.assertRegex(os.path.basename(base), r"^rota-[0-9a-f]{16}$")
            bases.append(base)
        self.assertNotEqual(bases[0], bases[1])
        for d, base in zip(self.daemons, bases):
            cg = os.path.join(d.dir, "cg")
            wait_for(lambda: os.path.exists(cg) and os.path.getsize(cg) > 0, what="the job's cgroup")
            with open(cg) as f:
                self.assertIn("0::" + self.relative(base) + "/job-1\n", f.read())

        # The first one's end leaves the second one's job running.
        first.rota("cancel", "1")
        first.wait_state(1, "cancelled")
        self.assertEqual(second.job(1)["state"], "running")
        # (removed a moment after the end: out of the way of the launches the end allows)
        wait_for(lambda: not os.path.exists(os.path.join(bases[0], "job-1")), what="the first job-1 removed")
        with open(os.path.join(bases[1], "job-1", "cgroup.procs")) as f:
            self.assertNotEqual(f.read().strip(), "", "the second daemon's job was killed")
        second.rota("cancel", "1")
        second.wait_state(1, "cancelled")

        # A stopped daemon removes its base; the cgroup it was started from is left as it was.
        for d in self.daemons:
            d.stop()
        for base in bases:
            self.assertFalse(os.path.exists(base), base)
        self.assertTrue(os.path.isdir(os.path.join(self.parent, "daemon")))


if __name__ == "__main__":
    unittest.main()
