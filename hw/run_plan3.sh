#!/usr/bin/env bash
# The measurements of docs/HARDWARE.md "Not yet measured" (for an H200): item 1, plan.cu three times (the distinct-L2 and HBM `load`
# rows, for hw/gpu_wide.py; the H100's rates at 8-66 CTAs moved by up to 76% between two runs) and
# lean.cu's whole set once more plus its `stream` family a third time (run-to-run spread of the
# held-out rows); items 2-5, hw/probes/plan3.cu (the producer's loop beside wgmma warpgroups, the
# warpgroups in step or alternating, the 132-SM persistent loop's stores, 8 storing warps, which SM
# each CTA lands on). Builds with the flags of hw/run_plan.sh and dumps every binary's SASS.
#   usage (from the repository root): OUT=<dir> bash hw/run_plan3.sh
# Writes to $OUT (default hw/out): plan3_all.tgz (every result, SASS and the log) and run_plan3.log.
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
W=$(mktemp -d)
LOG="$W/run_plan3.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
B=$(mktemp -d)
for p in plan lean plan3; do
  if ! nvcc $FLAGS -o "$B/$p" "hw/probes/$p.cu" >>"$LOG" 2>&1; then log "BUILD FAILED: $p"; continue; fi
  cuobjdump --dump-sass "$B/$p" >"$W/${p}_sass.txt" 2>&1
done
run() {  # run NAME LIMIT_S CMD...: stdout to $W/NAME.json
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$W/$name.json" 2>>"$LOG"
  log "$name: exit $? in $((SECONDS - t0)) s"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print({k: len(v) for k, v in j.items() if isinstance(v, list)})" "$W/$name.json" 2>&1 | tee -a "$LOG"
}
run plan3 200 "$B/plan3"
for i in 1 2 3; do run "plan_run$i" 200 "$B/plan"; done
run lean_repeat 200 "$B/lean" "" cluster
run lean_stream_rep2 100 "$B/lean" stream cluster
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
cp "$LOG" "$OUT/run_plan3.log"
tar -C "$W" -czf "$OUT/plan3_all.tgz" .
ls -la "$W" | tee -a "$OUT/run_plan3.log"
