// The bounded wait of mbsim's timing probes (armwait.cu, glue.cu, model.cu, ops.cu): every wait
// gives up after CAP cycles, so a probe whose protocol goes wrong reports a timeout instead of
// hanging the GPU.
#pragma once
#include "ptx.cuh"

constexpr long long CAP = 400000000ll;  // 0.2 s at 2 GHz: every wait is bounded

// try_wait.parity on the mbarrier at shared address `a` until the phase of parity `par` completes;
// false when it has not after CAP cycles (clock64).
__device__ __forceinline__ bool wait_try(uint32_t a, uint32_t par) {
  const long long t0 = clock64();
  do {
    if (mb_try_parity(a, par)) return true;
  } while (clock64() - t0 < CAP);
  return false;
}
