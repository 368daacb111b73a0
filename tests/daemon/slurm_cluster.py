"""A real Slurm cluster for the Slurm engine's tests: munged, slurmctld and slurmd (Debian 12's
Slurm 22.05, installed by scripts/install-deps.sh), started as root under a private directory with
their own ports, munge socket, state and logs, so that they touch nothing of a Slurm the machine
may run already (/etc/slurm is not read: clients get SLURM_CONF).

The node's GPUs are placeholder character devices (clones of /dev/null): Slurm 22.05 drops GPUs
that have no device file, and with one each GPU gets an index and jobs get CUDA_VISIBLE_DEVICES.
Process tracking is proctrack/linuxproc with no task plugin: nothing depends on the machine's
cgroup set-up (../shared/slurm-local/README.md lists what fails with cgroups in such VMs).

With `accounting=True`, Slurm's accounting too: a private MariaDB (its own data directory, on a
free port of 127.0.0.1) and slurmdbd, so that sacct remembers jobs after slurmctld forgets them
(MinJobAge, settable). It starts in about 2 s. Seen on 22.05.8: sacct and sacctmgr find munge's
socket through AccountingStoragePass (AuthInfo is not read for slurmdbd's connections), and
reservations refuse GPUs even with slurmdbd ("TRES type 'gres/gpu' not supported with
reservations").
"""
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

SLURM_BINARIES = ["/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch",
                  "/usr/bin/squeue", "/usr/bin/scancel", "/usr/bin/sinfo", "/usr/bin/scontrol"]


def slurm_missing():
    """Why a cluster cannot be started here ("" when it can)."""
    if os.geteuid() != 0:
        return "starting munged, slurmctld and slurmd needs root"
    missing = [b for b in SLURM_BINARIES if not os.access(b, os.X_OK)]
    if missing:
        return "Slurm is not installed (scripts/install-deps.sh installs it): " + ", ".join(missing)
    for user in ("slurm", "munge"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            return f"the {user} user is missing (Debian's Slurm packages create it)"
    return ""


ACCOUNTING_BINARIES = ["/usr/sbin/mariadbd", "/usr/bin/mariadb-install-db", "/usr/bin/mariadb",
                       "/usr/sbin/slurmdbd", "/usr/bin/sacct", "/usr/bin/sacctmgr"]


def accounting_missing():
    """Why a cluster with accounting (slurmdbd on MariaDB) cannot be started here ("" when it can)."""
    why = slurm_missing()
    if why:
        return why
    missing = [b for b in ACCOUNTING_BINARIES if not os.access(b, os.X_OK)]
    if missing:
        return "slurmdbd or MariaDB is not installed (scripts/install-deps.sh installs them): " + ", ".join(missing)
    try:
        pwd.getpwnam("mysql")
    except KeyError:
        return "the mysql user is missing (Debian's mariadb-server creates it)"
    return ""


_next_port = [0]  # the next offset to try in this process's block


def free_port():
    """A free TCP port for one of the cluster's daemons, which binds it later. Not from the kernel's
    ephemeral range (bind to port 0): two clusters started at once (ctest -j2) could both be given
    the same port before either daemon bound it, and one's slurmdbd then talked MySQL to the
    other's slurmctld ("protocol_version ... not supported"). Each process takes ports in turn
    from its own block of 64 below the ephemeral range, chosen by its pid."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    size = 64
    blocks = max(1, (low - 20000) // size)
    base = 20000 + (os.getpid() % blocks) * size
    for i in range(size):
        offset = (_next_port[0] + i) % size
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", base + offset))
            except OSError:
                continue
        _next_port[0] = offset + 1
        return base + offset
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # the whole block in use: any port
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def second_node_missing():
    """Why a second node cannot be made here ("" when it can): it runs in its own network and UTS
    namespace behind a veth pair (ip, nsenter and unshare)."""
    for tool in ("/usr/sbin/ip", "/usr/bin/nsenter", "/usr/bin/unshare"):
        if not os.access(tool, os.X_OK) and not shutil.which(os.path.basename(tool)):
            return f"{os.path.basename(tool)} is missing"
    r = subprocess.run(["ip", "netns", "add", "rota-probe-%d" % os.getpid()], capture_output=True, text=True)
    if r.returncode != 0:
        return "cannot make a network namespace: " + r.stderr.strip()
    subprocess.run(["ip", "netns", "del", "rota-probe-%d" % os.getpid()], capture_output=True)
    return ""


class SlurmCluster:
    """One controller and one node (`node`, `gpus` placeholder GPUs) on this machine; with
    `second_node`, another node of as many GPUs in its own network and UTS namespace (a veth pair
    joins them; ../shared/slurm-local/two-node.sh found how: `ip netns exec` remounts /sys and
    slurmd then finds no cgroup file system, `nsenter --net` does not)."""

    def __init__(self, node="rota-n1", gpus=4, cpus=8, memory_mb=16000, second_node=None, epilog_ctld=None,
                 epilog=None, accounting=False, min_job_age=300, shards=None, mig=0,
                 accounting_tres="gres/gpu,gres/shard"):
        self.node = node
        # mig: that many MIG slices of gres type a100_1g.10gb besides the whole GPUs (typed ones:
        # with `shards` set), each a placeholder device as a GPU is.
        assert not mig or shards is not None, "MIG slices beside untyped GPUs: give shards"
        self.mig = mig
        # shards=None: the GPUs untyped ("gpu:4"), Slurm's to choose among. A number: each GPU its
        # own gres type card0, card1, ... with that many shards of the same type (0: none), so
        # that a job can be sent to exactly the cards Rota chose and a share to one card's shards.
        self.shards = shards
        self.second = second_node
        self.gpus = gpus
        self.dir = tempfile.mkdtemp(prefix="rota-slurm-")
        os.chmod(self.dir, 0o755)
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.munge_socket = os.path.join(self.dir, "munge", "munge.socket")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.cpus = cpus
        self.epilog_ctld = epilog_ctld  # a program slurmctld runs (as slurm) after each job
        self.epilog = epilog  # a program each slurmd runs (as root, on the node) after each job
        self.memory_mb = memory_mb
        # Slurm's scheduler as bench/daemon's "tuned" runs it: a job submitted is scheduled at
        # once, not up to 3 s later (batch_sched_delay). The tests' waits are for what Rota does;
        # the stock delay only made each job start of the Slurm files about 2 s longer.
        self.scheduler_parameters = "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0"
        # With accounting: slurmdbd (port dbd_port) on a private MariaDB (datadir mysql/, TCP on
        # 127.0.0.1:db_port), so sacct remembers jobs after slurmctld forgets them (MinJobAge).
        self.accounting = accounting
        self.accounting_tres = accounting_tres
        self.min_job_age = min_job_age
        self.mysqld = None

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def nodes(self):
        return [self.node] + ([self.second] if self.second else [])

    def make_network(self):
        """The second node's namespace and a veth pair: this side .1, the node's side .2."""
        tag = os.getpid() % 100000
        self.netns = f"rota-sl{tag}"
        self.veth = (f"rsa{tag}", f"rsb{tag}")
        net = 100 + tag % 150
        self.addr = (f"10.233.{net}.1", f"10.233.{net}.2")
        sh = lambda *a: subprocess.run(list(a), check=True, capture_output=True, timeout=30)
        sh("ip", "netns", "add", self.netns)
        sh("ip", "link", "add", self.veth[0], "type", "veth", "peer", "name", self.veth[1])
        sh("ip", "link", "set", self.veth[1], "netns", self.netns)
        sh("ip", "addr", "add", self.addr[0] + "/24", "dev", self.veth[0])
        sh("ip", "link", "set", self.veth[0], "up")
        sh("ip", "netns", "exec", self.netns, "ip", "addr", "add", self.addr[1] + "/24", "dev", self.veth[1])
        sh("ip", "netns", "exec", self.netns, "ip", "link", "set", self.veth[1], "up")
        sh("ip", "netns", "exec", self.netns, "ip", "link", "set", "lo", "up")

    def write_config(self):
        host = socket.gethostname().split(".")[0]
        ctld_port, slurmd_port = free_port(), free_port()
        ctld_addr = self.addr[0] if self.second else "127.0.0.1"
        for node in self.nodes():
            gpu_dir = self.path("gpu-" + node)
            os.makedirs(gpu_dir, exist_ok=True)
            for i in range(self.gpus + self.mig):
                dev = os.path.join(gpu_dir, f"nvidia{i}")
                if not os.path.exists(dev):
                    os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))
                    os.chmod(dev, 0o666)
        last = self.gpus - 1
        gres = f"gpu:{self.gpus}"
        if self.shards is not None:
            gres = ",".join(f"gpu:card{i}:1" for i in range(self.gpus))
            if self.shards:
                gres += "," + ",".join(f"shard:card{i}:{self.shards}" for i in range(self.gpus))
        if self.mig:
            gres += f",gpu:a100_1g.10gb:{self.mig}"
        node_lines = f"NodeName={self.node} NodeAddr={ctld_addr} NodeHostname={host} CPUs={self.cpus} " \
                     f"RealMemory={self.memory_mb} Gres={gres} State=UNKNOWN\n"
        if self.second:
            node_lines += f"NodeName={self.second} NodeAddr={self.addr[1]} NodeHostname={self.second} " \
                          f"CPUs={self.cpus} RealMemory={self.memory_mb} Gres={gres} State=UNKNOWN\n"
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=rotatest
SlurmctldHost={host}({ctld_addr})
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
StateSaveLocation={self.path('ctld')}
SlurmdSpoolDir={self.path('spool-%n')}
SlurmctldPidFile={self.path('slurmctld.pid')}
SlurmdPidFile={self.path('slurmd-%n.pid')}
SlurmctldLogFile={self.path('slurmctld.log')}
SlurmdLogFile={self.path('slurmd-%n.log')}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
{self.accounting_lines()}
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
{self.scheduler_parameters}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
GresTypes={"gpu,shard" if self.shards else "gpu"}
ReturnToService=2
MinJobAge={self.min_job_age}
ResvOverRun=UNLIMITED
KillWait=2
SlurmdTimeout=20
SlurmdParameters=config_overrides
{f"EpilogSlurmctld={self.epilog_ctld}" if self.epilog_ctld else ""}
{f"Epilog={self.epilog}" if self.epilog else ""}
{node_lines}PartitionName=gpu Nodes={",".join(self.nodes())} Default=YES MaxTime=7-00:00:00 DefaultTime=01:00:00 State=UP
""")
        with open(self.path("gres.conf"), "w") as f:
            f.write("AutoDetect=off\n")
            for node in self.nodes():
                if self.shards is None:
                    f.write(f"NodeName={node} Name=gpu File={self.path('gpu-' + node)}/nvidia[0-{last}]\n")
                    continue
                for i in range(self.gpus):
                    dev = f"{self.path('gpu-' + node)}/nvidia{i}"
                    f.write(f"NodeName={node} Name=gpu Type=card{i} File={dev}\n")
                    if self.shards:
                        f.write(f"NodeName={node} Name=shard Type=card{i} Count={self.shards} File={dev}\n")
                for k in range(self.gpus, self.gpus + self.mig):
                    f.write(f"NodeName={node} Name=gpu Type=a100_1g.10gb File={self.path('gpu-' + node)}/nvidia{k}\n")
        for name in ["ctld", "munge"] + [f"spool-{n}" for n in self.nodes()]:
            os.makedirs(self.path(name), exist_ok=True)
        open(self.path("slurmctld.log"), "a").close()
        shutil.chown(self.path("ctld"), "slurm", "slurm")
        shutil.chown(self.path("slurmctld.log"), "slurm", "slurm")
        shutil.chown(self.path("munge"), "munge", "munge")
        os.chmod(self.path("munge"), 0o755)

    def accounting_lines(self):
        if not self.accounting:
            return "AccountingStorageType=accounting_storage/none"
        # AccountingStoragePass: for slurmdbd, the munge socket its clients (sacct) use. The GPUs
        # and shards in each job's AllocTRES (gres/gpu, gres/shard), as a lab that accounts GPUs
        # keeps them: how Rota charges jobs outside it that ended while rotad was away.
        return (f"AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=localhost\n"
                f"AccountingStoragePort={self.dbd_port}\nAccountingStoragePass={self.munge_socket}\n"
                + (f"AccountingStorageTRES={self.accounting_tres}" if self.accounting_tres else ""))

    def write_accounting_config(self):
        self.db_port, self.dbd_port = free_port(), free_port()
        conf = self.path("slurmdbd.conf")  # read from SLURM_CONF's directory; the slurm user's, 0600
        with open(conf, "w") as f:
            f.write(f"""AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
DbdHost=localhost
DbdPort={self.dbd_port}
SlurmUser=slurm
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={self.db_port}
StorageUser=slurm
StoragePass=rotatest
StorageLoc=slurm_acct_db
PidFile={self.path('slurmdbd.pid')}
LogFile={self.path('slurmdbd.log')}
""")
        shutil.chown(conf, "slurm", "slurm")
        os.chmod(conf, 0o600)
        open(self.path("slurmdbd.log"), "a").close()
        shutil.chown(self.path("slurmdbd.log"), "slurm", "slurm")

    def start_accounting(self):
        """MariaDB on a fresh data directory, its slurm user, slurmdbd, and the cluster registered
        (before slurmctld starts, which then sends it every job)."""
        db = self.path("mysql")
        os.makedirs(db)
        shutil.chown(db, "mysql", "mysql")
        subprocess.run(["mariadb-install-db", "--no-defaults", "--user=mysql", f"--datadir={db}",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True, timeout=120)
        self.mysqld = subprocess.Popen(
            ["/usr/sbin/mariadbd", "--no-defaults", "--user=mysql", f"--datadir={db}", f"--socket={db}/sock",
             f"--port={self.db_port}", "--bind-address=127.0.0.1", "--skip-name-resolve",
             f"--pid-file={db}/mariadbd.pid", f"--log-error={db}/error.log", "--innodb-buffer-pool-size=32M"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sql = lambda q: subprocess.run(["mariadb", "--no-defaults", "-S", f"{db}/sock", "-u", "root", "-e", q],
                                       capture_output=True, timeout=30)
        self.wait(lambda: sql("SELECT 1").returncode == 0, "MariaDB to answer", timeout=60)
        r = sql("CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'rotatest'; "
                "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';")
        assert r.returncode == 0, r.stderr
        subprocess.run(["/usr/sbin/slurmdbd"], check=True, timeout=30, env=self.env)
        self.wait(lambda: self.run("sacctmgr", "-n", "list", "cluster", check=False).returncode == 0,
                  "slurmdbd to answer")
        self.run("sacctmgr", "-i", "add", "cluster", "rotatest")

    def stop_accounting(self):
        self._stop(self.pid("slurmdbd.pid"))
        if self.mysqld:
            self.mysqld.terminate()
            try:
                self.mysqld.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.mysqld.kill()
                self.mysqld.wait()

    def munge_key(self):
        key = self.path("munge.key")
        with open("/dev/urandom", "rb") as r, open(key, "wb") as w:
            w.write(r.read(1024))
        shutil.chown(key, "munge", "munge")
        os.chmod(key, 0o400)
        return key

    def start(self):
        """Starts the cluster and waits for its nodes; on a failure stops what had started (a test's
        setUp that fails registers no cleanup, and the daemons would outlive the run) and raises."""
        try:
            return self._start()
        except BaseException:
            try:
                self.stop()
            except Exception as e:  # the first failure is the one to report
                print(f"slurm_cluster: stopping a cluster that failed to start: {e}")
            raise

    def _start(self):
        if self.second:
            self.make_network()
        if self.accounting:
            self.write_accounting_config()
        self.write_config()
        key = self.munge_key()
        subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged", f"--socket={self.munge_socket}",
                        f"--key-file={key}", f"--pid-file={self.path('munge', 'munged.pid')}",
                        f"--log-file={self.path('munge', 'munged.log')}", f"--seed-file={self.path('munge', 'seed')}"],
                       check=True, timeout=30)
        if self.accounting:
            self.start_accounting()
        self.start_controller()
        subprocess.run(["/usr/sbin/slurmd", "-f", self.conf, "-N", self.node], check=True, timeout=30, env=self.env)
        if self.second:
            self.start_second_slurmd()
        for node in self.nodes():
            self.wait_node_up(node)
        return self

    def start_second_slurmd(self):
        subprocess.run(["nsenter", f"--net=/run/netns/{self.netns}", "unshare", "--uts", "sh", "-c",
                        f"hostname {self.second} && exec /usr/sbin/slurmd -f {self.conf} -N {self.second}"],
                       check=True, timeout=30, env=self.env)

    def kill_second_slurmd(self):
        """The second node's slurmd killed (SIGKILL): the node stops answering. Its jobs' processes
        (slurmstepd and below) keep running until stop()."""
        pid = self.pid(f"slurmd-{self.second}.pid")
        assert pid, f"no pid file of {self.second}'s slurmd: " + self.log_tail(f"slurmd-{self.second}.log")
        os.kill(pid, signal.SIGKILL)
        self.wait(lambda: not self._alive(pid), f"{self.second}'s slurmd (pid {pid}) to die")

    def wait_node_down(self, node, timeout=150):
        """Until slurmctld has declared `node` down (after SlurmdTimeout without an answer); on a
        timeout the node's record and slurmctld's log tell why not."""
        state = lambda: self.run("sinfo", "-h", "-n", node, "-o", "%T", check=False).stdout.strip()
        try:
            self.wait(lambda: state().startswith("down"), f"slurmctld to declare {node} down", timeout=timeout,
                      every=0.5)
        except AssertionError as e:
            shown = self.run("scontrol", "show", "node", node, check=False).stdout
            raise AssertionError(f"{e}\nsinfo: {state()!r}\n{shown}") from None

    def start_controller(self):
        subprocess.run(["/usr/sbin/slurmctld", "-f", self.conf], check=True, timeout=30, env=self.env)
        self.wait(lambda: "UP" in self.run("scontrol", "ping", check=False).stdout, "slurmctld to answer")

    def wait_node_up(self, node=None):
        node = node or self.node
        def up():
            state = self.run("sinfo", "-h", "-n", node, "-o", "%T", check=False).stdout.strip()
            return state.startswith(("idle", "mixed", "allocated"))
        self.wait(up, f"node {node} to be up")

    def run(self, *argv, check=True, user=None, timeout=30):
        cmd = ["/usr/bin/" + argv[0]] + list(argv[1:])
        if user:
            cmd = ["setpriv", "--reuid", user, "--regid", user, "--init-groups", "--"] + cmd
        return subprocess.run(cmd, capture_output=True, text=True, check=check, env=self.env, timeout=timeout,
                              cwd="/")

    def wait(self, predicate, what, timeout=30, every=0.2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(every)
        raise AssertionError(f"timed out waiting for {what}; slurmctld log:\n" + self.log_tail("slurmctld.log"))

    def log_tail(self, name, lines=20):
        try:
            with open(self.path(name)) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"

    def pid(self, name):
        try:
            with open(self.path(name)) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def stop_controller(self):
        self._stop(self.pid("slurmctld.pid"))

    def jobs(self):
        """Slurm's queue as {job name: (state, user)}, every state."""
        out = self.run("squeue", "-h", "-a", "-t", "all", "-o", "%j|%T|%u|%i").stdout
        jobs = {}
        for line in out.splitlines():
            name, state, user, jid = line.split("|")
            jobs.setdefault(name, []).append((state, user, jid))
        return jobs

    def kill_stepds(self):
        """Kills this cluster's slurmstepd processes: a job step's stepd whose slurmd is gone waits
        to report to it for minutes, long after the test (seen after every run of the Slurm
        tests). They are told apart by the SLURM_CONF in their environment."""
        want = b"SLURM_CONF=" + self.conf.encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/comm", "rb") as f:
                    if f.read().strip() != b"slurmstepd":
                        continue
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if want not in f.read().split(b"\0"):
                        continue
                os.kill(int(entry), signal.SIGKILL)
            except (OSError, ValueError):
                pass  # gone meanwhile, or not ours to read

    def cancel_all(self):
        self.run("scancel", "--full", "--signal=KILL", "-p", "gpu", check=False)
        self.run("scancel", "-p", "gpu", check=False)

    @staticmethod
    def _stop(pid):
        SlurmCluster._stop_all([pid])

    @staticmethod
    def _alive(pid):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False

    @staticmethod
    def _stop_all(pids):
        """SIGTERM to each of `pids` (None: none), then SIGKILL to those still there after 10 s."""
        left = []
        for pid in filter(None, pids):
            try:
                os.kill(pid, signal.SIGTERM)
                left.append(pid)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = [pid for pid in left if SlurmCluster._alive(pid)]
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self):
        try:
            self.cancel_all()
        except subprocess.TimeoutExpired:  # no controller to ask (it never started, or hangs)
            pass
        names = [f"slurmd-{n}.pid" for n in self.nodes()] + ["slurmctld.pid", os.path.join("munge", "munged.pid")]
        # Told to stop together: each takes one to two seconds to go, and a test's cluster is
        # stopped after every test of the Slurm files.
        self._stop_all([self.pid(name) for name in names])
        self.kill_stepds()
        self.stop_accounting()
        if self.second:
            # What ran on the second node outlives its slurmd: every process in its namespace.
            r = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True)
            for pid in r.stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", self.netns], capture_output=True)
            subprocess.run(["ip", "link", "del", self.veth[0]], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def slurm_config(cluster, partition="gpu", extra=""):
    """rotad's configuration on `cluster`: the GPUs are the partition's, read from Slurm."""
    return f"""
[gpus]
source = "slurm"
[engine]
kind = "slurm"
slurm_conf = "{cluster.conf}"
partition = "{partition}"
command_timeout = "3s"
poll_interval = 0.2
gpu_model = "NVIDIA A100-SXM4-80GB"
gpu_memory = "80G"
{extra}"""
