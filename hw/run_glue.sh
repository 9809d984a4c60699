#!/usr/bin/env bash
# Builds and runs hw/probes/glue.cu (the gpipe kernel's per-iteration code added piece by piece to a
# minimal producer + consumer pipeline, from L2 and HBM, 1 and 132 CTAs; and a producer loop beside
# bank-conflicted shared-memory stores) on an sm_90a GPU. About 5 s of GPU time.
#   usage (from the repo root): bash hw/run_glue.sh   -> $OUT (or hw/out)/glue.json, run_glue.log
. "$(dirname "$0")/probe_lib.sh"
run_probe glue 300
