#!/usr/bin/env bash
# GPU notification smoke test, for a machine with a real NVIDIA GPU (issue 6): a process that
# holds GPU memory outside Rota (gpu_hold started directly) must be reported by a real rotad
# (source = "nvml") to the admin channel, a generic webhook received by a small Python HTTP server
# here, exactly once; `rota notify test` must reach the same receiver. Prints
# "gpu-notify-smoke: OK: ..." or "gpu-notify-smoke: FAIL: <what>" (exit 1); cleans up on any exit.
#
#   scripts/gpu-notify-smoke.sh [BUILD_DIR]
#   ROTA_SMOKE_PREBUILT=1 scripts/gpu-notify-smoke.sh DIR   # binaries packed by gpu-smoke-pack.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
fail() {
  echo "gpu-notify-smoke: FAIL: $*" >&2
  exit 1
}
# shellcheck source=scripts/smoke-build.sh
. scripts/smoke-build.sh
smoke_build "$build" rotad rota rota-shepherd gpu_hold  # sets build (absolute), lib_path
tmp="$(mktemp -d /tmp/rota-gpu-notify.XXXXXX)"
pids=()
cleanup() {
  local rc=$?
  trap - EXIT
  set +e
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  if [[ $rc -ne 0 ]]; then
    echo "--- rotad log (last 30 lines) ---" >&2
    tail -n 30 "$tmp/rotad.log" >&2 2>/dev/null
    echo "--- received ---" >&2
    cat "$tmp"/got-* >&2 2>/dev/null
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT

# The receiver: each POST body saved as got-N, answered 200.
cat >"$tmp/receiver.py" <<'PY'
import http.server, itertools, os, sys
counter = itertools.count(1)
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        path = os.path.join(sys.argv[1], "got-%d" % next(counter))
        with open(path + ".tmp", "wb") as f:
            f.write(body)
        os.rename(path + ".tmp", path)
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$tmp/receiver.py" "$tmp" >"$tmp/port" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [[ -s "$tmp/port" ]] && break; sleep 0.1; done
port="$(head -1 "$tmp/port")"
[[ "$port" =~ ^[0-9]+$ ]] || fail "the receiver did not start: $(cat "$tmp/port")"

cat >"$tmp/rota.toml" <<EOF2
[gpus]
source = "nvml"
sample_interval = "1s"
[notify]
language = "en"
admin_channels = ["hook"]
[notify.channels.hook]
type = "webhook"
url = "http://127.0.0.1:$port/rota"
EOF2
sock="$tmp/run/rota.sock"
rota() { LD_LIBRARY_PATH="$lib_path" timeout 30 "$build/rota" --socket "$sock" "$@"; }
LD_LIBRARY_PATH="$lib_path" "$build/rotad" --config "$tmp/rota.toml" --state-dir "$tmp/state" --socket "$sock" >"$tmp/rotad.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do rota status >/dev/null 2>&1 && break; sleep 0.2; done
rota status >/dev/null 2>&1 || fail "rotad did not answer"

out="$(rota notify test)" || fail "rota notify test failed: $out"
echo "$out"
grep -q '"event":"test"' "$tmp"/got-* || fail "the test message did not arrive"

LD_LIBRARY_PATH="$lib_path" "$build/gpu_hold" 1024 90 >"$tmp/hold.out" 2>&1 &
hold=$!
pids+=($hold)
found=""
for _ in $(seq 1 60); do
  found="$(grep -l '"event":"outside_process"' "$tmp"/got-* 2>/dev/null || true)"
  [[ -n "$found" ]] && break
  sleep 1
done
[[ -n "$found" ]] || fail "no outside_process message within 60 s (gpu_hold: $(cat "$tmp/hold.out"))"
grep -q "Process $hold " $found || fail "the message does not name pid $hold: $(cat $found)"
sleep 5
n="$(grep -l '"event":"outside_process"' "$tmp"/got-* | wc -l)"
[[ "$n" -eq 1 ]] || fail "$n outside_process messages for one process (want 1)"
echo "gpu-notify-smoke: OK: $(cat $found)"
