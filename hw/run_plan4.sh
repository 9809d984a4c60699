#!/usr/bin/env bash
# Items 5 and 6 of docs/HARDWARE.md "Not yet measured": builds hw/probes/plan4.cu with the flags of
# hw/run_plan.sh, dumps its SASS and runs it once.
#   usage (from the repository root): OUT=<dir> bash hw/run_plan4.sh
# Writes to $OUT (default hw/out): plan4.json, plan4_sass.txt.gz and run_plan4.log.
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
LOG="$OUT/run_plan4.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
B=$(mktemp -d)
if ! nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -o "$B/plan4" hw/probes/plan4.cu >>"$LOG" 2>&1; then log "BUILD FAILED: plan4"; exit 1; fi
cuobjdump --dump-sass "$B/plan4" | gzip -9 >"$OUT/plan4_sass.txt.gz"
t0=$SECONDS
timeout 300 "$B/plan4" >"$OUT/plan4.json" 2>>"$LOG"
log "plan4: exit $? in $((SECONDS - t0)) s"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
