#!/usr/bin/env bash
# Builds and runs every mbsim hardware probe on an sm_90a GPU (H100/H200) and writes JSON
# (conformance vectors; latency.json, pipeline.json, load.json).
#   usage (on the device machine, from the repo root):  bash hw/run.sh
# Results: $OUT/results.tar.gz (conformance/h200/*.json and hw/results/*.json laid out as in the
# repo), $OUT/run.log, $OUT/summary.txt. Without $OUT it writes to hw/out/ and also copies the
# files into conformance/h200/ and hw/results/ directly.
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
LOCAL=0
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; LOCAL=1; fi
mkdir -p "$OUT"
LOG="$OUT/run.log"
: >"$LOG"
BUILD=$(mktemp -d)
STAGE=$(mktemp -d)
mkdir -p "$STAGE/conformance/h200" "$STAGE/hw/results" "$BUILD/seq"
log() { echo "$@" | tee -a "$LOG"; }

GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
NVCC=$(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)
log "gpu: $GPU | driver: $DRIVER | nvcc: $NVCC | $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1

FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
for p in conformance latency pipeline load; do
  if ! nvcc $FLAGS -o "$BUILD/$p" "hw/probes/$p.cu" >>"$LOG" 2>&1; then log "BUILD FAILED: $p"; exit 1; fi
done
log "built"
{ echo "=== SASS (mbarrier/bulk instructions) ==="; for p in conformance latency pipeline load; do
  echo "--- $p"; cuobjdump --dump-sass "$BUILD/$p" | grep -E 'Function|SYNCS|UBLKCP|UTMALDG|UTMACCTL|HGMMA|WARPGROUP|PHASECHK|CCTL|MEMBAR|CS2R' | head -400; done; } >"$OUT/sass.txt" 2>&1

# ---- semantic conformance: one process per sequence and run, twice each ----
N=$("$BUILD/conformance" --list | wc -l)
log "conformance: $N sequences"
for ((k = 0; k < N; k++)); do
  for r in 1 2; do
    timeout 60 "$BUILD/conformance" --run $k >"$BUILD/seq/$k.$r.json" 2>>"$LOG"
    rc=$?
    [ $rc -ne 0 ] && log "sequence $k run $r: exit $rc"
  done
done
python3 hw/merge_conformance.py "$BUILD/seq" "$STAGE/conformance/h200" "$GPU" "$DRIVER" "$NVCC" 2>&1 | tee -a "$LOG"

# ---- timing ----
log "latency"
timeout 240 "$BUILD/latency" >"$STAGE/hw/results/latency.json" 2>>"$LOG" || log "latency exit $?"
log "pipeline"
timeout 300 "$BUILD/pipeline" >"$STAGE/hw/results/pipeline.json" 2>>"$LOG" || log "pipeline exit $?"
log "load"
timeout 240 "$BUILD/load" >"$STAGE/hw/results/load.json" 2>>"$LOG" || log "load exit $?"
python3 - "$STAGE/hw/results" "$GPU" "$DRIVER" "$NVCC" <<'PY' 2>&1 | tee -a "$LOG"
import json, sys, os
d, gpu, drv, nvcc = sys.argv[1:5]
for f in ("latency.json", "pipeline.json", "load.json"):
    p = os.path.join(d, f)
    try:
        j = json.load(open(p))
    except Exception as e:
        print("could not parse", f, e); continue
    j = {"gpu": gpu, "driver": drv, "nvcc": nvcc, **j}
    json.dump(j, open(p, "w"), indent=1)
    print("ok", f)
PY

tar -C "$STAGE" -czf "$OUT/results.tar.gz" conformance hw
python3 hw/summarize.py "$STAGE" >"$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
if [ $LOCAL -eq 1 ]; then cp -r "$STAGE/conformance" "$STAGE/hw" "$ROOT/"; fi
