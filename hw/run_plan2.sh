#!/usr/bin/env bash
# A run of docs/HARDWARE.md "One-SM mechanisms (`plan.cu`, `plan2.cu`, H100)": first
# `bash hw/run_plan.sh` (plan.json's GPU-wide rows, the lean
# epilogue and multicast families, lean.json repeated), then hw/probes/plan2.cu (the
# one-SM epilogue decomposition `epi`, wgmma fed from a fixed vs the just-landed stage `wg`, the
# copy's share of the producer's issue `issue`). Builds with the flags of hw/run_plan.sh, dumps
# every binary's SASS.
#   usage (from the repository root): bash hw/run_plan2.sh
# Writes to $OUT (default hw/out): plan2_all.tgz (every file of hw/run_plan.sh, plan2.json,
# plan2_sass.txt, run_plan2.log) and run_plan2.log beside it.
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
W=$(mktemp -d)
LOG="$W/run_plan2.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)"
t0=$SECONDS
OUT="$W" bash hw/run_plan.sh >>"$LOG" 2>&1
log "run_plan.sh: exit $? in $((SECONDS - t0)) s"
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
B=$(mktemp -d)
if nvcc $FLAGS -o "$B/plan2" hw/probes/plan2.cu >>"$LOG" 2>&1; then
  cuobjdump --dump-sass "$B/plan2" >"$W/plan2_sass.txt" 2>&1
  t0=$SECONDS
  timeout 240 "$B/plan2" >"$W/plan2.json" 2>>"$LOG"
  log "plan2: exit $? in $((SECONDS - t0)) s"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print({k: len(v) for k, v in j.items() if isinstance(v, list)})" "$W/plan2.json" 2>&1 | tee -a "$LOG"
else
  log "BUILD FAILED: plan2"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
cp "$LOG" "$OUT/run_plan2.log"
tar -C "$W" -czf "$OUT/plan2_all.tgz" .
ls -la "$W" | tee -a "$OUT/run_plan2.log"
