#!/usr/bin/env bash
# Black-box tests of the rota binary: output, JSON shape, exit codes, error messages.
# Usage: tests/cli_e2e.sh PATH/TO/rota SOURCE_DIR
set -uo pipefail
ROTA=$1
SRC=$2
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {  # check NAME CONDITION-EXIT-STATUS
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

# A hand-computed trace: 2 GPUs; A (2 GPUs, 100 s) at 0, B (1 GPU, 50 s) at 10, C (1 GPU, 10 s) at 20.
# fifo: A runs 0-100; B 100-150, C 100-110: waits 0, 90, 80: average 56.67, max 90.
cat > "$tmp/t.csv" <<'CSV'
submit,duration,gpus,user
0,100,2,alice
10,50,1,bob
20,10,1,carol
CSV
out=$("$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user \
      --gpus 2 --policy fifo --json)
check "simulate exits 0" $?
avg=$(printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(round(r["avg_wait"],2), r["max_wait"], r["jobs"])')
[ "$avg" = "56.67 90.0 3" ]; check "fifo waits on the hand-computed trace (got $avg)" $?
# The replay's own cost and where its idle capacity went: [110,150) one card idle, nothing waits.
idle=$(printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; i=r["idle_gpu_seconds"]; print(r["wall_seconds"] > 0, r["schedule_calls"] > 0, i["no_work"], i["held"] + i["draining"] + i["fragmented"])')
[ "$idle" = "True True 40.0 0.0" ]; check "simulate --json reports wall time, passes and idle GPU-seconds (got $idle)" $?

text=$("$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user \
       --gpus 2 --policy fifo,backfill,rota)
check "text table exits 0" $?
printf '%s\n' "$text" | grep -q '^POLICY  *JOBS'; check "text table has a header" $?
[ "$(printf '%s\n' "$text" | grep -cE '^(fifo|backfill|rota) ')" = 6 ]; check "one row per policy in both tables" $?
printf '%s\n' "$text" | grep -q '^POLICY  *HELD  *BOOKING'; check "the idle table has its header" $?
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --set protect_after=off --set protect_max=3 --json >/dev/null; check "the bound on overtaking can be set" $?
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --set protect_max=1.5 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'protect_max: expected a count' "$tmp/err"; check "a fractional protect_max is refused" $?
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --set promise_slack=0s --json >/dev/null; check "promises can be kept" $?
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --set promise_slack=soon 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'promise_slack: expected a duration' "$tmp/err"; check "a promise_slack that is no duration is refused" $?
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --set protect_foreseen=off --json >/dev/null; check "protection foreseen can be turned off" $?
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --set protect_foreseen=maybe 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'protect_foreseen: expected on or off' "$tmp/err"; check "protect_foreseen other than on or off is refused" $?

"$ROTA" simulate --trace "$tmp/missing.csv" --format philly --gpus 8 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'missing.csv' "$tmp/err"; check "missing trace: exit 1 naming the file" $?
"$ROTA" simulate --trace "$tmp/t.csv" --format philly --gpus 8 --policy nope 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'unknown policy' "$tmp/err"; check "unknown policy: exit 1" $?
"$ROTA" simulate --trace "$tmp/t.csv" --gpus 2 --bogus 2>/dev/null; rc=$?
[ $rc -eq 2 ]; check "unknown flag: exit 2" $?
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus --gpus 0 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q -- '--gpus' "$tmp/err"; check "zero GPUs refused" $?
# Forecasts measured with and without the arrivals foreseen; --no-arrivals alone is a mistake.
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --policy rota --predict 1 --json > "$tmp/pa.json"
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --policy rota --predict 1 --no-arrivals --json > "$tmp/pn.json"
fa=$(python3 -c 'import json,sys; print(*(json.load(open(f))["results"][0]["prediction"]["foresaw_arrivals"] for f in sys.argv[1:]))' "$tmp/pa.json" "$tmp/pn.json")
[ "$fa" = "True False" ]; check "--predict foresees arrivals under rota, --no-arrivals not (got $fa)" $?
"$ROTA" simulate --trace "$tmp/t.csv" --columns submit=submit,duration=duration,gpus=gpus,user=user --gpus 2 \
  --no-arrivals 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q -- '--no-arrivals changes start forecasts: use it with --predict N' "$tmp/err"
check "--no-arrivals without --predict is refused" $?

# The bundled Philly slice replays under all three policies.
"$ROTA" simulate --trace "$SRC/data/traces/philly-ed69ec.csv" --format philly --gpus 8 --json > "$tmp/p.json"
check "philly slice replays" $?
python3 - "$tmp/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["policy"]: x for x in d["results"]}
assert d["jobs"] == 1137, d["jobs"]
for p in ("fifo", "backfill", "rota"):
    assert r[p]["jobs"] + r[p]["rejected"] + r[p]["unfinished"] == 1137, r[p]
    assert 0 < r[p]["utilisation"] <= 1, r[p]
# Backfill can only help FIFO's average wait on whole-GPU jobs with exact estimates.
assert r["backfill"]["avg_wait"] <= r["fifo"]["avg_wait"] + 1e-6, (r["backfill"], r["fifo"])
PY
check "philly slice figures are consistent" $?

# rota config check: the bundled example passes; a broken file reports every mistake with its line.
out=$("$ROTA" config check "$SRC/packaging/rota.toml")
check "example config passes" $?
printf '%s\n' "$out" | grep -q 'rota.toml: OK'; check "config check says OK" $?
cat > "$tmp/bad.toml" <<'TOML'
[policy]
algoritm = "rota"

[gpus]
source = "simulated"
[[gpus.card]]
memory = "80 GB"
TOML
"$ROTA" config check "$tmp/bad.toml" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ]; check "broken config: exit 1" $?
grep -q 'bad.toml:2:1: .*unknown key "algoritm"' "$tmp/err"; check "broken config: typo reported at line 2" $?
grep -q 'bad.toml:7:10: .*memory "80 GB" is not a size' "$tmp/err"; check "broken config: bad size reported at line 7" $?
"$ROTA" config check "$tmp/missing.toml" 2>/dev/null; rc=$?
[ $rc -eq 1 ]; check "missing config: exit 1" $?
# A valid file with a likely slip: a host-memory default above this machine's memory is said
# (as rotad says it at start), and the file still passes.
sed 's/^default_mem_per_gpu = .*/default_mem_per_gpu = "1000T"/' "$SRC/packaging/rota.toml" > "$tmp/big.toml"
"$ROTA" config check "$tmp/big.toml" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ]; check "memory default above the server's: still exit 0" $?
grep -q "^warning: default_mem_per_gpu = 1024000G is more than this server's memory (" "$tmp/err"
check "memory default above the server's: a warning" $?
sed 's/^default_mem_per_gpu = .*/default_mem_per_gpu = "1G"/' "$SRC/packaging/rota.toml" > "$tmp/small.toml"
"$ROTA" config check "$tmp/small.toml" >/dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ]; check "a memory default the server has: no warning" $?

# Every command the help lists answers its own --help (the command line registers only the
# command it is given, from a table in main.cc that must name them all).
cmds=$("$ROTA" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}')
[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 25 ]; check "the help lists the commands" $?
for c in $cmds; do
  "$ROTA" "$c" --help > "$tmp/help" 2>&1; rc=$?
  [ $rc -eq 0 ] && grep -q "Usage: .*rota $c " "$tmp/help"; check "rota $c --help" $?
done
"$ROTA" --socket /nonexistent extend --help | grep -q 'Usage: .*rota extend '; check "--socket PATH before the command" $?
"$ROTA" --socket=/nonexistent approve --help | grep -q 'Usage: .*rota approve '; check "--socket=PATH before the command" $?
"$ROTA" sumbit -- true 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'unknown command "sumbit"; did you mean "submit"?' "$tmp/err"; check "a misspelt command: exit 2 naming it and the nearest" $?
"$ROTA" help > "$tmp/help"; rc=$?
[ $rc -eq 0 ] && grep -q '^Subcommands:' "$tmp/help"; check "rota help: the command list" $?
"$ROTA" help show | grep -q 'Usage: .*rota show '; check "rota help show: the help of show" $?
"$ROTA" frobnicate 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'unknown command "frobnicate" (see rota --help)' "$tmp/err"; check "an unknown command: no guess when none is near" $?
"$ROTA" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'no command given' "$tmp/err"; check "no command: exit 2 saying so" $?
"$ROTA" --gpus 2 submit -- true 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q '"--gpus" is not an option of rota itself' "$tmp/err" && [ "$(wc -l < "$tmp/err")" -eq 1 ]
check "a command's option before the command: exit 2, one line naming it" $?

# The bash completion and the man page, generated from the binary's own options: every command
# the help lists is in both, the completion completes in a real bash, and groff has no complaint.
"$ROTA" completion bash > "$tmp/completion"; check "rota completion bash" $?
got=$(bash -c 'source "$1"
  complete_at() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _rota; echo "[${COMPREPLY[*]}]"; }
  complete_at rota sub
  complete_at rota --socket /run/x.sock submit --gp
  complete_at rota submit --name bookings --requ
  complete_at rota bookings export --i
  complete_at rota submit --tier ""
  for c in $2; do [[ " ${_rota_subs[rota]} " == *" $c "* ]] || echo "missing $c"; done' _ "$tmp/completion" "$cmds")
[ "$got" = $'[submit]\n[--gpus --gpu-mem]\n[--requeue]\n[--ics]\n[]' ]; check "bash completes commands, options and nested commands (got: $got)" $?
"$ROTA" manpage --date 2026-12-04 > "$tmp/rota.1"; check "rota manpage" $?
grep -q '^.TH ROTA 1 "2026-12-04" "rota ' "$tmp/rota.1"; check "the man page's header names the date and version" $?
missing=$(for c in $cmds; do grep -q "^.SS \"rota $c[ \"]" "$tmp/rota.1" || echo "$c"; done)
[ -z "$missing" ]; check "the man page has every command (missing: $missing)" $?
grep -q '^.SS "rota bookings export' "$tmp/rota.1"; check "the man page has the nested commands" $?
warnings=$(groff -man -Tutf8 -ww -z "$tmp/rota.1" 2>&1)
[ -z "$warnings" ]; check "groff reads rota.1 without a warning: $warnings" $?
"$(dirname "$ROTA")/rotad" --manpage > "$tmp/rotad.8"; rc=$?
warnings=$(groff -man -Tutf8 -ww -z "$tmp/rotad.8" 2>&1)
[ $rc -eq 0 ] && grep -q '^.TH ROTAD 8' "$tmp/rotad.8" && grep -q '^.B \\-\\-state\\-dir' "$tmp/rotad.8" && [ -z "$warnings" ]
check "rotad --manpage: section 8, its options, no groff warning: $warnings" $?

# rota run --image runs the container on the client's own descriptors: one that is closed is said
# at once, before any connection (no daemon is needed to see it).
err=$(ROTA_SOCKET="$tmp/none.sock" "$ROTA" run --image localhost/x:1 -- true 2>&1 <&-)
rc=$?
[ $rc -eq 2 ] && printf '%s' "$err" | grep -q 'standard input, output and error must be open (descriptor 0 is closed)'
check "rota run --image with stdin closed: exit 2, says which (rc $rc: $err)" $?

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
