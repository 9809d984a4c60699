#!/usr/bin/env bash
# Builds and runs hw/probes/glue.cu (the gpipe kernel's per-iteration code added piece by piece to a
# minimal producer + consumer pipeline, from L2 and HBM, 1 and 132 CTAs; and a producer loop beside
# bank-conflicted shared-memory stores) on an sm_90a GPU. About 5 s of GPU time.
#   usage (from the repo root): bash hw/run_glue.sh   -> $OUT (or hw/out)/glue.json, run_glue.log
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
LOG="$OUT/run_glue.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
BUILD=$(mktemp -d)
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)"
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
if ! nvcc $FLAGS -o "$BUILD/glue" hw/probes/glue.cu >>"$LOG" 2>&1; then log "BUILD FAILED"; exit 1; fi
cuobjdump --dump-sass "$BUILD/glue" >"$OUT/glue_sass.txt" 2>&1
t0=$SECONDS
timeout 300 "$BUILD/glue" >"$OUT/glue.json" 2>>"$LOG"
log "glue: exit $? in $((SECONDS - t0)) s"
cat "$OUT/glue.json" | tee -a "$LOG"
