// mbsim timing probe: steady-state cycles per iteration of a warp-specialized TMA pipeline.
//   warp 0 (producer, lane 0): wait empty[s] (parity), arrive.expect_tx full[s], cp.async.bulk tile
//   warp 1 (consumer, 32 lanes): wait full[s] (all lanes try_wait), read the tile, spin W cycles
//                                (clock64), __syncwarp, lane 0 arrives on empty[s]
// full[s] and empty[s] are initialised with count 1. The consumer's lane 0 records clock64 right
// after each full wait; cycles/iteration is the median of successive differences after warm-up.
// Configurations: stages S x tile bytes x W, on 1 CTA and on one CTA per SM. Source: L2-hot (the
// same 8 tiles cycled) or streamed from HBM (a fresh region per iteration). Prints JSON.
// Every wait is a bounded poll: a timeout is recorded and the kernel ends.
#include <algorithm>
#include <cstring>
#include <vector>
#include "tmap.cuh"

constexpr int ITERS = 320, WARM = 64;
constexpr long long POLL_CAP_CYCLES = 400000000ll;  // 0.2 s at 2 GHz
constexpr int NSRC_TILES = 8;

struct Out {
  long long t[ITERS];
  long long cw0[ITERS], crel[ITERS], pe[ITERS], pi[ITERS];  // trace mode only
  long long g0, g1, c0, c1;
  int timeout, smid;
  unsigned sink;
};

__device__ __forceinline__ bool wait_par(uint32_t a, uint32_t par) {
  const long long t0 = clock64();
  do {
    if (mb_try_parity(a, par)) return true;
  } while (clock64() - t0 < POLL_CAP_CYCLES);
  return false;
}

// wmode: 0 all 32 consumer lanes poll try_wait; 1 lane 0 polls try_wait, then __syncwarp;
//        2 all lanes poll test_wait. trace: also record per-iteration timestamps of both roles.
__device__ __forceinline__ bool wait_par_mode(uint32_t a, uint32_t par, int wmode, int lane) {
  if (wmode == 0) return wait_par(a, par);
  if (wmode == 1) {
    bool ok = true;
    if (lane == 0) ok = wait_par(a, par);
    __syncwarp();
    return __shfl_sync(0xffffffffu, ok, 0);
  }
  const long long t0 = clock64();
  do {
    if (mb_test_parity(a, par)) return true;
  } while (clock64() - t0 < POLL_CAP_CYCLES);
  return false;
}

__global__ void __launch_bounds__(64, 1)
pipe(Out* outs, const uint8_t* src, int S, int tile, int W, int stream, int wmode, int trace) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[8], empty[8];
  __shared__ int abort_flag;
  Out* out = outs + blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) { mb_init(smem_addr(&full[s]), 1); mb_init(smem_addr(&empty[s]), 1); }
    abort_flag = 0;
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    out->smid = (int)smid;
    out->timeout = 0;
  }
  __syncthreads();
  if (warp == 0) {
    if (lane != 0) return;
    int s = 0;
    uint32_t ph = 0;  // CUTLASS-style pipeline state: stage index and phase bit, no division
    for (int it = 0; it < ITERS; ++it) {
      if (it >= S && !wait_par(smem_addr(&empty[s]), ph ^ 1u)) {
        out->timeout = 1; abort_flag = 1; return;
      }
      if (trace) out->pe[it] = clock64();
      if (*(volatile int*)&abort_flag) return;
      const uint8_t* sp = stream ? src + ((size_t)blockIdx.x * ITERS + it) * (size_t)tile
                                 : src + (size_t)(it & (NSRC_TILES - 1)) * tile;
      mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)tile);
      bulk_g2s(smem_addr(smem + (size_t)s * tile), sp, (uint32_t)tile, smem_addr(&full[s]));
      if (trace) out->pi[it] = clock64();
      if (++s == S) { s = 0; ph ^= 1u; }
    }
  } else if (warp == 1) {
    unsigned acc = 0;
    if (lane == 0) { out->g0 = globaltimer(); out->c0 = clock64(); }
    int s = 0;
    uint32_t ph = 0;
    for (int it = 0; it < ITERS; ++it) {
      if (trace && lane == 0) out->cw0[it] = clock64();
      bool ok = wait_par_mode(smem_addr(&full[s]), ph, wmode, lane);
      if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) { out->timeout = 1; abort_flag = 1; } break; }
      long long t = clock64();
      if (lane == 0) out->t[it] = t;
      acc += ((const unsigned*)(smem + (size_t)s * tile))[lane * 4];
      if (W > 0) spin_cycles(W);
      __syncwarp();
      if (lane == 0) {
        mb_arrive(smem_addr(&empty[s]));
        if (trace) out->crel[it] = clock64();
      }
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    if (lane == 0) { out->g1 = globaltimer(); out->c1 = clock64(); out->sink = acc; }
  }
}


// Variants of the same pipeline (KIND 1: the producer issues a cp.async.bulk.tensor.2d box through a
// CUtensorMap; KIND 2: a 2-CTA cluster, each producer multicasts half of the tile to both CTAs, each
// full[s] expects the whole tile, each consumer releases empty[s] in both CTAs (empty count 2, a local
// and a remote arrive, as CUTLASS's ClusterBarrier::arrive(cta)); KIND 3: the consumer is a warpgroup
// (warps 4..7) that runs KS wgmma.m64n128k16 (bf16, both operands from the stage: A 64x16KS then
// B 128x16KS, no swizzle), commits, waits for them, and lane 0 of each warp arrives on empty[s]
// (count 4)). The original kernel above stays byte-for-byte what it was.
template <int KIND>
__global__ void __launch_bounds__(KIND == 3 ? 256 : 64, 1)
pipe_x(Out* outs, const uint8_t* src, int S, int tile, int W, int stream, int ks, const __grid_constant__ CUtensorMap tmap) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[8], empty[8];
  __shared__ int abort_flag;
  Out* out = outs + blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t rank = KIND == 2 ? cluster_rank() : 0u;
  constexpr int CW = KIND == 3 ? 4 : 1;  // first consumer warp
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mb_init(smem_addr(&full[s]), 1);
      mb_init(smem_addr(&empty[s]), KIND == 2 ? 2 : KIND == 3 ? 4 : 1);
    }
    abort_flag = 0;
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    out->smid = (int)smid;
    out->timeout = 0;
    if (KIND == 2) fence_mbarrier_init_cluster();
  }
  __syncthreads();
  if (KIND == 2) cluster_sync_all();
  if (warp == 0) {
    if (lane == 0) {
      int s = 0;
      uint32_t ph = 0;
      for (int it = 0; it < ITERS; ++it) {
        if (it >= S && !wait_par(smem_addr(&empty[s]), ph ^ 1u)) { out->timeout = 1; abort_flag = 1; break; }
        if (*(volatile int*)&abort_flag) break;
        const size_t n = stream ? (size_t)(KIND == 2 ? blockIdx.x / 2 : blockIdx.x) * ITERS + it : (size_t)(it & (NSRC_TILES - 1));
        mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)tile);
        if (KIND == 1) {
          tensor_g2s(smem_addr(smem + (size_t)s * tile), &tmap, 0, (int)(n * (size_t)(tile / 256)), smem_addr(&full[s]));
        } else if (KIND == 2) {
          const uint32_t half = (uint32_t)tile / 2;
          bulk_g2s_mc(smem_addr(smem + (size_t)s * tile + rank * half), src + n * (size_t)tile + rank * half, half,
                      smem_addr(&full[s]), (uint16_t)3);
        } else {
          bulk_g2s(smem_addr(smem + (size_t)s * tile), src + n * (size_t)tile, (uint32_t)tile, smem_addr(&full[s]));
        }
        if (++s == S) { s = 0; ph ^= 1u; }
      }
    }
  } else if (warp >= CW && warp < CW + (KIND == 3 ? 4 : 1)) {
    unsigned acc = 0;
    float d[KIND == 3 ? 64 : 1];
    for (int i = 0; i < (KIND == 3 ? 64 : 1); ++i) d[i] = 0.f;
    const bool rec = threadIdx.x == CW * 32;
    if (rec) { out->g0 = globaltimer(); out->c0 = clock64(); }
    int s = 0;
    uint32_t ph = 0;
    for (int it = 0; it < ITERS; ++it) {
      bool ok = wait_par(smem_addr(&full[s]), ph);
      if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) { out->timeout = 1; abort_flag = 1; } break; }
      long long t = clock64();
      if (rec) out->t[it] = t;
      uint8_t* st = smem + (size_t)s * tile;
      if constexpr (KIND == 3) {
        wgmma_fence();
        const uint32_t a0 = smem_addr(st), b0 = a0 + (uint32_t)ks * 2048u;
        for (int kk = 0; kk < ks; ++kk)
          wgmma_m64n128k16(d, gmma_desc(a0 + kk * 2048u, 128, 256), gmma_desc(b0 + kk * 4096u, 128, 256), 1);
        wgmma_commit();
        wgmma_wait0();
      } else {
        acc += ((const unsigned*)st)[lane * 4];
      }
      if (W > 0) spin_cycles(W);
      __syncwarp();
      if (lane == 0) {
        mb_arrive(smem_addr(&empty[s]));
        if (KIND == 2) rmb_arrive_plain(mapa(smem_addr(&empty[s]), rank ^ 1u));
      }
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    if (rec) { out->g1 = globaltimer(); out->c1 = clock64(); out->sink = acc + (unsigned)d[0]; }
  }
  if (KIND == 2) {  // no CTA leaves while its peer can still multicast or arrive into it
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
  }
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double pctl(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[(size_t)(p * (v.size() - 1))];
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int nsm = prop.multiProcessorCount;
  const int maxSmem = 200 * 1024;
  CK(cudaFuncSetAttribute(pipe, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  const size_t big = (size_t)nsm * ITERS * 64 * 1024;  // streaming source for the largest tile
  uint8_t* src;
  CK(cudaMalloc(&src, big));
  CK(cudaMemset(src, 0x3c, big));
  Out* d;
  CK(cudaMalloc(&d, sizeof(Out) * nsm));
  std::vector<Out> h(nsm);

  struct Cfg { int S, kib, W, ctas, stream, wmode = 0, trace = 0, kind = 0, ks = 0; };
  std::vector<Cfg> cfgs;
  for (int S : {1, 2, 4, 8})
    for (int kib : {4, 16, 64})
      for (int W : {0, 500, 2000})
        if (S * kib * 1024 <= maxSmem) cfgs.push_back({S, kib, W, 1, 0});
  for (int W : {0, 500, 2000}) cfgs.push_back({3, 64, W, 1, 0});
  const Cfg multi[] = {{2, 16, 0, 0, 0}, {4, 16, 0, 0, 0}, {4, 16, 500, 0, 0}, {8, 4, 0, 0, 0}, {4, 4, 2000, 0, 0},
                       {2, 64, 0, 0, 0}, {3, 64, 0, 0, 0}, {4, 16, 0, 0, 1}, {2, 64, 0, 0, 1}, {3, 64, 2000, 0, 1},
                       {1, 64, 0, 0, 0}, {8, 16, 0, 0, 0}};
  for (Cfg c : multi) { c.ctas = nsm; cfgs.push_back(c); }
  for (Cfg c : {Cfg{4, 16, 0, 1, 1}, Cfg{2, 64, 0, 1, 1}, Cfg{1, 64, 0, 1, 1}}) cfgs.push_back(c);
  // consumer wait variants and traced runs (1 CTA)
  for (int wm : {1, 2})
    for (Cfg c : {Cfg{4, 16, 0, 1, 0}, Cfg{1, 4, 0, 1, 0}, Cfg{4, 4, 500, 1, 0}}) { c.wmode = wm; cfgs.push_back(c); }
  for (int wm : {0, 1, 2})
    for (Cfg c : {Cfg{4, 16, 0, 1, 0}, Cfg{1, 4, 0, 1, 0}, Cfg{4, 4, 500, 1, 0}, Cfg{2, 64, 0, 1, 0}}) {
      c.wmode = wm; c.trace = 1; cfgs.push_back(c);
    }
  // load sweep: plain bulk copies, W = 0, on 33 / 66 / 132 CTAs, L2-hot and HBM
  for (int n : {33, 66, nsm})
    for (int stream : {0, 1})
      for (Cfg c : {Cfg{1, 16, 0, 0, 0}, Cfg{2, 16, 0, 0, 0}, Cfg{4, 16, 0, 0, 0}, Cfg{1, 64, 0, 0, 0}, Cfg{2, 64, 0, 0, 0},
                    Cfg{3, 64, 0, 0, 0}}) {
        c.ctas = n; c.stream = stream;
        bool dup = false;
        for (const Cfg& o : cfgs) dup |= o.S == c.S && o.kib == c.kib && o.W == 0 && o.ctas == n && o.stream == stream && !o.trace && !o.wmode && !o.kind;
        if (!dup) cfgs.push_back(c);
      }
  for (Cfg c : {Cfg{1, 16, 0, 1, 1}, Cfg{2, 16, 0, 1, 1}, Cfg{3, 64, 0, 1, 1}, Cfg{2, 64, 500, 0, 0}, Cfg{3, 64, 500, 0, 1}}) {
    if (c.ctas == 0) c.ctas = nsm;
    cfgs.push_back(c);
  }
  // tensor-map copies (KIND 1)
  for (Cfg c : {Cfg{1, 16, 0, 1, 0}, Cfg{2, 16, 0, 1, 0}, Cfg{4, 16, 0, 1, 0}, Cfg{4, 16, 500, 1, 0}, Cfg{1, 64, 0, 1, 0},
                Cfg{2, 64, 0, 1, 0}, Cfg{3, 64, 0, 1, 0}, Cfg{1, 16, 0, 1, 1}, Cfg{4, 16, 0, 0, 0}, Cfg{2, 64, 0, 0, 0},
                Cfg{3, 64, 0, 0, 0}, Cfg{4, 16, 0, 0, 1}}) {
    if (c.ctas == 0) c.ctas = nsm;
    c.kind = 1; cfgs.push_back(c);
  }
  // 2-CTA cluster multicast pipeline (KIND 2)
  for (Cfg c : {Cfg{1, 16, 0, 2, 0}, Cfg{2, 16, 0, 2, 0}, Cfg{4, 16, 0, 2, 0}, Cfg{4, 16, 500, 2, 0}, Cfg{1, 64, 0, 2, 0},
                Cfg{2, 64, 0, 2, 0}, Cfg{3, 64, 0, 2, 0}, Cfg{4, 16, 0, 0, 0}, Cfg{2, 64, 0, 0, 0}, Cfg{3, 64, 0, 0, 0},
                Cfg{4, 16, 0, 0, 1}, Cfg{2, 64, 0, 0, 1}}) {
    if (c.ctas == 0) c.ctas = nsm;
    c.kind = 2; cfgs.push_back(c);
  }
  // wgmma consumer (KIND 3): KS wgmma.m64n128k16 per stage, tile = KS x 6 KiB
  for (Cfg c : {Cfg{1, 4, 0, 1, 0}, Cfg{2, 4, 0, 1, 0}, Cfg{4, 4, 0, 1, 0}, Cfg{1, 8, 0, 1, 0}, Cfg{2, 8, 0, 1, 0},
                Cfg{4, 8, 0, 1, 0}, Cfg{2, 4, 0, 0, 0}, Cfg{4, 4, 0, 0, 0}, Cfg{2, 8, 0, 0, 0}, Cfg{4, 8, 0, 0, 0},
                Cfg{4, 4, 0, 0, 1}, Cfg{4, 4, 500, 1, 0}}) {
    if (c.ctas == 0) c.ctas = nsm;
    c.kind = 3; c.ks = c.kib; c.kib = 0; cfgs.push_back(c);
  }
  CK(cudaFuncSetAttribute(pipe_x<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(pipe_x<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(pipe_x<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(pipe_x<2>, cudaFuncAttributeNonPortableClusterSizeAllowed, 0));

  printf("{\"probe\": \"hw/probes/pipeline.cu\", \"gpu\": \"%s\", \"sm_count\": %d, \"iters\": %d, \"warmup\": %d, "
         "\"note\": \"cycles_per_iter = median over CTAs of the median of successive consumer full-wait completion "
         "timestamps (clock64) after warm-up; sm_clock_mhz from clock64 vs globaltimer over the consumer loop\", \"configs\": [",
         prop.name, nsm, ITERS, WARM);
  bool first = true;
  for (const Cfg& c : cfgs) {
    const int tile = c.kind == 3 ? c.ks * 6144 : c.kib * 1024;
    CUtensorMap tmap;
    memset(&tmap, 0, sizeof tmap);
    if (c.kind == 1) tmap = make_tmap_2d(src, 128, big / 256, 128, (uint32_t)tile / 256);
    int smemBytes = c.S * tile;
    if (c.ctas > 1) smemBytes = std::max(smemBytes, 120 * 1024);  // force one CTA per SM
    std::vector<double> per_cta_med, per_cta_mean, all_deltas, mhz;
    std::vector<double> tr_wait, tr_body, tr_prod_wait, tr_issue_to_seen, tr_rel_to_pwake, tr_issue;
    int timeouts = 0, distinct_sm = 0;
    for (int rep = 0; rep < 3; ++rep) {
      CK(cudaMemset(d, 0, sizeof(Out) * nsm));
      if (c.kind == 0) {
        pipe<<<c.ctas, 64, smemBytes>>>(d, src, c.S, tile, c.W, c.stream, c.wmode, c.trace);
      } else {
        cudaLaunchConfig_t lc = {};
        lc.gridDim = dim3(c.ctas);
        lc.blockDim = dim3(c.kind == 3 ? 256 : 64);
        lc.dynamicSmemBytes = smemBytes;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = c.kind == 2 ? 2 : 1;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        lc.attrs = at;
        lc.numAttrs = 1;
        const uint8_t* csrc = src;
        if (c.kind == 1) CK(cudaLaunchKernelEx(&lc, pipe_x<1>, d, csrc, c.S, tile, c.W, c.stream, c.ks, tmap));
        if (c.kind == 2) CK(cudaLaunchKernelEx(&lc, pipe_x<2>, d, csrc, c.S, tile, c.W, c.stream, c.ks, tmap));
        if (c.kind == 3) CK(cudaLaunchKernelEx(&lc, pipe_x<3>, d, csrc, c.S, tile, c.W, c.stream, c.ks, tmap));
      }
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (rep == 0) continue;  // warm-up launch (L2, instruction cache)
      CK(cudaMemcpy(h.data(), d, sizeof(Out) * c.ctas, cudaMemcpyDeviceToHost));
      std::vector<int> sms;
      for (int b = 0; b < c.ctas; ++b) {
        const Out& o = h[b];
        timeouts += o.timeout;
        sms.push_back(o.smid);
        if (o.timeout) continue;
        std::vector<double> dl;
        for (int i = WARM + 1; i < ITERS; ++i) dl.push_back((double)(o.t[i] - o.t[i - 1]));
        per_cta_med.push_back(median(dl));
        per_cta_mean.push_back((double)(o.t[ITERS - 1] - o.t[WARM]) / (ITERS - 1 - WARM));
        if (b == 0) all_deltas.insert(all_deltas.end(), dl.begin(), dl.end());
        if (b == 0 && c.trace)
          for (int i = WARM; i < ITERS - c.S; ++i) {
            tr_wait.push_back((double)(o.t[i] - o.cw0[i]));
            tr_body.push_back((double)(o.crel[i] - o.t[i]));
            tr_issue_to_seen.push_back((double)(o.t[i] - o.pi[i]));
            tr_issue.push_back((double)(o.pi[i] - o.pe[i]));
            tr_rel_to_pwake.push_back((double)(o.pe[i + c.S] - o.crel[i]));
            tr_prod_wait.push_back((double)(o.pe[i + 1] - o.pi[i]));
          }
        mhz.push_back((double)(o.c1 - o.c0) / (double)(o.g1 - o.g0) * 1000.0);
      }
      std::sort(sms.begin(), sms.end());
      distinct_sm = (int)(std::unique(sms.begin(), sms.end()) - sms.begin());
    }
    if (!first) printf(",");
    first = false;
    printf("\n  {\"stages\": %d, \"tile_bytes\": %d, \"work_cycles\": %d, \"ctas\": %d, \"source\": \"%s\", \"timeouts\": %d, "
           "\"distinct_sms\": %d, \"consumer_wait\": \"%s\", \"trace\": %s",
           c.S, tile, c.W, c.ctas, c.stream ? "hbm_stream" : "l2_hot", timeouts, distinct_sm,
           c.wmode == 0 ? "try_wait_all_lanes" : c.wmode == 1 ? "try_wait_lane0_syncwarp" : "test_wait_all_lanes",
           c.trace ? "true" : "false");
    printf(", \"kind\": \"%s\"", c.kind == 0 ? "bulk" : c.kind == 1 ? "tensor" : c.kind == 2 ? "multicast_cluster2" : "wgmma");
    if (c.kind == 3) printf(", \"wgmma_per_stage\": %d, \"wgmma_shape\": \"m64n128k16\"", c.ks);
    if (c.trace && !tr_wait.empty())
      printf(", \"breakdown_median\": {\"consumer_wait\": %.1f, \"consumer_body\": %.1f, \"producer_issue\": %.1f, "
             "\"producer_wait_empty\": %.1f, \"issue_done_to_consumer_sees_full\": %.1f, \"release_to_producer_passes_empty\": %.1f}",
             median(tr_wait), median(tr_body), median(tr_issue), median(tr_prod_wait), median(tr_issue_to_seen),
             median(tr_rel_to_pwake));
    if (!per_cta_med.empty()) {
      printf(", \"cycles_per_iter\": %.1f, \"mean_cycles_per_iter\": %.1f, \"cta_median_min\": %.1f, \"cta_median_max\": %.1f, "
             "\"cta0_p10\": %.1f, \"cta0_p90\": %.1f, \"sm_clock_mhz\": %.1f, \"bytes_per_cycle_per_sm\": %.2f",
             median(per_cta_med), median(per_cta_mean), pctl(per_cta_med, 0.0), pctl(per_cta_med, 1.0),
             pctl(all_deltas, 0.1), pctl(all_deltas, 0.9), median(mhz), tile / median(per_cta_med));
    }
    printf("}");
    fflush(stdout);
  }
  printf("\n]}\n");
  return 0;
}
