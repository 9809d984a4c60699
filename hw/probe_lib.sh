# Shared part of the probe runners (sourced by hw/run_glue.sh and hw/run_armwait.sh): from the
# repository root, builds one probe of hw/probes/ for sm_90a, dumps its SASS, runs it and keeps its
# JSON and log in $OUT (default hw/out).
#   run_probe NAME TIMEOUT_S   -> $OUT/NAME.json, $OUT/run_NAME.log, $OUT/NAME_sass.txt
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"

run_probe() {
  local name=$1 limit=$2
  LOG="$OUT/run_$name.log"
  : >"$LOG"
  log() { echo "$@" | tee -a "$LOG"; }
  local build
  build=$(mktemp -d)
  log "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) | nvcc: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1) | $(date -u +%FT%TZ)"
  if ! nvcc $FLAGS -o "$build/$name" "hw/probes/$name.cu" >>"$LOG" 2>&1; then log "BUILD FAILED"; exit 1; fi
  cuobjdump --dump-sass "$build/$name" >"$OUT/${name}_sass.txt" 2>&1
  local t0=$SECONDS
  timeout "$limit" "$build/$name" >"$OUT/$name.json" 2>>"$LOG"
  log "$name: exit $? in $((SECONDS - t0)) s"
  cat "$OUT/$name.json" | tee -a "$LOG"
}
