#!/usr/bin/env bash
# Builds mbsim's reference kernels (hw/kernels/README.md).
#   bash hw/kernels/build.sh [ptx]   regenerate the committed PTX of every kernel and planted-bug
#                                    twin (hw/kernels/*.ptx) and check each with ptxas; needs nvcc only
#   bash hw/kernels/build.sh host    build the sm_90a host binaries into hw/kernels/build/ (the
#                                    committed PTX is left as it is)
#   bash hw/kernels/build.sh run     host, then run on the GPU: each correct kernel's grid of
#                                    configurations and each race-bug twin once (with the watchdog);
#                                    one JSON line per configuration on stdout, the log on stderr:
#                                    bash hw/kernels/build.sh run > results.jsonl
# A kernel that fails to compile is reported (stderr, and a {"kernel", "build": "failed"} line in
# run mode) and the others go on; the exit status is 1 if anything failed.
set -u -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
MODE=${1:-ptx}
NVCC=${NVCC:-nvcc}
SM90="tma_wgmma persistent cluster_mc"  # sm_90a: PTX, host binary, run
SM100="tcgen05"                         # sm_100a: PTX only (no Blackwell hardware)
BUGS="0 1 2 3"
# Planted bugs whose twin hangs (never run; with the watchdog they would only report it) and
# those that race (run once with the watchdog: the check of the results shows the corruption).
HANG_BUGS="tma_wgmma:1 persistent:3"
PTXFLAGS="-ptx -lineinfo -std=c++17"
HOSTFLAGS="-O2 -std=c++17"
BUILD="$HERE/build"
FAILED=0
log() { echo "$@" >&2; }

# The launch mbsim checks each kernel's PTX with (docs/PTX.md "The launch"), appended to every
# .ptx as its `// # launch:` line (line numbers unchanged): one stage, two k-iterations, the boxes
# of 128 x 64 bf16 (16 KiB; cluster_mc's B: half of it per CTA), 1024 + one 32 KiB stage of
# dynamic shared memory.
launch_of() {
  case $1 in
    tma_wgmma) echo '{"kernel": "tma_wgmma", "block": 384, "params": {"param_4": 128, "param_5": 2, "param_6": 1}, "tensorMaps": {"param_0": 16384, "param_1": 16384}, "dynamicSmem": 33792}' ;;
    persistent) echo '{"kernel": "persistent", "block": 384, "params": {"param_4": 128, "param_5": 128, "param_6": 2, "param_7": 1, "param_8": 2}, "tensorMaps": {"param_0": 16384, "param_1": 16384}, "dynamicSmem": 33792}' ;;
    cluster_mc) echo '{"kernel": "cluster_mc", "block": 384, "cluster": 2, "params": {"param_4": 128, "param_5": 2, "param_6": 1}, "tensorMaps": {"param_0": 16384, "param_1": 8192}, "dynamicSmem": 33792}' ;;
    tcgen05) echo '{"kernel": "tcgen05_gemm", "block": 192, "params": {"param_3": 128, "param_4": 2, "param_5": 1}, "tensorMaps": {"param_0": 16384, "param_1": 16384}, "dynamicSmem": 33792}' ;;
  esac
}

ptx_name() { if [ "$2" = 0 ]; then echo "$1.ptx"; else echo "$1.bug$2.ptx"; fi; }

# nvcc -arch=sm_XXa -ptx -lineinfo -std=c++17 -DBUG=N -o hw/kernels/K[.bugN].ptx hw/kernels/K.cu,
# then the source paths in .file made relative to the repository and the launch line appended,
# then ptxas on the result.
build_ptx() {
  local k=$1 arch=$2 b out
  for b in $BUGS; do
    out="hw/kernels/$(ptx_name "$k" "$b")"
    if ! $NVCC -arch="$arch" $PTXFLAGS -DBUG="$b" -o "$out" "hw/kernels/$k.cu" >&2; then
      log "BUILD FAILED: $k BUG=$b (nvcc -ptx)"; FAILED=1; continue
    fi
    sed -i "s|\"$ROOT/|\"|g" "$out"
    echo "// # launch: $(launch_of "$k")" >> "$out"
    if ! ptxas -arch="$arch" "$out" -o /dev/null >&2; then log "PTXAS FAILED: $out"; FAILED=1; continue; fi
    log "ok  $out ($(grep -cE '^\s+[a-z@]' "$out") instruction lines)"
  done
}

# nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -DBUG=N [-DWATCHDOG=1] -o build/K[.bugN] K.cu
build_host() {
  local k=$1 b out wd
  mkdir -p "$BUILD"
  for b in $BUGS; do
    out="$BUILD/$k"; wd=0
    if [ "$b" != 0 ]; then out="$BUILD/$k.bug$b"; wd=1; fi
    if ! $NVCC -gencode=arch=compute_90a,code=sm_90a $HOSTFLAGS -DBUG="$b" -DWATCHDOG=$wd -o "$out" "hw/kernels/$k.cu" >&2; then
      log "BUILD FAILED: $k BUG=$b (host)"; FAILED=1; rm -f "$out"
    fi
  done
}

if [ "$MODE" = ptx ]; then
  for k in $SM90; do build_ptx "$k" sm_90a; done
  for k in $SM100; do build_ptx "$k" sm_100a; done
  exit $FAILED
fi

for k in $SM90; do build_host "$k"; done
[ "$MODE" = host ] && exit $FAILED
[ "$MODE" = run ] || { log "usage: build.sh [ptx|host|run]"; exit 2; }

GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
NVCCV=$($NVCC --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*' | head -1)
log "gpu: $GPU | driver: $DRIVER | nvcc: $NVCCV"
echo "{\"gpu\": \"$GPU\", \"driver\": \"$DRIVER\", \"nvcc\": \"$NVCCV\", \"date\": \"$(date -u +%FT%TZ)\"}"
for k in $SM90; do
  if [ -x "$BUILD/$k" ]; then
    log "run $k"
    timeout 900 "$BUILD/$k" || { rc=$?; log "$k exited $rc"; echo "{\"kernel\": \"$k\", \"bug\": 0, \"exit\": $rc}"; FAILED=1; }
  else
    echo "{\"kernel\": \"$k\", \"bug\": 0, \"build\": \"failed\"}"; FAILED=1
  fi
  for b in 1 2 3; do
    case " $HANG_BUGS " in *" $k:$b "*) log "skip $k BUG=$b (hangs by design)"; continue ;; esac
    if [ ! -x "$BUILD/$k.bug$b" ]; then echo "{\"kernel\": \"$k\", \"bug\": $b, \"build\": \"failed\"}"; FAILED=1; continue; fi
    log "run $k BUG=$b (watchdog)"
    timeout 120 "$BUILD/$k.bug$b" || { rc=$?; log "$k BUG=$b exited $rc"; echo "{\"kernel\": \"$k\", \"bug\": $b, \"exit\": $rc}"; }
  done
done
exit $FAILED
