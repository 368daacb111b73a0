#!/usr/bin/env bash
# Rota: rotad + the rota CLI on 4 simulated GPUs, with a private socket and state directory under
# the work dir, measured with the same phases as the baselines (lib.sh). Extra numbers, measured
# after the common phases: submissions over one API connection (pipelined), submissions from 8
# parallel rota processes, the daemon's resident memory and its CPU while idle.
# Usage: bench/daemon/rota.sh   (env: see lib.sh; ROTAD/ROTA default to build/rotad, build/rota)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rotad_sim.sh"
ROOT="$(cd "$BENCH_DIR/../.." && pwd)"
ROTAD=${ROTAD:-$ROOT/build/rotad}
ROTA=${ROTA:-$ROOT/build/rota}
[ -x "$ROTAD" ] && [ -x "$ROTA" ] || { echo "build rotad and rota first (make build)" >&2; exit 1; }

bench_mkwork rota
ROTAD_PID=
sys_cleanup() {
  "$ROTA" queue --all --json 2>/dev/null | python3 -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)))' \
    | xargs -r "$ROTA" cancel >/dev/null 2>&1
  [ -z "$ROTAD_PID" ] || { kill "$ROTAD_PID" 2>/dev/null; wait "$ROTAD_PID" 2>/dev/null; }
}
rotad_sim_start "$GPUS"

active_ids() { "$ROTA" queue --all --json | python3 -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)))'; }
BLOCKER=
# The blocker holds every GPU before the loop starts: submitted jobs must only queue.
sys_submit_prepare() { rotad_sim_hold_all "$GPUS"; }
sys_submit_trivial() { "$ROTA" submit --parsable --gpus 1 --output /dev/null -- true; }
sys_submit_cleanup() { local ids; ids=$(active_ids); if [ -n "$ids" ]; then "$ROTA" cancel $ids >/dev/null 2>&1 || true; fi; }
sys_submit_gpu() { "$ROTA" submit --parsable --gpus 1 --output /dev/null -- sh -c "$1"; }
sys_reset() {
  for _ in $(seq 3000); do [ -z "$(active_ids)" ] && return 0; sleep 0.1; done
  log "warning: jobs still queued after 300 s"
}

# The extras, measured once the common phases have run (their JSON is merged into the summary).
extras() {
  local n=2000 t0 t1
  log "extra: $n submissions over one API connection (pipelined), all GPUs held"
  sys_submit_prepare
  python3 "$BENCH_DIR/api_submit.py" "$ROTA_SOCKET" "$n" "$WORK" > "$WORK/api.json"
  log "  $(cat "$WORK/api.json")"
  sys_submit_cleanup; sys_reset
  log "extra: 1000 submissions from 8 parallel rota processes"
  sys_submit_prepare
  t0=$(now_ns)
  seq 1000 | xargs -P 8 -I{} "$ROTA" submit --parsable --gpus 1 --output /dev/null -- true >/dev/null
  t1=$(now_ns)
  python3 -c "print('{\"parallel8_submit_per_s\": %.1f}' % (1000 / (($t1 - $t0) / 1e9)))" > "$WORK/parallel.json"
  log "  $(cat "$WORK/parallel.json")"
  sys_submit_cleanup; sys_reset
  log "extra: daemon memory and idle CPU over 10 s"
  local rss ticks0 ticks1 hz
  hz=$(getconf CLK_TCK)
  ticks0=$(awk '{print $14 + $15}' "/proc/$ROTAD_PID/stat")
  sleep 10
  ticks1=$(awk '{print $14 + $15}' "/proc/$ROTAD_PID/stat")
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$ROTAD_PID/status")
  python3 -c "print('{\"rotad_rss_kib\": $rss, \"rotad_idle_cpu_percent\": %.3f}' % (($ticks1 - $ticks0) / $hz / 10 * 100))" > "$WORK/idle.json"
  log "  $(cat "$WORK/idle.json")"
}
# The extras run first (the common phases reset the daemon between phases anyway).
case ",${EXTRAS:-1}," in *,0,*) : > "$WORK/api.json"; echo '{}' > "$WORK/api.json"; echo '{}' > "$WORK/parallel.json"; echo '{}' > "$WORK/idle.json";; *) extras;; esac
# shellcheck disable=SC2046
bench_main rota rota_version="\"$("$ROTA" --version | awk '{print $2}')\"" durable=true \
  $(python3 -c 'import json,sys; d={}; [d.update(json.load(open(f))) for f in sys.argv[1:]]; print(" ".join(f"{k}={json.dumps(v)}" for k,v in d.items()))' "$WORK/api.json" "$WORK/parallel.json" "$WORK/idle.json")
