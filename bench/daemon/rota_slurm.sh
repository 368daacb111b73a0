#!/usr/bin/env bash
# Rota on Slurm: rotad with [engine] kind = "slurm" and [gpus] source = "slurm" in front of the
# same single-node Slurm that baseline_slurm.sh measures (/work/shared/slurm-local, 4 fake GPUs),
# measured with the same phases (lib.sh). rota runs as a real user (sbatch runs as the job's
# owner; rotad never submits as root), BENCH_USER (default rota-bench, created if missing).
# Usage: bench/daemon/rota_slurm.sh [--tuned] [--poke] [--epilog]  (--tuned: Slurm's
# batch_sched_delay=0, sched_min_interval=0, as baseline_slurm.sh --tuned; --poke: EpilogSlurmctld
# runs `rota poke`; --epilog: slurmd's Epilog runs `rota poke --wait`; README "Slurm as the
# engine"). POLL (default 1) sets rotad's poll_interval. /etc/slurm/slurm.conf is restored on exit.
# Another cluster: export its SLURM_CONF first (it must be running; e.g.
# /work/shared/slurm-local/two-node.sh start; without --tuned/--poke/--epilog, which edit /etc/slurm).
: "${HANDOFF_N:=20}" "${JOBS_N:=100}" "${POLL:=1}"
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$BENCH_DIR/../.." && pwd)"
ROTAD=${ROTAD:-$ROOT/build/rotad}
ROTA_BIN=${ROTA:-$ROOT/build/rota}
SLURM_LOCAL=${SLURM_LOCAL:-/work/shared/slurm-local}
CONF=/etc/slurm/slurm.conf
BENCH_USER=${BENCH_USER:-rota-bench}
SYSTEM=rota-slurm TUNED=0 POKE=0 EPILOG=0
for arg in "$@"; do
  case "$arg" in --tuned) TUNED=1;; --poke) POKE=1;; --epilog) EPILOG=1;; *) echo "unknown option $arg" >&2; exit 2;; esac
done
[ "$TUNED" = 1 ] && SYSTEM=$SYSTEM-tuned
[ "$POKE" = 1 ] && SYSTEM=$SYSTEM-poke
[ "$EPILOG" = 1 ] && SYSTEM=$SYSTEM-epilog
[ -x "$ROTAD" ] && [ -x "$ROTA_BIN" ] || { echo "build rotad and rota first (make build)" >&2; exit 1; }
id "$BENCH_USER" >/dev/null 2>&1 || useradd --create-home "$BENCH_USER"

slurm_up() { timeout 3 scontrol ping 2>/dev/null | grep -q UP; }
bench_mkwork "$SYSTEM"
chmod 1777 "$WORK"
export ROTA_SOCKET="$WORK/rota.sock"
ROTA=(setpriv --reuid="$BENCH_USER" --regid="$BENCH_USER" --init-groups -- env ROTA_SOCKET="$ROTA_SOCKET" "$ROTA_BIN")
STARTED=0 CONF_SAVED= ROTAD_PID=
sys_cleanup() {
  [ -n "$ROTAD_PID" ] && { kill "$ROTAD_PID" 2>/dev/null; wait "$ROTAD_PID" 2>/dev/null; }
  scancel -u "$BENCH_USER" 2>/dev/null
  if [ -n "$CONF_SAVED" ]; then cp "$CONF_SAVED" "$CONF"; rm -f "$CONF_SAVED"; [ "$STARTED" = 1 ] || scontrol reconfigure; fi
  if [ "$STARTED" = 1 ] && [ "${SLURM_KEEP:-0}" != 1 ]; then "$SLURM_LOCAL/stop.sh" >&2; fi
}
if ! slurm_up; then "$SLURM_LOCAL/start.sh" --clean >&2; STARTED=1; fi
if [ "$TUNED" = 1 ] || [ "$POKE" = 1 ] || [ "$EPILOG" = 1 ]; then
  CONF_SAVED="$(mktemp)"; cp "$CONF" "$CONF_SAVED"
  if [ "$TUNED" = 1 ]; then
    sed -i '/^SchedulerParameters=/d' "$CONF"; echo "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0" >> "$CONF"
  fi
  if [ "$POKE" = 1 ]; then
    printf '#!/bin/sh\nexec %s poke --socket %s\n' "$ROTA_BIN" "$ROTA_SOCKET" > "$WORK/rota-poke"
    chmod 755 "$WORK/rota-poke"
    sed -i '/^EpilogSlurmctld=/d' "$CONF"; echo "EpilogSlurmctld=$WORK/rota-poke" >> "$CONF"
  fi
  if [ "$EPILOG" = 1 ]; then
    # As the README's: an Epilog that fails drains the node, so it always exits 0.
    printf '#!/bin/sh\n%s poke --wait --socket %s >/dev/null 2>&1\nexit 0\n' "$ROTA_BIN" "$ROTA_SOCKET" > "$WORK/rota-epilog"
    chmod 755 "$WORK/rota-epilog"
    sed -i '/^Epilog=/d' "$CONF"; echo "Epilog=$WORK/rota-epilog" >> "$CONF"
  fi
  scontrol reconfigure; sleep 1
fi
cat > "$WORK/rota.toml" <<TOML
[gpus]
source = "slurm"
[engine]
kind = "slurm"
slurm_conf = "${SLURM_CONF:-}"
poll_interval = $POLL
gpu_memory = "80G"
[limits]
submit_rate = 0
pending_per_user = 0
TOML
"$ROTAD" --config "$WORK/rota.toml" --state-dir "$WORK/state" --socket "$ROTA_SOCKET" > "$WORK/rotad.log" 2>&1 &
ROTAD_PID=$!
for _ in $(seq 100); do "${ROTA[@]}" status >/dev/null 2>&1 && break; sleep 0.1; done

active_ids() { "${ROTA[@]}" queue --all --json | python3 -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)))'; }
BLOCKER=
sys_submit_prepare() {
  BLOCKER=$("${ROTA[@]}" submit --parsable --gpus "$GPUS" --output /dev/null -- sleep 3600)
  for _ in $(seq 100); do
    "${ROTA[@]}" show --json "$BLOCKER" | grep -q '"state": *"running"' && return 0
    sleep 0.05
  done
}
sys_submit_trivial() { "${ROTA[@]}" submit --parsable --gpus 1 --output /dev/null -- true; }
sys_submit_cleanup() { local ids; ids=$(active_ids); if [ -n "$ids" ]; then "${ROTA[@]}" cancel $ids >/dev/null 2>&1 || true; fi; }
sys_submit_gpu() { "${ROTA[@]}" submit --parsable --gpus 1 --output /dev/null -- sh -c "$1"; }
sys_reset() {
  for _ in $(seq 3000); do [ -z "$(active_ids)" ] && return 0; sleep 0.1; done
  log "warning: jobs still queued after 300 s"
}
bench_main "$SYSTEM" slurm_version="\"$(sinfo -V)\"" poll_interval="$POLL"
