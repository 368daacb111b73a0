#!/usr/bin/env bash
# GPU smoke test, for a machine with a real NVIDIA GPU and driver (issue 4). Two parts:
#  1. nvml_probe loads the real libnvidia-ml through Rota's NVML backend and prints every card and
#     MIG instance; fails when NVML cannot be loaded, reports no card, or a card is unhealthy.
#  2. A real rotad (source = "nvml") runs one job, gpu_hold, that allocates 1 GiB on its card
#     through the CUDA driver; the daemon's `gpus` reply must show a process of that job using
#     >= 1000 MiB within 60 s (process attribution). The job is then cancelled and must end.
# Prints "gpu-smoke: OK: ..." or "gpu-smoke: FAIL: <what>" (exit 1). Takes under 5 minutes, most of
# it the build; every step runs under `timeout`, and rotad, the job and the temporary directory
# are cleaned up on any exit.
#
#   scripts/gpu-smoke.sh [BUILD_DIR]        # default: build/ (configured here if it is not yet)
#   ROTA_NVML_LIBRARY=/path/libnvidia-ml.so.1 scripts/gpu-smoke.sh
#   ROTA_SMOKE_PREBUILT=1 scripts/gpu-smoke.sh DIR   # binaries already in DIR, built elsewhere
#                                                   # (scripts/gpu-smoke-pack.sh makes such a DIR)
#
# As root (the device machines run it so), the config sets allow_root_jobs, since there is no
# other user to run the job as; otherwise rotad runs in user mode and the job runs as the caller.
# Without a GPU it can be run against the fake library to check the script itself:
#   ROTA_NVML_LIBRARY=build/libnvidia-ml-fake.so FAKE_NVML_STATE=state.json scripts/gpu-smoke.sh
# (part 2 then fails at the attribution step unless the state lists the job's pid).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"

fail() {
  echo "gpu-smoke: FAIL: $*" >&2
  exit 1
}

# shellcheck source=scripts/smoke-build.sh
. scripts/smoke-build.sh
smoke_build "$build" rotad rota rota-shepherd nvml_probe gpu_hold  # sets build (absolute), lib_path
with_libs() { LD_LIBRARY_PATH="$lib_path" "$@"; }

tmp="$(mktemp -d /tmp/rota-gpu-smoke.XXXXXX)"
rotad_pid=""
job=""
sock="$tmp/run/rota.sock"
rota() { with_libs timeout 20 "$build/rota" --socket "$sock" "$@"; }

# Stops what this script started, whatever the exit: the job first (a shepherd outlives rotad on
# purpose, so stopping only the daemon would leave gpu_hold holding the card), then rotad.
cleanup() {
  local rc=$?
  trap - EXIT
  set +e  # clean up as much as possible, whatever fails
  if [[ -n "$job" && -n "$rotad_pid" ]] && kill -0 "$rotad_pid" 2>/dev/null; then
    rota cancel "$job" >/dev/null 2>&1 || true
    for _ in $(seq 1 50); do
      job_ended && break
      sleep 0.2
    done
  fi
  if [[ -n "$rotad_pid" ]] && kill -0 "$rotad_pid" 2>/dev/null; then
    kill -TERM "$rotad_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$rotad_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$rotad_pid" 2>/dev/null || true
  fi
  # Last resort: the job's own process, by the pid it printed, if it is still gpu_hold.
  local hold_pid
  hold_pid="$(sed -n 's/^gpu_hold: holding .* (pid \([0-9]*\))$/\1/p' "$tmp"/rota-*.out 2>/dev/null | head -1)"
  if [[ -n "$hold_pid" ]] && [[ "$(cat "/proc/$hold_pid/comm" 2>/dev/null)" == gpu_hold ]]; then
    kill -KILL "$hold_pid" 2>/dev/null || true
  fi
  if [[ $rc -ne 0 ]]; then
    echo "--- rotad log (last 30 lines) ---" >&2
    tail -n 30 "$tmp/rotad.log" >&2 2>/dev/null || true
    for f in "$tmp"/rota-*.out; do
      [[ -f "$f" ]] || continue
      echo "--- job output $(basename "$f") ---" >&2
      tail -n 20 "$f" >&2
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT

# ---- Part 1: what NVML reports. ----

probe="$tmp/probe.json"
if ! with_libs timeout 30 "$build/nvml_probe" >"$probe"; then
  fail "NVML could not be loaded or read (see above)"
fi
cat "$probe"

# Checks without jq (not always installed on GPU servers): at least one card, all healthy.
if ! grep -q '"uuid": "GPU-' "$probe"; then
  fail "NVML loaded but reported no GPU"
fi
if grep '"health":' "$probe" | grep -vq '"health": "OK"'; then
  fail "a card is unhealthy (see \"health\" above)"
fi
cards=$(grep -c '"uuid": "GPU-' "$probe")
migs=$(grep -c '"uuid": "MIG-' "$probe" || true)
echo "gpu-smoke: probe: $cards card(s), $migs MIG instance(s)"

# ---- Part 2: a job's GPU memory, attributed by rotad. ----

config="$tmp/rota.toml"
{
  if [[ $(id -u) -eq 0 ]]; then echo "allow_root_jobs = true"; fi
  echo "[gpus]"
  echo "source = \"nvml\""
} >"$config"

LD_LIBRARY_PATH="$lib_path" "$build/rotad" --config "$config" --state-dir "$tmp/state" --socket "$sock" --kill-wait 5 \
  >"$tmp/rotad.log" 2>&1 &
rotad_pid=$!
for _ in $(seq 1 100); do
  kill -0 "$rotad_pid" 2>/dev/null || fail "rotad exited at start"
  rota status >/dev/null 2>&1 && break
  sleep 0.2
done
rota status >/dev/null 2>&1 || fail "rotad did not answer on $sock within 20 s"

# The job's state ("" when rotad cannot be asked); job_ended: it reached a final state.
job_state() {
  rota show "$job" --json 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["job"]["state"])' 2>/dev/null || true
}
job_ended() {
  case "$(job_state)" in
    completed | failed | cancelled | timeout | preempted | node_fail) return 0 ;;
    *) return 1 ;;
  esac
}

job="$(cd "$tmp" && rota submit --parsable --gpus 1 --time 5m -- "$build/gpu_hold" 1024 120)" ||
  fail "rota submit was refused"
[[ "$job" =~ ^[0-9]+$ ]] || fail "rota submit printed '$job', not a job id"
echo "gpu-smoke: submitted job $job (gpu_hold 1024 MiB)"

# Reads `rota gpus --json` on stdin (the whole reply object, or the bare list of cards from
# older clients); prints "card pid memory" of the first process of job $1 using >= 1000 MiB.
find_process='
import json, sys
job = int(sys.argv[1])
data = json.load(sys.stdin)
gpus = data.get("gpus", []) if isinstance(data, dict) else data
for g in gpus:
    places = [g.get("processes", [])] + [m.get("processes", []) for m in g.get("mig", [])]
    for procs in places:
        for p in procs:
            if p.get("job_id") == job and p.get("memory", -1) >= 1000 and not p.get("outside", False):
                print(g.get("index"), p.get("pid"), p.get("memory"))
                sys.exit(0)
sys.exit(1)
'
found=""
for _ in $(seq 1 60); do
  if found="$(rota gpus --json 2>/dev/null | python3 -c "$find_process" "$job")"; then
    break
  fi
  found=""
  state="$(job_state)"
  case "$state" in
    completed | failed | cancelled | timeout | preempted | node_fail)
      fail "job $job ended ($state) before its GPU memory was seen (its output is below)" ;;
  esac
  sleep 1
done
rota gpus || true
if [[ -z "$found" ]]; then
  echo "--- rota gpus --json ---" >&2
  rota gpus --json >&2 || true
  fail "no process of job $job using >= 1000 MiB appeared in rota gpus within 60 s (state: $(job_state))"
fi
read -r card pid mem <<<"$found"
echo "gpu-smoke: job $job's process $pid uses $mem MiB on GPU $card"

rota cancel "$job" >/dev/null || fail "rota cancel $job failed"
for _ in $(seq 1 100); do
  job_ended && break
  sleep 0.2
done
state="$(job_state)"
[[ "$state" == cancelled ]] || fail "job $job did not end within 20 s of its cancel (state: $state)"
cancelled_job="$job"
job=""

kill -TERM "$rotad_pid"
for _ in $(seq 1 100); do
  kill -0 "$rotad_pid" 2>/dev/null || break
  sleep 0.2
done
if kill -0 "$rotad_pid" 2>/dev/null; then fail "rotad did not stop within 20 s of SIGTERM"; fi
rotad_rc=0
wait "$rotad_pid" || rotad_rc=$?
[[ $rotad_rc -eq 0 ]] || fail "rotad exited with status $rotad_rc after SIGTERM (log below; 143 = killed by the signal itself)"
rotad_pid=""

echo "gpu-smoke: OK: $cards card(s), $migs MIG instance(s); job $cancelled_job's process $pid held $mem MiB" \
  "on GPU $card, attributed by rotad; the job was cancelled and rotad stopped"
