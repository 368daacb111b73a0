#!/usr/bin/env bash
# Baseline: task-spooler (Debian package task-spooler, binary `tsp`), GPUS slots standing in
# for GPUs. Uses a private server (own TS_SOCKET under the work dir), killed at the end, so the
# user's default tsp queue is never touched. tsp keeps its queue in memory only (no
# durability: a server crash loses every queued job), and each queued job is a waiting client
# process. See README.md.   Usage: bench/daemon/baseline_tsp.sh  (env: see lib.sh)
source "$(dirname "$0")/lib.sh"
TSP=${TSP:-$(command -v tsp || command -v ts || true)}
[ -x "$TSP" ] || { echo "tsp not found: apt-get install -y task-spooler" >&2; exit 1; }

bench_mkwork tsp
export TS_SOCKET="$WORK/tsp.sock" TMPDIR="$WORK"
export TS_MAXCONN=${TS_MAXCONN:-5000} TS_MAXFINISHED=${TS_MAXFINISHED:-5000}
unset TS_SLOTS TS_ONFINISH TS_ENV TS_SAVELIST

server_up() { "$TSP" -S "$GPUS" >/dev/null; } # any client call starts the server
server_down() {
  [ -S "$TS_SOCKET" ] || return 0
  local id pid
  # running jobs survive `tsp -K`: SIGTERM them (their process group) first
  for id in $("$TSP" -l 2>/dev/null | awk '$2 == "running" {print $1}'); do
    "$TSP" -k "$id" 2>/dev/null || true
  done
  "$TSP" -K 2>/dev/null || true # queued jobs' client processes exit with the server
  for _ in $(seq 50); do [ -S "$TS_SOCKET" ] || break; sleep 0.1; done
  rm -f "$TS_SOCKET"
}
sys_cleanup() { server_down; }

BLOCKER=
sys_submit_prepare() { # one slot, held by a long job: every submission just queues
  "$TSP" -S 1
  BLOCKER=$("$TSP" -n sleep 3600)
  sleep 0.2
}
sys_submit_trivial() { "$TSP" -n true; }
sys_submit_cleanup() { server_down; }
sys_submit_gpu() { "$TSP" -n sh -c "$1"; }
sys_reset() {
  [ -S "$TS_SOCKET" ] || server_up
  # wait for the queue to drain (phases 2/3 already waited for their jobs' own stamps)
  for _ in $(seq 600); do
    "$TSP" -l | awk 'NR > 1 && ($2 == "running" || $2 == "queued") {b = 1} END {exit b}' && break
    sleep 0.2
  done
  "$TSP" -C # clear finished jobs
  "$TSP" -S "$GPUS"
}

bench_main tsp tsp_version="\"$("$TSP" -V 2>&1 | head -1)\"" durable=false
