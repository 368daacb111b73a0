# rotad on simulated cards for the rota benchmarks (rota.sh, pass_cost.sh). Source it with
# ROTAD, ROTA and WORK set, then:
#   rotad_sim_start GPUS [EXTRA_TOML]   config in $WORK/rota.toml, rotad in the background
#                                       (ROTAD_PID), its socket $ROTA_SOCKET; returns once it answers
#   rotad_sim_hold_all GPUS             one job holds every card (BLOCKER), running when it returns
rotad_sim_start() {
  local gpus=$1 extra=${2:-}
  export ROTA_SOCKET="$WORK/rota.sock"
  cat > "$WORK/rota.toml" <<TOML
allow_root_jobs = true   # the baselines run as root too
$extra
[gpus]
source = "simulated"
[[gpus.card]]
model = "NVIDIA A100-SXM4-80GB"
memory = "80G"
count = $gpus
TOML
  "$ROTAD" --config "$WORK/rota.toml" --state-dir "$WORK/state" --socket "$ROTA_SOCKET" > "$WORK/rotad.log" 2>&1 &
  ROTAD_PID=$!
  for _ in $(seq 100); do "$ROTA" status >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "rotad did not answer; its log: $WORK/rotad.log" >&2
  return 1
}

# (Its start is decided by a pass up to 5 ms later: it is waited for.)
rotad_sim_hold_all() {
  BLOCKER=$("$ROTA" submit --parsable --gpus "$1" --time 2h --output /dev/null -- sleep 3600)
  for _ in $(seq 100); do
    "$ROTA" show --json "$BLOCKER" | grep -q '"state": *"running"' && return 0
    sleep 0.05
  done
  echo "warning: the blocker $BLOCKER did not start" >&2
}
