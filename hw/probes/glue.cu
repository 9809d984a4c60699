// mbsim timing probe: which part of the gpipe kernel's own per-iteration code (hw/probes/model.cu)
// makes its producer loop slower when the copies come from L2 than from HBM (one bulk copy: 674
// against 563 cycles an iteration; two tensor boxes: 910 against 594), while the minimal pipeline
// of hw/probes/armwait.cu (mode consume) runs at 294 from L2 and 338-371 from HBM; and whether
// bank-conflicted shared-memory stores of other warps stall a producer's barrier and copy
// operations (the persistent loops' epilogue is not hidden by 4 stages). Prints one JSON object.
//
// ablate: NCTA CTAs (1, or one per SM) of two warps. Warp 0 lane 0 produces: S = 4 stages, waits
//   (bounded try_wait loop) on empty[s] 4 stages back, arrive.expect_tx(full[s]), one 16 KiB bulk
//   copy or two 16 KiB tensor-map boxes (128 x 64 bf16, the gpipe mainloop's A and B). Warp 1 (32
//   lanes) consumes: waits on full[s], __syncwarp, lane 0 arrives on empty[s] (count 1). Flags add
//   one piece of gpipe's code each:
//     1 ABORT:  the producer reads a volatile shared abort flag after its wait;
//     2 INDEX:  the producer computes the source tile at run time as gpipe does (it % nt, CTA * ITERS + it);
//     4 PSTORE: the producer stores clock64() to global memory after its copy issue;
//     8 VOTE:   the consumer runs __all_sync on its wait result;
//    16 CSTAMP: the consumer's thread 0 stores clock64() into shared memory after its wait.
//   Source: l2 (8 tiles; one per CTA group of 8, L2-resident after the warm-up launch), hbm (a fresh
//   tile every iteration; a 256 MiB buffer is written before every launch, evicting the source).
//   producer_cycles = (clock64 after the producer loop - before) / 256 (16 warm-up iterations);
//   consumer_cycles = mean spacing of the consumer's full-wait passes over the same iterations;
//   median over CTAs, then of 5 launches after a warm-up launch.
// smem: one CTA. Warp 0 lane 0 runs the producer loop of hw/probes/ops.cu (waits on its own copy
//   4 stages back, arrive.expect_tx, one 16 KiB bulk copy from L2, no consumer) while warps 1-4
//   (128 threads) store into shared memory until it is done: none, conflict-free st.shared.v4
//   (consecutive 16 B per thread) or 32-way conflicted st.shared.v4 (threads 256 B apart, the
//   pattern of model.cu's epilogue). producer_cycles as above; store_bytes_per_cycle of the storers.
#include <algorithm>
#include <string>
#include <vector>
#include "tmap.cuh"
#include "bounded.cuh"

constexpr int N = 256, WU = 16, S = 4, TILE = 16384, NSRC = 8;

struct AOut { long long c0, c1, t0, t1; int timeout; long long pst[N + WU]; };

__global__ void __launch_bounds__(64, 1)
ablate(AOut* outs, const uint8_t* src, int flags, int tensor, int hbm, int nt, const __grid_constant__ CUtensorMap ta,
       const __grid_constant__ CUtensorMap tb) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[S], empty[S];
  __shared__ long long ts[N + WU];
  __shared__ int abort_flag;
  AOut* out = outs + blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) { mb_init(smem_addr(&full[s]), 1); mb_init(smem_addr(&empty[s]), 1); }
    abort_flag = 0;
    out->timeout = 0;
  }
  __syncthreads();
  if (warp == 0 && lane == 0) {
    int s = 0;
    uint32_t ph = 0;
    long long c0 = 0;
    for (int it = 0; it < N + WU; ++it) {
      if (it == WU) c0 = clock64();
      if (it >= S && !wait_try(smem_addr(&empty[s]), ph ^ 1u)) { out->timeout = 1; abort_flag = 1; break; }
      if ((flags & 1) && *(volatile int*)&abort_flag) break;
      size_t n;  // source tile: the same value either way, INDEX computes it as gpipe does
      if (flags & 2) {
        const int sm = hbm ? 2 : 0;
        n = sm == 0 ? (size_t)(it % nt) : sm == 1 ? (size_t)blockIdx.x * nt + it % nt : (size_t)blockIdx.x * (N + WU) + it;
      } else {
        n = hbm ? (size_t)blockIdx.x * (N + WU) + it : (size_t)(it & (NSRC - 1));
      }
      const uint32_t st = smem_addr(smem + (size_t)s * 2 * TILE);
      mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)(tensor ? 2 * TILE : TILE));
      if (tensor) {
        // A: this CTA's 128 rows (distinct per CTA), B: shared by every CTA; column block per iteration
        const int kx = (int)((hbm ? (size_t)it : n % NSRC) * 64);
        tensor_g2s(st, &ta, kx, (int)(blockIdx.x * 128), smem_addr(&full[s]));
        tensor_g2s(st + TILE, &tb, kx, 0, smem_addr(&full[s]));
      } else {
        bulk_g2s(st, src + n * (size_t)TILE, (uint32_t)TILE, smem_addr(&full[s]));
      }
      if (flags & 4) out->pst[it] = clock64();
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    out->c0 = c0;
    out->c1 = clock64();
  } else if (warp == 1) {
    int s = 0;
    uint32_t ph = 0;
    for (int it = 0; it < N + WU; ++it) {
      bool ok = wait_try(smem_addr(&full[s]), ph);
      if (flags & 8) {
        if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) { out->timeout = 1; abort_flag = 1; } break; }
      } else if (!ok) { if (lane == 0) out->timeout = 1; break; }
      const long long t = clock64();
      if (lane == 0) {
        if (flags & 16) ts[it] = t;  // gpipe's per-iteration timestamp
        else if (it == WU) out->t0 = t;  // otherwise only the two the statistic needs
        else if (it == N + WU - 1) out->t1 = t;
      }
      __syncwarp();
      if (lane == 0) mb_arrive(smem_addr(&empty[s]));
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    if (lane == 0 && (flags & 16)) { out->t0 = ts[WU]; out->t1 = ts[N + WU - 1]; }
  }
}

struct SOut { long long c0, c1, st0, st1, bytes; int timeout; };

__global__ void __launch_bounds__(160, 1) smemload(SOut* out, const uint8_t* src, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[S];
  __shared__ volatile int done;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint8_t* ebuf = smem + S * TILE;  // 32 KiB store buffer after the stages
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mb_init(smem_addr(&full[s]), 1);
    done = 0;
    out->timeout = 0;
  }
  __syncthreads();
  if (warp == 0 && lane == 0) {
    int s = 0;
    uint32_t ph = 0;
    long long c0 = 0;
    for (int it = 0; it < N + WU; ++it) {
      if (it == WU) c0 = clock64();
      if (it >= S && !wait_try(smem_addr(&full[s]), ph ^ 1u)) { out->timeout = 1; break; }
      mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)TILE);
      bulk_g2s(smem_addr(smem + (size_t)s * TILE), src + (size_t)(it & 7) * TILE, (uint32_t)TILE, smem_addr(&full[s]));
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    out->c0 = c0;
    out->c1 = clock64();
    for (int k = 0; k < S; ++k) {
      int cnt = 0;
      for (int it = k; it < N + WU; it += S) ++cnt;
      wait_try(smem_addr(&full[k]), (uint32_t)((cnt - 1) & 1));
    }
    done = 1;
  } else if (warp >= 1 && mode > 0) {
    const int t = threadIdx.x - 32;  // 0..127
    const float v = (float)t;
    long long n = 0;
    const long long s0 = clock64();
    while (!done && clock64() - s0 < CAP) {
      for (int b = 0; b < 256; b += 16) {
        // mode 1: consecutive 16 B per thread (conflict-free); mode 2: threads 256 B apart (32-way)
        const uint32_t off = mode == 1 ? (uint32_t)(b * 128 + t * 16) : (uint32_t)(t * 256 + b);
        asm volatile("st.shared.v4.f32 [%0], {%1, %1, %1, %1};" ::"r"(smem_addr(ebuf + off)), "f"(v) : "memory");
      }
      n += 256;
    }
    if (t == 0) { out->st0 = s0; out->st1 = clock64(); out->bytes = n * 128; }
  }
}

static double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int nsm = prop.multiProcessorCount;
  // A: [(N + WU) * 64 cols][nsm * 128 rows] bf16 (a 16 KiB box of 128 x 64 per CTA and iteration),
  // B: [(N + WU) * 64][128] after it; bulk copies read 16 KiB tiles from the start of the buffer
  const uint64_t kc = (uint64_t)(N + WU) * 64;
  const size_t aBytes = std::max((size_t)kc * 2 * nsm * 128, (size_t)nsm * (N + WU) * TILE);
  const size_t srcBytes = aBytes + kc * 128 * 2, flushBytes = (size_t)256 << 20;
  uint8_t *src, *flush;
  CK(cudaMalloc(&src, srcBytes));
  CK(cudaMalloc(&flush, flushBytes));
  CK(cudaMemset(src, 1, srcBytes));
  AOut* d;
  CK(cudaMalloc(&d, sizeof(AOut) * nsm));
  std::vector<AOut> h(nsm);
  CUtensorMap tA = make_tmap_2d(src, kc, (uint64_t)nsm * 128, 64, 128);
  CUtensorMap tB = make_tmap_2d(src + aBytes, kc, 128, 64, 128);
  const int smemBytes = S * 2 * TILE;
  CK(cudaFuncSetAttribute(ablate, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
  printf("{\"probe\": \"hw/probes/glue.cu\", \"gpu\": \"%s\", \"iters\": %d, \"warmup\": %d, \"stages\": %d, \"ablate\": [", prop.name, N, WU, S);
  const int FL[] = {0, 1, 2, 4, 8, 16, 31, 30, 29, 27, 23, 15};
  bool first = true;
  for (int ctas : {1, nsm})
    for (int hbm = 0; hbm < 2; ++hbm)
      for (int tensor = 0; tensor < 2; ++tensor)
        for (int f : FL) {
          std::vector<double> pv, cv;
          int to = 0;
          for (int rep = 0; rep < 6; ++rep) {
            if (hbm) CK(cudaMemset(flush, rep, flushBytes));
            ablate<<<ctas, 64, smemBytes>>>(d, src, f, tensor, hbm, NSRC, tA, tB);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            if (!rep) continue;
            CK(cudaMemcpy(h.data(), d, sizeof(AOut) * ctas, cudaMemcpyDeviceToHost));
            std::vector<double> p, c;
            for (int b = 0; b < ctas; ++b) {
              to += h[b].timeout;
              p.push_back((double)(h[b].c1 - h[b].c0) / N);
              c.push_back((double)(h[b].t1 - h[b].t0) / (N - 1));
            }
            pv.push_back(median(p));
            cv.push_back(median(c));
          }
          printf("%s\n  {\"ctas\": %d, \"source\": \"%s\", \"copy\": \"%s\", \"flags\": %d, \"timeouts\": %d, \"producer_cycles\": %.1f, \"consumer_cycles\": %.1f}",
                 first ? "" : ",", ctas, hbm ? "hbm" : "l2", tensor ? "tensor2" : "bulk", f, to, median(pv), median(cv));
          first = false;
          fflush(stdout);
        }
  printf("\n], \"smem\": [");
  SOut* sd;
  CK(cudaMalloc(&sd, sizeof(SOut)));
  CK(cudaFuncSetAttribute(smemload, cudaFuncAttributeMaxDynamicSharedMemorySize, S * TILE + 32768));
  first = true;
  const char* names[] = {"none", "conflict_free", "conflict_32way"};
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<double> pv, bw;
    int to = 0;
    for (int rep = 0; rep < 6; ++rep) {
      smemload<<<1, 160, S * TILE + 32768>>>(sd, src, mode);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (!rep) continue;
      SOut o;
      CK(cudaMemcpy(&o, sd, sizeof o, cudaMemcpyDeviceToHost));
      to += o.timeout;
      pv.push_back((double)(o.c1 - o.c0) / N);
      if (mode) bw.push_back((double)o.bytes / (double)(o.st1 - o.st0));
    }
    printf("%s\n  {\"stores\": \"%s\", \"timeouts\": %d, \"producer_cycles\": %.1f, \"store_bytes_per_cycle\": %.1f}", first ? "" : ",", names[mode], to,
           median(pv), mode ? median(bw) : 0.0);
    first = false;
  }
  printf("\n]}\n");
  return 0;
}
