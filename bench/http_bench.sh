#!/usr/bin/env bash
# Reads per second of the HTTP API: wrk against GET /api/status with an API token on loopback,
# a user-mode rotad on simulated GPUs in a temporary directory. Prints the wrk report and one
# Markdown line for docs/benchmarks.md.
# Usage: bench/http_bench.sh [build dir] [seconds] [connections] [wrk threads]
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-10}
CONNS=${3:-8}
THREADS=${4:-2}
command -v wrk >/dev/null || { echo "wrk is missing: scripts/install-deps.sh" >&2; exit 1; }
DIR=$(mktemp -d /tmp/rota-http-bench-XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$DIR/rota.toml" <<TOML
[gpus]
source = "simulated"
[[gpus.card]]
model = "NVIDIA A100-SXM4-80GB"
memory = "80G"
count = 4
[web]
listen = "127.0.0.1:$PORT"
rate = 0
TOML
"$BUILD/rotad" --config "$DIR/rota.toml" --state-dir "$DIR/state" --socket "$DIR/rota.sock" > "$DIR/rotad.log" 2>&1 &
ROTAD=$!
trap 'kill $ROTAD 2>/dev/null; wait $ROTAD 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 100); do [ -S "$DIR/rota.sock" ] && break; sleep 0.1; done
TOKEN=$(ROTA_SOCKET="$DIR/rota.sock" "$BUILD/rota" token create --name bench --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
CMD="wrk -t$THREADS -c$CONNS -d${SECS}s -H 'Authorization: Bearer <token>' http://127.0.0.1:$PORT/api/status"
echo "$CMD"
OUT=$(wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/status")
echo "$OUT"
RPS=$(echo "$OUT" | awk '/Requests\/sec/ {print $2}')
LAT=$(echo "$OUT" | awk '/Latency/ {print $2; exit}')
NON2XX=$(echo "$OUT" | awk '/Non-2xx/ {print $NF}')
echo
echo "| GET /api/status, token, $CONNS connections, $THREADS wrk threads, ${SECS}s | $RPS req/s | avg latency $LAT | non-2xx ${NON2XX:-0} |"
