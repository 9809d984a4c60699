// mbsim timing probe: does a producer's loop cost depend on a warp being suspended on the barrier
// it arms? (docs/HARDWARE.md "Held-out validation": the gpipe producer loops at 674 cycles an
// iteration from L2 and 563 from HBM.) Prints one JSON object.
//
// armwait: one CTA of two warps. Warp 0 lane 0 is a producer as in hw/probes/ops.cu: S = 4 stages,
//   each iteration waits (try_wait loop) on its own copy of 4 stages back, arms full[s] with
//   arrive.expect_tx and issues one bulk copy of B bytes; no consumer ever arrives anywhere.
//   Source: "l2" cycles over 8 tiles (L2-resident after the warm-up), "hbm" reads a fresh tile each
//   iteration (a 256 MiB buffer is written before every launch, evicting the source from L2).
//   Warp 1, all 32 lanes:
//     mode "none":   exits at once;
//     mode "follow": waits (try_wait loop) on full[s] of every iteration in order, nothing else: with
//                    L2 latencies it is suspended on the stage the producer arms next;
//     mode "other":  waits on a barrier nobody arms (each try_wait returns false at its time limit)
//                    until the producer is done: a suspended warp on another barrier;
//     mode "consume": a consumer as in hw/probes/model.cu gpipe (no read, W = 0): waits on full[s],
//                    lane 0 arrives on empty[s] (count 1); the producer waits on empty[s] of 4
//                    stages back instead of on its own copy;
//     mode "arrive_elsewhere": the same consumer, but it arrives on a barrier nobody waits on (count
//                    2^20 - 1, never completes) and the producer waits on its own copy.
//   cycles_per_iter = (clock64 after the producer loop - before) / 256 (16 warm-up iterations
//   before), median of 5 launches.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "ptx.cuh"
#include "bounded.cuh"

constexpr int N = 256, WU = 16, S = 4;

struct Out { long long c0, c1; int timeout; int wtimeout; };

__global__ void __launch_bounds__(64, 1) armwait(Out* out, const uint8_t* src, int hbm, int B, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[S], empty[S], other, sink;
  __shared__ volatile int done;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) { mb_init(smem_addr(&full[s]), 1); mb_init(smem_addr(&empty[s]), 1); }
    mb_init(smem_addr(&other), 1);
    mb_init(smem_addr(&sink), (1u << 20) - 1);
    done = 0;
    out->timeout = 0;
    out->wtimeout = 0;
  }
  __syncthreads();
  if (warp == 0 && lane == 0) {
    int s = 0;
    uint32_t ph = 0;
    long long c0 = 0;
    for (int it = 0; it < N + WU; ++it) {
      if (it == WU) c0 = clock64();
      if (it >= S && !wait_try(smem_addr(mode == 3 ? &empty[s] : &full[s]), ph ^ 1u)) { out->timeout = 1; break; }
      const size_t n = hbm ? (size_t)it : (size_t)(it & 7);
      mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)B);
      bulk_g2s(smem_addr(smem + (size_t)s * B), src + n * (size_t)B, (uint32_t)B, smem_addr(&full[s]));
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    const long long c1 = clock64();
    out->c0 = c0;
    out->c1 = c1;
    // the last S copies land before the CTA ends
    for (int k = 0; k < S; ++k) {
      int cnt = 0;
      for (int it = k; it < N + WU; it += S) ++cnt;
      wait_try(smem_addr(&full[k]), (uint32_t)((cnt - 1) & 1));
    }
    done = 1;
  } else if (warp == 1 && (mode == 1 || mode == 3 || mode == 4)) {
    int s = 0;
    uint32_t ph = 0;
    for (int it = 0; it < N + WU; ++it) {
      bool ok = wait_try(smem_addr(&full[s]), ph);
      if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) out->wtimeout = 1; break; }
      if (mode >= 3) {
        __syncwarp();
        if (lane == 0) mb_arrive(smem_addr(mode == 3 ? &empty[s] : &sink));
      }
      if (++s == S) { s = 0; ph ^= 1u; }
    }
  } else if (warp == 1 && mode == 2) {
    const long long t0 = clock64();
    while (!done && clock64() - t0 < CAP) (void)mb_try_parity(smem_addr(&other), 0u);
  }
}


int main() {
  const size_t srcBytes = (size_t)(N + WU) * 16384, flushBytes = (size_t)256 << 20;
  uint8_t *src, *flush;
  Out* out;
  CK(cudaMalloc(&src, srcBytes));
  CK(cudaMalloc(&flush, flushBytes));
  CK(cudaMemset(src, 1, srcBytes));
  CK(cudaMallocHost(&out, sizeof(Out)));
  CK(cudaFuncSetAttribute(armwait, cudaFuncAttributeMaxDynamicSharedMemorySize, S * 16384));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("{\"probe\": \"hw/probes/armwait.cu\", \"gpu\": \"%s\", \"iters\": %d, \"warmup\": %d, \"stages\": %d, \"rows\": [", prop.name, N, WU, S);
  const char* modes[] = {"none", "follow", "other", "consume", "arrive_elsewhere"};
  bool first = true;
  for (int hbm = 0; hbm < 2; ++hbm)
    for (int B : {4096, 16384})
      for (int mode = 0; mode < 5; ++mode) {
        std::vector<double> v;
        int to = 0, wto = 0;
        for (int rep = 0; rep < 6; ++rep) {
          if (hbm) CK(cudaMemset(flush, rep, flushBytes));
          armwait<<<1, 64, S * B>>>(out, src, hbm, B, mode);
          CK(cudaDeviceSynchronize());
          to |= out->timeout;
          wto |= out->wtimeout;
          if (rep > 0) v.push_back((double)(out->c1 - out->c0) / N);  // launch 0 warms up
        }
        std::sort(v.begin(), v.end());
        printf("%s\n  {\"source\": \"%s\", \"tile_bytes\": %d, \"waiter\": \"%s\", \"cycles_per_iter\": %.1f, \"min\": %.1f, \"max\": %.1f, \"timeouts\": %d}",
               first ? "" : ",", hbm ? "hbm" : "l2", B, modes[mode], v[v.size() / 2], v.front(), v.back(), to + wto);
        first = false;
      }
  printf("\n]}\n");
  return 0;
}
