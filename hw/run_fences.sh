#!/usr/bin/env bash
# Builds and runs hw/probes/fences.cu (thread fences, relaxed / release cluster arrives) on an sm_90a GPU.
#   usage (from the repo root): bash hw/run_fences.sh   -> $OUT (or hw/out)/fences.json, fences_sass.txt
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
BUILD=$(mktemp -d)
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)" | tee "$OUT/run_fences.log"
nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -o "$BUILD/fences" hw/probes/fences.cu >>"$OUT/run_fences.log" 2>&1 || { echo "BUILD FAILED"; cat "$OUT/run_fences.log"; exit 1; }
cuobjdump --dump-sass "$BUILD/fences" | grep -E "Function|MEMBAR|FENCE|UCGABAR|CCTL|ERRBAR|BAR" >"$OUT/fences_sass.txt" 2>&1
timeout 120 "$BUILD/fences" >"$OUT/fences.json" 2>>"$OUT/run_fences.log"
echo "exit $?" | tee -a "$OUT/run_fences.log"
cat "$OUT/fences.json"
