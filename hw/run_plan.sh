#!/usr/bin/env bash
# The probes of docs/HARDWARE.md "One-SM mechanisms (`plan.cu`, `plan2.cu`, H100)": builds hw/probes/plan.cu
# (copy latency at light load and under load, the producer loop with run-time divisions
# and by source, warp-scheduler sharing) and hw/probes/lean.cu (the `epilogue` families and
# `mcast_rate`), runs them, and repeats the whole lean.json run as a check of run-to-run
# spread. About 10 s of GPU time.
#   usage (from the repository root): bash hw/run_plan.sh
# Writes to $OUT (default hw/out): plan.json, lean_epilogue.json, lean_mcast.json, lean_repeat.json,
# run_plan.log, plan_sass.txt, lean_sass.txt (then copy them to hw/results/).
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
LOG="$OUT/run_plan.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
B=$(mktemp -d)
for p in plan lean; do
  if ! nvcc $FLAGS -o "$B/$p" "hw/probes/$p.cu" >>"$LOG" 2>&1; then log "BUILD FAILED: $p"; exit 1; fi
  cuobjdump --dump-sass "$B/$p" >"$OUT/${p}_sass.txt" 2>&1
done
run() {  # run NAME LIMIT_S CMD...: stdout to $OUT/NAME.json
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.json" 2>>"$LOG"
  log "$name: exit $? in $((SECONDS - t0)) s"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print({k: len(v) for k, v in j.items() if isinstance(v, list)})" "$OUT/$name.json" 2>&1 | tee -a "$LOG"
}
run plan 200 "$B/plan"
run lean_epilogue 100 "$B/lean" epilogue cluster
run lean_mcast 100 "$B/lean" mcast_rate cluster
run lean_repeat 200 "$B/lean" "" cluster
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
