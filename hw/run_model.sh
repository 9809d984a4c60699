#!/usr/bin/env bash
# Builds and runs hw/probes/model.cu (the mechanistic model's probes) on an sm_90a GPU.
#   usage (from the repo root, or from any copy holding hw/probes and hw/run_model.sh): bash hw/run_model.sh
# Each section (and each gpipe family) runs in its own process, so a failure cannot take the others
# with it. Writes $OUT/model.json (all sections merged), $OUT/run_model.log, $OUT/model_sass.txt;
# without $OUT, hw/out/ (then copy model.json to hw/results/).
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${OUT:-}" ]; then OUT="$ROOT/hw/out"; fi
mkdir -p "$OUT"
LOG="$OUT/run_model.log"
: >"$LOG"
log() { echo "$@" | tee -a "$LOG"; }
BUILD=$(mktemp -d)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
NVCC=$(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)
log "gpu: $GPU | driver: $DRIVER | nvcc: $NVCC | $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$LOG" 2>&1
FLAGS="-gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17"
if ! nvcc $FLAGS -o "$BUILD/model" hw/probes/model.cu >>"$LOG" 2>&1; then log "BUILD FAILED"; exit 1; fi
log "built"
cuobjdump --dump-sass "$BUILD/model" | grep -E 'Function|SYNCS|UBLKCP|UTMALDG|UTMASTG|HGMMA|WARPGROUP|BAR|MEMBAR' >"$OUT/model_sass.txt" 2>&1
PARTS=$(mktemp -d)
run() {  # name, timeout, args...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$BUILD/model" "$@" >"$PARTS/$name.json" 2>>"$LOG"
  local rc=$?; log "$name: exit $rc in $((SECONDS - t0)) s"
}
run oploop 120 oploop
run wake 120 wake
for f in consumers stream mainloop multicast persistent; do run "gpipe_$f" 240 gpipe "$f"; done
python3 - "$PARTS" "$OUT/model.json" "$GPU" "$DRIVER" "$NVCC" <<'PY' 2>&1 | tee -a "$LOG"
import json, sys, os
d, outp, gpu, drv, nvcc = sys.argv[1:6]
out = {"probe": "hw/probes/model.cu", "gpu": gpu, "driver": drv, "nvcc": nvcc, "command": "bash hw/run_model.sh"}
for name in ["oploop", "wake"] + ["gpipe_" + f for f in ["consumers", "stream", "mainloop", "multicast", "persistent"]]:
    p = os.path.join(d, name + ".json")
    try:
        j = json.load(open(p))
    except Exception as e:
        print("could not parse", name, e)
        out.setdefault("raw_unparsed", {})[name] = open(p).read()[-20000:] if os.path.exists(p) else ""
        continue
    out["sm_count"] = j.get("sm_count")
    for k in ("oploop", "wake"):
        if k in j: out[k] = j[k]
    if "gpipe" in j:
        g = out.setdefault("gpipe", {k: v for k, v in j["gpipe"].items() if k != "configs"} | {"configs": []})
        g["configs"] += j["gpipe"]["configs"]
    print("ok", name)
json.dump(out, open(outp, "w"), indent=1)
PY
tar -C "$PARTS" -czf "$OUT/model_parts.tar.gz" .
