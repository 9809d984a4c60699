#!/usr/bin/env bash
# Builds and runs hw/probes/armwait.cu (a producer loop with and without a warp suspended on the
# barrier it arms) on an sm_90a GPU.
#   usage (from the repo root): bash hw/run_armwait.sh   -> $OUT (or hw/out)/armwait.json, run_armwait.log
. "$(dirname "$0")/probe_lib.sh"
run_probe armwait 120
