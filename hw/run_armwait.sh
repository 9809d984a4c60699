#!/usr/bin/env bash
# Builds and runs hw/probes/armwait.cu (a producer loop with and without a warp suspended on the
# barrier it arms) on an sm_90a GPU.
#   usage (from the repo root): bash hw/run_armwait.sh   -> $OUT (or hw/out)/armwait.json, run_armwait.log
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
LOG="$OUT/run_armwait.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
BUILD=$(mktemp -d)
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)"
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
if ! nvcc $FLAGS -o "$BUILD/armwait" hw/probes/armwait.cu >>"$LOG" 2>&1; then log "BUILD FAILED"; exit 1; fi
cuobjdump --dump-sass "$BUILD/armwait" >"$OUT/armwait_sass.txt" 2>&1
t0=$SECONDS
timeout 120 "$BUILD/armwait" >"$OUT/armwait.json" 2>>"$LOG"
log "armwait: exit $? in $((SECONDS - t0)) s"
cat "$OUT/armwait.json" | tee -a "$LOG"
