#!/usr/bin/env bash
# Builds and runs hw/probes/ops.cu (per-operation loop costs, epilogue parts, shared-memory
# contention) on an sm_90a GPU, and dumps the full SASS of ops.cu and model.cu.
#   usage (from the repo root): bash hw/run_ops.sh      -> $OUT (or hw/out)/ops.json, run_ops.log, *_sass_full.txt
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
LOG="$OUT/run_ops.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
BUILD=$(mktemp -d)
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)"
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
for p in ops model; do
  if ! nvcc $FLAGS -o "$BUILD/$p" "hw/probes/$p.cu" >>"$LOG" 2>&1; then log "BUILD FAILED: $p"; exit 1; fi
  cuobjdump --dump-sass "$BUILD/$p" >"$OUT/${p}_sass_full.txt" 2>&1
done
log "built"
t0=$SECONDS
timeout 300 "$BUILD/ops" >"$OUT/ops.json" 2>>"$LOG"
log "ops: exit $? in $((SECONDS - t0)) s"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('ok', len(j['ops']['rows']), len(j['epilogue']['rows']), len(j['contention']['rows']))" "$OUT/ops.json" 2>&1 | tee -a "$LOG"
