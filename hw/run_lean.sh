#!/usr/bin/env bash
# Builds and runs hw/probes/lean.cu (lean pipelines for the timing model's held-out validation) on
# an sm_90a GPU.
#   usage (from the repository root): bash hw/run_lean.sh
#   LEAN_BIN=path: run that binary (built elsewhere with the same nvcc flags) instead of building.
# Writes $OUT/lean.json (every configuration launched with a cluster attribute, as CUTLASS launches
# its SM90 kernels), $OUT/lean_plain.json (the single-CTA configurations launched without it),
# $OUT/run_lean.log and $OUT/lean_sass.txt (without $OUT: hw/out/; then copy them to hw/results/).
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
LOG="$OUT/run_lean.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
BIN=${LEAN_BIN:-}
if [ -z "$BIN" ]; then
  BIN=$(mktemp -d)/lean
  log "nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)"
  if ! nvcc $FLAGS -o "$BIN" hw/probes/lean.cu >>"$LOG" 2>&1; then log "BUILD FAILED"; exit 1; fi
fi
cuobjdump --dump-sass "$BIN" >"$OUT/lean_sass.txt" 2>&1
for mode in cluster plain; do
  f="$OUT/lean.json"; [ "$mode" = plain ] && f="$OUT/lean_plain.json"
  t0=$SECONDS
  timeout 250 "$BIN" "" "$mode" >"$f" 2>>"$LOG"
  log "lean $mode: exit $? in $((SECONDS - t0)) s"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(len(j['configs']), 'configs,', sum(c['timeouts']>0 for c in j['configs']), 'with timeouts')" "$f" 2>&1 | tee -a "$LOG"
done
