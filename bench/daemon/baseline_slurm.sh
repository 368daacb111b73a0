#!/usr/bin/env bash
# Baseline: single-node Slurm 22.05 (Debian slurm-wlm) with 4 fake GPUs, set up by
# /work/shared/slurm-local (override with SLURM_LOCAL=...). See README.md.
#
# Usage: bench/daemon/baseline_slurm.sh [--tuned | --epilog]
#   --tuned  SchedulerParameters=batch_sched_delay=0,sched_min_interval=0 (system "slurm-tuned");
#   --epilog a node Epilog that does nothing (system "slurm-epilog"): any Epilog makes slurmctld
#            schedule at each end's epilog-complete, as rota_slurm.sh --epilog's hook does;
#   /etc/slurm/slurm.conf is restored (and Slurm reconfigured) on exit.
# If Slurm is not running it is started with `start.sh --clean` and stopped again on exit
# (SLURM_KEEP=1 leaves it running). A running Slurm is used as is, but its queue must be empty.
# Defaults differ from lib.sh because Slurm hands a freed GPU on only every ~3 s:
#   HANDOFF_N=20, JOBS_N=100 (jobs1000_s is then null and jobs1000_s_extrapolated is reported;
#   JOBS_N=1000 takes ~10 min stock).
: "${HANDOFF_N:=20}" "${JOBS_N:=100}"
source "$(dirname "$0")/lib.sh"
SLURM_LOCAL=${SLURM_LOCAL:-/work/shared/slurm-local}
CONF=/etc/slurm/slurm.conf
TUNED_PARAMS="batch_sched_delay=0,sched_min_interval=0"
SYSTEM=slurm
[ "${1:-}" = "--tuned" ] && SYSTEM=slurm-tuned
[ "${1:-}" = "--epilog" ] && SYSTEM=slurm-epilog
JOBNAME=rota-bench

slurm_up() { timeout 3 scontrol ping 2>/dev/null | grep -q UP; }

bench_mkwork "$SYSTEM"
STARTED=0 CONF_SAVED=
sys_cleanup() {
  scancel -n "$JOBNAME" 2>/dev/null
  if [ -n "$CONF_SAVED" ]; then
    cp "$CONF_SAVED" "$CONF"; rm -f "$CONF_SAVED"
    [ "$STARTED" = 1 ] || scontrol reconfigure
  fi
  if [ "$STARTED" = 1 ] && [ "${SLURM_KEEP:-0}" != 1 ]; then
    log "stopping Slurm (we started it)"; "$SLURM_LOCAL/stop.sh" >&2
  fi
}

if ! slurm_up; then
  log "Slurm not running: $SLURM_LOCAL/start.sh --clean"
  "$SLURM_LOCAL/start.sh" --clean >&2
  STARTED=1
fi
if [ "$SYSTEM" = slurm-tuned ]; then
  CONF_SAVED="$(mktemp)"; cp "$CONF" "$CONF_SAVED"
  sed -i '/^SchedulerParameters=/d' "$CONF"
  echo "SchedulerParameters=$TUNED_PARAMS" >> "$CONF"
  scontrol reconfigure
  sleep 1
fi
if [ "$SYSTEM" = slurm-epilog ]; then
  CONF_SAVED="$(mktemp)"; cp "$CONF" "$CONF_SAVED"
  printf '#!/bin/sh\nexit 0\n' > "$WORK/null-epilog"; chmod 755 "$WORK/null-epilog"
  sed -i '/^Epilog=/d' "$CONF"; echo "Epilog=$WORK/null-epilog" >> "$CONF"
  scontrol reconfigure
  sleep 1
fi
SCHED_PARAMS="$(scontrol show config | awk -F' = ' '/^SchedulerParameters/ {print $2}')"
log "SchedulerParameters = ${SCHED_PARAMS:-(null)}"
if [ -n "$(squeue -h -t PD,R,CG,CF,S)" ]; then
  echo "Slurm queue is not empty; refusing to benchmark:" >&2; squeue >&2; exit 1
fi

SB=(sbatch -Q -J "$JOBNAME" -D "$WORK" -o /dev/null -e /dev/null)
sys_submit_prepare() { :; }
# Held (-H) so nothing runs during the submit loop; same 1-GPU request as the other phases.
sys_submit_trivial() { "${SB[@]}" -H --gres=gpu:1 --wrap true; }
sys_submit_cleanup() { scancel -n "$JOBNAME"; }
sys_submit_gpu() { "${SB[@]}" --gres=gpu:1 --wrap "$1"; }
sys_reset() { # until no job of ours is pending/running/completing
  for _ in $(seq 600); do
    [ -z "$(squeue -h -n "$JOBNAME" -t PD,R,CG,CF,S 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  log "warning: jobs still queued after 300 s"
}

bench_main "$SYSTEM" slurm_version="\"$(sinfo -V)\"" \
  scheduler_parameters="\"${SCHED_PARAMS:-(null)}\"" durable=true
