# Common harness for bench/daemon/{baseline_slurm,baseline_tsp,rota}.sh.  Source it, define the
# hooks below, then call `bench_main SYSTEM`.  It runs the same three phases for every system
# and prints one JSON object on stdout (progress goes to stderr).
#
# Hooks a system script must define (all output is discarded unless noted):
#   sys_submit_prepare       before phase 1: make sure submitted jobs will NOT run during the loop
#                            (Slurm: nothing, jobs are submitted held; tsp: a blocker job, 1 slot)
#   sys_submit_trivial       ONE process invocation that submits a trivial job (`true`)
#   sys_submit_cleanup       after phase 1: remove/cancel those jobs
#   sys_submit_gpu CMD       ONE invocation submitting a 1-GPU job that runs `sh -c "$CMD"`
#   sys_reset                block until the system is idle and ready for the next phase
#   sys_cleanup (optional)   run on exit (also on error/signal) BEFORE the work dir is removed:
#                            stop daemons, cancel leftovers. Don't set your own EXIT trap.
#
# Tunables (environment):
#   GPUS=4            GPUs (slots) the system schedules on
#   SUBMIT_N=500      phase 1: serial submissions
#   HANDOFF_N=50      phase 2: latency samples (jobs that had to wait for a GPU)
#   HANDOFF_SLEEP=1   phase 2: seconds each job holds its GPU
#   JOBS_N=1000       phase 3: trivial 1-GPU jobs (if != 1000, jobs1000_s is null and
#                     jobs1000_s_extrapolated = jobs_s * 1000 / JOBS_N is reported instead)
#   PHASES=submit,handoff,jobs
#   PHASE_TIMEOUT=1800  seconds before a phase-2/3 wait gives up
#   BENCH_KEEP=1      keep the work directory (job logs) for inspection
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATS="python3 $BENCH_DIR/stats.py"
: "${GPUS:=4}" "${SUBMIT_N:=500}" "${HANDOFF_N:=50}" "${HANDOFF_SLEEP:=1}" "${JOBS_N:=1000}"
: "${PHASES:=submit,handoff,jobs}" "${PHASE_TIMEOUT:=1800}"

log() { echo "[$(date +%T)] $*" >&2; }
now_ns() { date +%s%N; }

# Work dir: job logs + per-phase JSON. World-writable so jobs run as any user can write it.
bench_mkwork() {
  WORK="$(mktemp -d "/tmp/rota-bench-$1.XXXXXX")"
  chmod 777 "$WORK"
  trap _bench_exit EXIT
  trap "exit 130" INT; trap "exit 143" TERM
}
_bench_exit() {
  local rc=$?
  set +e
  declare -F sys_cleanup >/dev/null && sys_cleanup
  if [ "${BENCH_KEEP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
  return $rc
}

# The job bodies, identical for every system (run by `sh -c`).
handoff_cmd() { # LOG: start/end stamps around a sleep that holds the GPU
  echo "echo S \$(date +%s.%N) >> $1; sleep $HANDOFF_SLEEP; echo E \$(date +%s.%N) >> $1"
}
done_cmd() { echo "date +%s.%N >> $1"; } # trivial job: one completion stamp

# wait_lines FILE N TIMEOUT_S: poll (every 0.2 s, forking only `sleep`, to keep the 2 cores
# free for the system under test) until FILE has >= N lines. Results never depend on the poll
# interval: they are computed from the timestamps the jobs themselves wrote.
wait_lines() {
  local f=$1 n=$2 deadline=$((SECONDS + $3)) have
  while :; do
    have=0
    if [ -f "$f" ]; then mapfile -t _lines < "$f"; have=${#_lines[@]}; fi
    [ "$have" -ge "$n" ] && return 0
    [ "$SECONDS" -ge "$deadline" ] && { log "timeout: $f has $have/$n lines"; return 1; }
    sleep 0.2
  done
}

phase_submit() {
  log "phase 1: $SUBMIT_N serial submissions"
  sys_submit_prepare
  local i t0 t1
  t0=$(now_ns)
  for ((i = 0; i < SUBMIT_N; i++)); do sys_submit_trivial >/dev/null; done
  t1=$(now_ns)
  $STATS submit "$SUBMIT_N" "$t0" "$t1" > "$WORK/submit.json"
  log "  $(cat "$WORK/submit.json")"
  sys_submit_cleanup
  sys_reset
}

phase_handoff() {
  local total=$((HANDOFF_N + GPUS)) cmd i
  log "phase 2: $total jobs x ${HANDOFF_SLEEP}s on $GPUS GPUs -> $HANDOFF_N exit->start samples"
  cmd="$(handoff_cmd "$WORK/handoff.log")"
  for ((i = 0; i < total; i++)); do sys_submit_gpu "$cmd" >/dev/null; done
  if wait_lines "$WORK/handoff.log" $((2 * total)) "$PHASE_TIMEOUT"; then
    $STATS handoff "$WORK/handoff.log" "$GPUS" > "$WORK/handoff.json"
  else
    echo '{"handoff_error":"timeout"}' > "$WORK/handoff.json"
  fi
  log "  $(cat "$WORK/handoff.json")"
  sys_reset
}

phase_jobs() {
  local cmd i t0 t1 t0s
  log "phase 3: $JOBS_N trivial 1-GPU jobs on $GPUS GPUs, first submit -> last completion"
  cmd="$(done_cmd "$WORK/jobs.log")"
  t0s=$(date +%s.%N)
  t0=$(now_ns)
  for ((i = 0; i < JOBS_N; i++)); do sys_submit_gpu "$cmd" >/dev/null; done
  t1=$(now_ns)
  log "  submitted in $(( (t1 - t0) / 1000000 )) ms"
  if wait_lines "$WORK/jobs.log" "$JOBS_N" "$PHASE_TIMEOUT"; then
    $STATS makespan "$WORK/jobs.log" "$t0s" "$JOBS_N" > "$WORK/jobs.json"
  else
    echo "{\"jobs_n\":$JOBS_N,\"jobs_error\":\"timeout\"}" > "$WORK/jobs.json"
  fi
  log "  $(cat "$WORK/jobs.json")"
  sys_reset
}

# bench_main SYSTEM [k=v ...]: run the selected phases, print the summary JSON.
bench_main() {
  local system=$1 load0; shift
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  log "$system: work dir $WORK (GPUS=$GPUS SUBMIT_N=$SUBMIT_N HANDOFF_N=$HANDOFF_N JOBS_N=$JOBS_N)"
  sys_reset
  case ",$PHASES," in *,submit,*) phase_submit;; esac
  case ",$PHASES," in *,handoff,*) phase_handoff;; esac
  case ",$PHASES," in *,jobs,*) phase_jobs;; esac
  $STATS assemble "$system" "$WORK" gpus="$GPUS" handoff_sleep_s="$HANDOFF_SLEEP" \
    host="\"$(hostname -s)\"" nproc="$(nproc)" \
    loadavg_start="\"$load0\"" loadavg_end="\"$(cut -d' ' -f1-3 /proc/loadavg)\"" date="\"$(date -u +%FT%TZ)\"" "$@"
}
