"""Submits N trivial jobs over ONE connection to rotad, pipelined (requests written in chunks
without waiting for each reply), and prints {"api_submit_per_s": ..., "api_submit_n": N}.
Usage: api_submit.py SOCKET N CWD"""
import json
import socket
import sys
import time

path, n, cwd = sys.argv[1], int(sys.argv[2]), sys.argv[3]
req = json.dumps({"v": 1, "op": "submit", "job": {"command": ["true"], "cwd": cwd, "env": {"PATH": "/usr/bin:/bin"},
                                                   "request": {"kind": "gpus", "gpus": 1}, "output": "/dev/null"}})
s = socket.socket(socket.AF_UNIX)
s.connect(path)
f = s.makefile("rwb")
chunk = 100
t0 = time.time()
done = 0
while done < n:
    k = min(chunk, n - done)
    f.write(((req + "\n") * k).encode())
    f.flush()
    for _ in range(k):
        reply = json.loads(f.readline())
        if not reply.get("ok"):
            sys.exit("submit failed: %r" % reply)
    done += k
t1 = time.time()
print(json.dumps({"api_submit_per_s": round(n / (t1 - t0), 1), "api_submit_n": n}))
