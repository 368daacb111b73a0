#!/usr/bin/env bash
# What periodic GPU sampling costs rotad (issue 4; targets: under 1% of one core, under 30 MB
# resident). Starts rotad with its own state directory and socket (user mode unless run as root)
# on the fake libnvidia-ml (src/testing/fake_nvml) with CARDS cards of PROCS processes each,
# sampled every INTERVAL; the processes are real (idle `sleep`s started here), so attribution
# reads /proc as it would on a server. After WARMUP seconds it measures DURATION seconds of the
# daemon's CPU time (utime + stime of all its threads, /proc/PID/stat) as a percentage of one
# core, and its resident memory (VmRSS now, VmHWM the peak, /proc/PID/status), and prints one
# JSON object. The CPU time is also split: the main thread (the event loop: attribution of each
# GPU process, card health, scheduling) against the other threads (the sampler and the workers
# that call NVML, where the fake's cost lands). Results: docs/benchmarks.md, "GPU sampling
# (issue 4)".
#
#   bench/gpu_sampling.sh [BUILD_DIR]        # default: build/ (configured here if it is not yet)
#   DURATION=60 WARMUP=5 CARDS=8 PROCS=4 INTERVAL=1s bench/gpu_sampling.sh
#
# The fake parses its JSON state once and answers from memory until the file changes (as a real
# driver answers from its own state), so the CPU figure is Rota's cost plus the fake's lookups:
# compare it with rota_nvml_bench's time per sample (bench/nvml_sample_bench.cc).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
DURATION="${DURATION:-60}"
WARMUP="${WARMUP:-5}"
CARDS="${CARDS:-8}"
PROCS="${PROCS:-4}"
INTERVAL="${INTERVAL:-1s}"

fail() {
  echo "gpu_sampling: FAIL: $*" >&2
  exit 1
}

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  timeout 120 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || fail "cmake failed"
fi
timeout 600 cmake --build "$build" --target rotad rota rota-shepherd fake_nvml -j"$(nproc)" >/dev/null ||
  fail "the build of rotad, rota, rota-shepherd and fake_nvml failed"
build="$(cd "$build" && pwd)"
fake="$build/libnvidia-ml-fake.so"
[[ -f "$fake" ]] || fail "no fake library at $fake"

tmp="$(mktemp -d /tmp/rota-gpu-sampling.XXXXXX)"
sock="$tmp/run/rota.sock"
rotad_pid=""
sleepers=()
rota() { timeout 20 "$build/rota" --socket "$sock" "$@"; }

cleanup() {
  local rc=$?
  trap - EXIT
  set +e
  if [[ -n "$rotad_pid" ]]; then
    kill -TERM "$rotad_pid" 2>/dev/null
    for _ in $(seq 1 100); do
      kill -0 "$rotad_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$rotad_pid" 2>/dev/null
  fi
  for p in "${sleepers[@]}"; do kill "$p" 2>/dev/null; done
  if [[ $rc -ne 0 && -f "$tmp/rotad.log" ]]; then
    echo "--- rotad log (last 20 lines) ---" >&2
    tail -n 20 "$tmp/rotad.log" >&2
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT

# The GPU processes: idle, so they cost nothing of their own, but real, so /proc has them.
for _ in $(seq 1 $((CARDS * PROCS))); do
  sleep 100000 &
  sleepers+=($!)
done

# Every fourth card in MIG mode with two slices, the way bench/nvml_sample_bench.cc builds it.
python3 - "$tmp/state.json" "$CARDS" "$PROCS" "${sleepers[@]}" <<'EOF'
import json, sys
path, cards, procs, pids = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(p) for p in sys.argv[4:]]
out = []
for i in range(cards):
    mine = pids[i * procs:(i + 1) * procs]
    card = {"uuid": f"GPU-sampling-{i}", "name": "NVIDIA A100-SXM4-80GB", "pci": f"00000000:{0x10 + i:02X}:00.0",
            "memory_total_mib": 81920, "memory_used_mib": 2048 * procs, "util_gpu": 60, "util_memory": 30,
            "temperature": 55, "power_mw": 280000, "mig_mode": 1 if i % 4 == 3 else 0}
    if cards > 1:
        peer = f"00000000:{0x10 + (i ^ 1):02X}:00.0"
        card["nvlink"] = [peer, peer]
    entries = [{"pid": p, "used_mib": 2048, "sm_util": 15} for p in mine]
    if i % 4 == 3:
        half = (len(entries) + 1) // 2
        card["mig"] = [{"uuid": f"MIG-sampling-{i}-{m}", "profile": "3g.40gb", "memory_total_mib": 40192,
                        "memory_used_mib": 2048 * len(part), "processes": part}
                       for m, part in enumerate([entries[:half], entries[half:]])]
    else:
        card["processes"] = entries
    out.append(card)
json.dump({"driver_version": "550.54.15", "cards": out}, open(path, "w"))
EOF

cat >"$tmp/rota.toml" <<EOF
[gpus]
source = "nvml"
nvml_library = "$fake"
sample_interval = "$INTERVAL"
EOF

FAKE_NVML_STATE="$tmp/state.json" "$build/rotad" --config "$tmp/rota.toml" --state-dir "$tmp/state" \
  --socket "$sock" >"$tmp/rotad.log" 2>&1 &
rotad_pid=$!
for _ in $(seq 1 100); do
  kill -0 "$rotad_pid" 2>/dev/null || fail "rotad exited at start"
  rota status >/dev/null 2>&1 && break
  sleep 0.2
done
rota status >/dev/null 2>&1 || fail "rotad did not answer on $sock within 20 s"

# "cards processes sampled_at mode" from the daemon, to check it samples what we think it does.
observe() {
  local gpus status
  gpus="$(rota gpus --json)" || return 1
  status="$(rota status --json 2>/dev/null || echo '{}')"
  python3 -c '
import json, sys
g = json.loads(sys.argv[1]); s = json.loads(sys.argv[2]) if sys.argv[2].startswith("{") else {}
cards = g.get("gpus", []) if isinstance(g, dict) else g
procs = sum(len(c.get("processes", [])) + sum(len(m.get("processes", [])) for m in c.get("mig", [])) for c in cards)
print(len(cards), procs, g.get("sampled_at", 0) if isinstance(g, dict) else 0, s.get("mode", "?"))
' "$gpus" "$status"
}

sleep "$WARMUP"
read -r cards procs sampled0 mode <<<"$(observe)" || fail "rota gpus failed"
[[ "$cards" -eq "$CARDS" ]] || fail "rotad reports $cards cards, not $CARDS"
[[ "$procs" -eq $((CARDS * PROCS)) ]] || fail "rotad reports $procs GPU processes, not $((CARDS * PROCS))"

stat0="$(cat "/proc/$rotad_pid/stat")"
# The main thread's time on a CPU in ns (finer than ticks); "" without CONFIG_SCHED_INFO.
main0="$(cat "/proc/$rotad_pid/task/$rotad_pid/schedstat" 2>/dev/null || true)"
t0="$(date +%s.%N)"
sleep "$DURATION"
stat1="$(cat "/proc/$rotad_pid/stat")"
main1="$(cat "/proc/$rotad_pid/task/$rotad_pid/schedstat" 2>/dev/null || true)"
t1="$(date +%s.%N)"
status1="$(cat "/proc/$rotad_pid/status")"
read -r _ _ sampled1 _ <<<"$(observe)" || fail "rota gpus failed"

python3 - "$stat0" "$stat1" "$t0" "$t1" "$status1" "$(getconf CLK_TCK)" "$sampled0" "$sampled1" "$main0" "$main1" <<EOF
import json, sys
stat0, stat1, t0, t1, status, tck, s0, s1, main0, main1 = sys.argv[1:11]
def cpu(stat):  # utime + stime in ticks; fields after the ")" that ends the command name
    f = stat[stat.rindex(")") + 2:].split()
    return int(f[11]) + int(f[12]), int(f[11]), int(f[12])
(c0, u0, k0), (c1, u1, k1) = cpu(stat0), cpu(stat1)
wall = float(t1) - float(t0)
kb = {l.split(":")[0]: int(l.split()[1]) for l in status.splitlines() if l.startswith(("VmRSS", "VmHWM"))}
cpu_pct = (c1 - c0) / int(tck) / wall * 100
main_pct = (int(main1.split()[0]) - int(main0.split()[0])) / 1e9 / wall * 100 if main0 and main1 else None
rss_mb, hwm_mb = kb["VmRSS"] / 1024, kb["VmHWM"] / 1024
print(json.dumps({
    "cards": $CARDS, "processes_per_card": $PROCS, "sample_interval": "$INTERVAL", "mode": "$mode",
    "warmup_s": $WARMUP, "duration_s": round(wall, 2),
    "sampled_at_advance_s": int(s1) - int(s0),
    "cpu_percent_of_one_core": round(cpu_pct, 3),
    "cpu_percent_main_thread": round(main_pct, 3) if main_pct is not None else None,
    "cpu_percent_other_threads": round(cpu_pct - main_pct, 3) if main_pct is not None else None,
    "utime_s": (u1 - u0) / int(tck), "stime_s": (k1 - k0) / int(tck),
    "vmrss_mb": round(rss_mb, 1), "vmhwm_mb": round(hwm_mb, 1),
    "targets": {"cpu_percent_of_one_core": 1.0, "resident_mb": 30},
    "within_targets": cpu_pct < 1.0 and hwm_mb < 30,
    "nproc": $(nproc), "cpu": "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)",
}))
EOF
