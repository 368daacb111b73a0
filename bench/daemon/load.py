#!/usr/bin/env python3
"""Load: CLIENTS concurrent clients (half on the socket, half over HTTP with API tokens, spread
over USERS users) submit, list, show and cancel their own jobs for SECONDS seconds against a real
rotad on simulated GPUs, while one other user runs `rota queue` every 100 ms. Prints one JSON
object (stdout) and a Markdown summary (stderr):

- per operation and transport: count, errors by code, throughput, latency p50/p99/max;
- the other user's `rota queue`: the whole command's wall time and the API call's, p50/p99/max
  (the goal: p99 under 50 ms);
- rotad's resident memory idle before, at the end of the load, and each 5 s for 60 s after;
- what was lost or duplicated: every acknowledged submission must be stored exactly once, and
  nothing stored that no client sent.

Usage (root: the clients are real users, created if missing; the jobs run as them):
  bench/daemon/load.py [--clients 50] [--seconds 60] [--users 10] [--bin build]
Each client waits a random think time (mean --think ms, default 100: some 10 operations a second
each, 500 in all) between operations; --think 0 is a closed loop at full speed. Submissions and
HTTP requests are not rate-limited here ([limits] submit_rate = 0, [web] rate = 0, and more
connections per address: every client is 127.0.0.1): the point is rotad's own latency; the limits
are tested in tests/daemon/test_attacks_load.py and test_http.py."""
import argparse
import encodings.idna  # noqa: F401 (loaded before the clients drop to users who may not read Python's lib)
import http.client
import json
import multiprocessing
import os
import pwd
import random
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "daemon"))

CONFIG = """
[gpus]
source = "simulated"
[[gpus.card]]
model = "NVIDIA A100-SXM4-80GB"
memory = "80G"
count = 8
[limits]
submit_rate = 0
connections_per_user = 256
[web]
listen = "127.0.0.1:{port}"
rate = 0
connections_per_address = 128
"""


def percentile(values, p):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def stats_ms(values):
    return {"n": len(values), "p50": round(percentile(values, 50) * 1000, 2) if values else None,
            "p99": round(percentile(values, 99) * 1000, 2) if values else None,
            "max": round(max(values) * 1000, 2) if values else None}


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def become(user):
    if os.geteuid() == 0 and user:
        pw = pwd.getpwnam(user)
        os.setgroups([])
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)


def socket_call(path, request):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    try:
        s.connect(path)
        s.sendall((json.dumps(dict({"v": 1}, **request)) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("connection closed without a reply")
            data += chunk
        return json.loads(data)
    finally:
        s.close()


class HttpClient:
    def __init__(self, port, token):
        self.port, self.token, self.conn = port, token, None

    def call(self, request):
        op = request["op"]
        body = json.dumps({k: v for k, v in request.items() if k != "op"})
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.conn.request("POST", f"/api/{op}", body, {"Content-Type": "application/json",
                                                              "Authorization": f"Bearer {self.token}"})
                return json.loads(self.conn.getresponse().read())
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None  # a keep-alive connection the server closed: once more, anew
                if attempt:
                    raise


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client(index, user, transport, sock, port, token, cwd, seconds, think, out):
    """One client's loop; puts (records, acknowledged submissions) on `out`."""
    become(user)
    rng = random.Random(index)
    web = HttpClient(port, token) if transport == "http" else None
    call = web.call if web else (lambda r: socket_call(sock, r))
    records, acked, mine, n, said = [], [], [], 0, {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if think > 0:
            time.sleep(rng.expovariate(1000.0 / think))
        roll = rng.random()
        if roll < 0.4 or not mine:
            n += 1
            name = f"L{index}-{n}"
            request = {"op": "submit", "job": {"command": ["true"], "cwd": cwd, "env": {"PATH": "/usr/bin:/bin"},
                                               "name": name, "output": "/dev/null", "time_limit": 600}}
        elif roll < 0.7:
            request = {"op": "queue"}
        elif roll < 0.9:
            request = {"op": "show", "job_id": rng.choice(mine)}
        else:
            request = {"op": "cancel", "job_ids": [mine.pop(rng.randrange(len(mine)))]}
        t0 = time.perf_counter()
        try:
            reply = call(request)
            code = "ok" if reply.get("ok", True) and "error" not in reply else reply["error"]["code"]
            if code != "ok" and code not in said:
                said[code] = reply["error"].get("message", "")
        except (OSError, ValueError, http.client.HTTPException) as e:
            reply, code = {}, "transport: " + type(e).__name__
        records.append((request["op"], transport, time.perf_counter() - t0, code))
        if request["op"] == "submit" and code == "ok":
            acked.append((name, reply["job_id"]))
            mine.append(reply["job_id"])
    out.put((records, acked, said))


def probe(user, sock, rota, seconds, out):
    """The other user: `rota queue` (the command) and the queue call, every 100 ms."""
    become(user)
    env = {"PATH": "/usr/bin:/bin", "ROTA_SOCKET": sock, "LANG": "C.UTF-8"}
    cli, api = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        r = subprocess.run([rota, "queue"], env=env, capture_output=True)
        cli.append(time.perf_counter() - t0 if r.returncode == 0 else float("inf"))
        t0 = time.perf_counter()
        socket_call(sock, {"op": "queue"})
        api.append(time.perf_counter() - t0)
        time.sleep(0.1)
    out.put((cli, api))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--users", type=int, default=10)
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--after", type=float, default=60, help="seconds to watch memory after the load")
    ap.add_argument("--think", type=float, default=100, help="mean milliseconds between a client's operations")
    ap.add_argument("--rotad-env", action="append", default=[], metavar="NAME=VALUE",
                    help="an environment variable of rotad's (e.g. GLIBC_TUNABLES=...), to compare settings")
    args = ap.parse_args()
    os.environ["ROTA_BIN_DIR"] = os.path.abspath(args.bin)
    import harness  # after ROTA_BIN_DIR: it reads where rotad and rota are
    from http_client import free_port

    root = os.geteuid() == 0
    users = [f"rota-load-{i}" for i in range(args.users)] if root else [None]
    prober = "rota-load-probe" if root else None
    for u in users + [prober]:
        if u:
            harness.ensure_user(u)
    port = free_port()
    d = harness.Rotad(CONFIG.format(port=port), env=dict(v.split("=", 1) for v in args.rotad_env) or None)
    d.start()
    try:
        cwd = d.dir
        tokens = {}
        for u in users:
            argv = d.command("token", "create", "--name", "load", "--json", user=u or "root")
            r = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, **d.client_env()))
            tokens[u] = json.loads(r.stdout)["token"] if r.returncode == 0 else None
            if tokens[u] is None:
                sys.exit(f"token create for {u}: {r.stderr}")
        time.sleep(1)
        pid = d.proc.pid
        idle = rss_kib(pid)
        print(f"rotad idle: {idle} KiB; {args.clients} clients for {args.seconds:.0f} s", file=sys.stderr)
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        procs = []
        for i in range(args.clients):
            transport = "socket" if i % 2 == 0 else "http"
            u = users[i % len(users)]
            procs.append(ctx.Process(target=client, args=(i, u, transport, d.socket, port, tokens[u], cwd,
                                                          args.seconds, args.think, out)))
        probe_out = ctx.Queue()
        procs.append(ctx.Process(target=probe, args=(prober, d.socket, harness.ROTA, args.seconds, probe_out)))
        peak = idle
        cpu_before = cpu_seconds(pid)
        started = time.monotonic()
        for p in procs:
            p.start()
        results = []
        while len(results) < args.clients:
            try:
                results.append(out.get(timeout=1))
            except Exception:  # queue.Empty: sample the memory meanwhile
                peak = max(peak, rss_kib(pid))
        cli, api = probe_out.get()
        for p in procs:
            p.join()
        elapsed = time.monotonic() - started
        cpu = cpu_seconds(pid) - cpu_before
        at_end = rss_kib(pid)
        peak = max(peak, at_end)
        # Everything submitted is checked before the memory watch: the jobs finish meanwhile.
        acked = [a for _, acks, _ in results for a in acks]
        records = [r for recs, _, _ in results for r in recs]
        messages = {}
        for _, _, said in results:
            for code, message in said.items():
                messages.setdefault(code, message)
        queue, ended = d.api({"op": "queue", "all": True}, {"op": "history", "since": 0, "all": True, "limit": 1000})
        stored = queue["jobs"] + ended["jobs"]
        after = ended.get("next")
        while after:
            page = d.api({"op": "history", "since": 0, "all": True, "limit": 1000, "after": after})
            stored += page["jobs"]
            after = page.get("next")
        by_name = {}
        for j in {j["id"]: j for j in stored}.values():
            by_name.setdefault(j["name"], []).append(j["id"])
        lost = [n for n, job in acked if by_name.get(n) != [job]]
        unsent = sorted(set(by_name) - {n for n, _ in acked})
        after_load = []
        for _ in range(int(args.after // 5)):
            time.sleep(5)
            after_load.append(rss_kib(pid))
        ops = {}
        for op, transport, seconds, code in records:
            o = ops.setdefault(f"{op} ({transport})", {"latencies": [], "errors": {}})
            if code == "ok":
                o["latencies"].append(seconds)
            else:
                o["errors"][code] = o["errors"].get(code, 0) + 1
        report = {
            "clients": args.clients, "users": len(users), "seconds": round(elapsed, 1), "think_ms": args.think,
            "rotad_cpu_seconds": round(cpu, 1), "rotad_cpu_ms_per_operation": round(1000 * cpu / max(1, len(records)), 2),
            "operations": {k: dict(stats_ms(v["latencies"]), per_s=round(len(v["latencies"]) / elapsed, 1),
                                   errors=v["errors"]) for k, v in sorted(ops.items())},
            "total_per_s": round(sum(1 for r in records if r[3] == "ok") / elapsed, 1),
            "other_user_rota_queue": stats_ms([c for c in cli if c != float("inf")]),
            "other_user_rota_queue_failed": sum(1 for c in cli if c == float("inf")),
            "other_user_queue_call": stats_ms(api),
            "rss_kib": {"idle": idle, "peak": peak, "end_of_load": at_end, "after_every_5s": after_load},
            "submissions_acknowledged": len(acked), "jobs_stored": sum(len(v) for v in by_name.values()),
            "lost_or_duplicated": lost[:20], "lost_or_duplicated_count": len(lost),
            "stored_never_acknowledged": unsent[:20],
            "error_messages": messages,
        }
    finally:
        d.cleanup()
    print(json.dumps(report, indent=1))
    print("| operation | count | per s | p50 ms | p99 ms | max ms | errors |\n|---|---|---|---|---|---|---|",
          file=sys.stderr)
    for k, v in report["operations"].items():
        print(f"| {k} | {v['n']} | {v['per_s']} | {v['p50']} | {v['p99']} | {v['max']} | {v['errors'] or ''} |",
              file=sys.stderr)
    for k in ("other_user_rota_queue", "other_user_queue_call"):
        v = report[k]
        print(f"| {k} | {v['n']} | | {v['p50']} | {v['p99']} | {v['max']} | |", file=sys.stderr)
    return 0 if not lost and not unsent else 1


if __name__ == "__main__":
    sys.exit(main())
