// mbsim timing probe: lean warp-specialized pipelines on 1..132 CTAs (one per SM), for held-out
// validation of the timing model (docs/HARDWARE.md "Lean pipelines"). Prints one JSON object.
//
// The kernel is the pipeline a kernel engineer writes, with no instrumentation inside the loops:
// warp 0 lane 0 produces (wait empty[s] from the second round, arrive.expect_tx(full[s], stage
// bytes), one bulk copy, or a 1/C slice multicast to the C CTAs of a cluster, or two tensor-map
// boxes A and B; optionally spin PG cycles); CW consumer warps (from warp 1, or warp 4 when they
// form warpgroups) wait on full[s] with all lanes (try_wait.parity, re-polled after its time
// limit), optionally read a word, run wgmma m64n128k16 on the stage (ACC 64: 4 per warpgroup,
// ACC 128: 8), spin W cycles, and lane 0 of each consumer warp arrives on empty[s] of every CTA of
// the cluster (count CW x C). An epilogue every KT iterations (persistent tile loop): the previous
// store has read its buffer, bar.sync, every consumer thread writes E / threads bytes to shared
// memory (st.shared.v4, conflict-free), fence.proxy.async, bar.sync, one thread issues
// cp.async.bulk global<-shared and commits the bulk group.
// Timing: the first consumer thread reads clock64 and %globaltimer when its wait for iteration
// WARM passes and when its last wait passes, into registers; the producer reads clock64 when it
// issues iteration WARM and its last iteration. cycles_per_iter = (end - start) / (ITERS-1-WARM).
// Sources: l2_shared (every CTA cycles over the same 8 tiles), l2_distinct (each CTA, or cluster,
// cycles over its own NT tiles; 132 x NT x tile <= about 24 MiB), hbm (a fresh tile every
// iteration; L2 flushed before every launch). Every wait is bounded (bounded.cuh).
//
// Build and run (from the repository root): bash hw/run_lean.sh
#include <algorithm>
#include <array>
#include <string>
#include <vector>
#include "tmap.cuh"
#include "bounded.cuh"

constexpr int ITERS = 400, WARM = 80;

struct LP {
  int S, tile, C, CW, copy /*0 bulk, 1 tensor A+B*/, src /*0 l2_shared 1 l2_distinct 2 hbm*/, nt, W, PG, read, KT, E;
  // epilogue parts switched off (family `epilogue`; 0 in every other family): 1 the wait for the
  // previous store's read, 2 both bar.sync, 4 the st.shared, 8 fence.proxy.async, 16 the bulk store
  // and its commit; 32 stores to one L2-resident buffer per CTA instead of a fresh HBM one per tile
  int EF;
};
struct LOut {
  long long c0, c1, g0, g1, p0, p1;
  int timeout, smid;
  unsigned sink;
};

__device__ __forceinline__ void bulk_s2g(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void named_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }

template <int ACC>  // 0: no wgmma; 64: 4 wgmma m64n128k16 per warpgroup per stage; 128: 8
__global__ void __launch_bounds__(ACC == 128 ? 256 : 384, 1)
lpipe(LOut* outs, const uint8_t* src, uint8_t* dst, LP P, const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[8], empty[8];
  LOut* out = outs + blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int CW0 = (ACC > 0 || P.CW >= 4) ? 4 : 1;
  const uint32_t rank = P.C > 1 ? cluster_rank() : 0u;
  const int S = P.S, tile = P.tile;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) { mb_init(smem_addr(&full[s]), 1); mb_init(smem_addr(&empty[s]), (uint32_t)max(1, P.CW * P.C)); }
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    out->smid = (int)smid;
    out->timeout = 0;
    if (P.C > 1) fence_mbarrier_init_cluster();
  }
  __syncthreads();
  if (P.C > 1) cluster_sync_all();
  const size_t group = P.C > 1 ? blockIdx.x / P.C : blockIdx.x;  // the CTA's (or cluster's) stream
  if (warp == 0) {
    if (lane == 0) {
      int s = 0;
      uint32_t ph = 0;
      long long p0 = 0;
      for (int it = 0; it < ITERS; ++it) {
        // with no consumer (CW 0) the producer waits on its own copy of S iterations back
        if (it >= S && !wait_try(smem_addr(P.CW ? &empty[s] : &full[s]), ph ^ 1u)) { out->timeout = 1; break; }
        if (it == WARM) p0 = clock64();
        const size_t n = P.src == 0 ? (size_t)(it % P.nt) : P.src == 1 ? group * P.nt + it % P.nt : group * ITERS + it;
        const uint32_t st = smem_addr(smem + (size_t)s * tile);
        mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)tile);
        if (P.copy == 1) {
          // A: rows of this CTA's M block (distinct unless l2_shared), B: shared by every CTA
          const int kx = (int)((P.src == 2 ? it : it % P.nt) * 64);
          const int ay = P.src == 0 ? 0 : (int)(blockIdx.x * 128);
          tensor_g2s(st, &ta, kx, ay, smem_addr(&full[s]));
          tensor_g2s(st + tile / 2, &tb, kx, 0, smem_addr(&full[s]));
        } else if (P.C > 1) {
          const uint32_t sl = (uint32_t)tile / P.C;
          bulk_g2s_mc(st + rank * sl, src + n * (size_t)tile + rank * sl, sl, smem_addr(&full[s]), (uint16_t)((1u << P.C) - 1));
        } else {
          bulk_g2s(st, src + n * (size_t)tile, (uint32_t)tile, smem_addr(&full[s]));
        }
        if (P.PG > 0) spin_cycles(P.PG);
        if (++s == S) { s = 0; ph ^= 1u; }
      }
      out->p0 = p0;
      out->p1 = clock64();
      if (P.CW == 0) {
        out->c0 = p0;
        out->c1 = out->p1;
        for (int k = 0; k < S; ++k) {  // the last S copies land before the CTA ends
          int cnt = 0;
          for (int it = k; it < ITERS; it += S) ++cnt;
          wait_try(smem_addr(&full[k]), (uint32_t)((cnt - 1) & 1));
        }
      }
    }
  } else if (warp >= CW0 && warp < CW0 + P.CW) {
    unsigned acc = 0;
    float d0[ACC ? 64 : 1], d1[ACC == 128 ? 64 : 1];
    for (int i = 0; i < (ACC ? 64 : 1); ++i) d0[i] = 0.f;
    for (int i = 0; i < (ACC == 128 ? 64 : 1); ++i) d1[i] = 0.f;
    const int ct = threadIdx.x - CW0 * 32, nct = P.CW * 32;
    const bool rec = ct == 0;
    const int wg = (warp - CW0) / 4;
    uint8_t* ebuf = smem + (size_t)S * tile;
    int s = 0, ntile = 0;
    uint32_t ph = 0;
    long long c0 = 0, c1 = 0, g0 = 0, g1 = 0;
    for (int it = 0; it < ITERS; ++it) {
      bool ok = wait_try(smem_addr(&full[s]), ph);
      if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) out->timeout = 1; break; }
      if (rec && it == WARM) { c0 = clock64(); g0 = globaltimer(); }
      if (rec && it == ITERS - 1) { c1 = clock64(); g1 = globaltimer(); }
      uint8_t* st = smem + (size_t)s * tile;
      if (P.read) acc += ((const unsigned*)st)[lane * 4];
      if constexpr (ACC > 0) {
        wgmma_fence();
        const uint32_t a0 = smem_addr(st), b0 = a0 + 16384u;
        const int mb0 = ACC == 128 ? 0 : wg;
        for (int kk = 0; kk < 4; ++kk)
          wgmma_m64n128k16(d0, gmma_desc(a0 + (mb0 * 4 + kk) * 2048u, 128, 256), gmma_desc(b0 + kk * 4096u, 128, 256), 1);
        if constexpr (ACC == 128)
          for (int kk = 0; kk < 4; ++kk)
            wgmma_m64n128k16(d1, gmma_desc(a0 + (4 + kk) * 2048u, 128, 256), gmma_desc(b0 + kk * 4096u, 128, 256), 1);
        wgmma_commit();
        wgmma_wait0();
      }
      if (P.W > 0) spin_cycles(P.W);
      __syncwarp();
      if (lane == 0) {
        for (int r = 0; r < P.C; ++r) {
          if ((uint32_t)r == rank) mb_arrive(smem_addr(&empty[s]));
          else rmb_arrive_plain(mapa(smem_addr(&empty[s]), (uint32_t)r));
        }
      }
      if (P.KT > 0 && (it + 1) % P.KT == 0) {
        if (ct == 0 && !(P.EF & 1)) bulk_wait_read0();
        if (!(P.EF & 2)) named_sync(1, nct);
        float v = (float)acc;
        if constexpr (ACC > 0) v += d0[0] + d0[1];
        if constexpr (ACC == 128) v += d1[0];
        // conflict-free: consecutive threads write consecutive 16-byte words
        if (!(P.EF & 4))
          for (int b = ct * 16; b < P.E; b += nct * 16) {
            uint32_t a = smem_addr(ebuf + b);
            asm volatile("st.shared.v4.f32 [%0], {%1, %1, %1, %1};" ::"r"(a), "f"(v) : "memory");
          }
        if (!(P.EF & 8)) fence_proxy_async();
        if (!(P.EF & 2)) named_sync(1, nct);
        if (ct == 0 && !(P.EF & 16)) {
          const size_t t = (P.EF & 32) ? 0 : (size_t)ntile;
          bulk_s2g(dst + ((size_t)blockIdx.x * (ITERS / P.KT) + t) * (size_t)P.E, smem_addr(ebuf), (uint32_t)P.E);
          bulk_commit();
        }
        ++ntile;
      }
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    if (ct == 0 && P.KT > 0 && !(P.EF & 16)) bulk_wait0();
    if (rec) { out->c0 = c0; out->c1 = c1; out->g0 = (long long)g0; out->g1 = (long long)g1; out->sink = acc + (unsigned)d0[0] + (unsigned)d1[0]; }
  }
  if (P.C > 1) asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// -------------------------------------------------------------------------------------------- host
static double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double pctl(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[(size_t)(p * (v.size() - 1))];
}

struct LC { const char* family; int ctas, acc; LP p; };

// The configurations: every family the timing model is validated on.
static std::vector<LC> configs(int nsm) {
  std::vector<LC> v;
  auto l2nt = [&](int tile) { return std::max(2, std::min(8, (int)((24u << 20) / ((size_t)nsm * tile)))); };
  // consumers of one warp, one and two warpgroups with no busy work (read 0/1)
  for (int CW : {1, 4, 8})
    for (int S : {2, 4, 8})
      for (int kib : {4, 16, 64})
        for (int rd : {0, 1})
          if (S * kib <= 192) v.push_back({"consumers", 1, 0, {S, kib * 1024, 1, CW, 0, 0, 8, 0, 0, rd, 0, 0}});
  for (int CW : {1, 4, 8}) for (int W : {300, 1000, 3000}) v.push_back({"consumers", 1, 0, {4, 16384, 1, CW, 0, 0, 8, W, 0, 1, 0, 0}});
  for (int CW : {1, 4, 8}) v.push_back({"consumers", nsm, 0, {4, 16384, 1, CW, 0, 0, 8, 0, 0, 0, 0, 0}});
  // a producer alone (no consumer: it waits on its own copy S iterations back)
  for (int S : {2, 4, 8})
    for (int kib : {4, 16}) v.push_back({"producer_only", 1, 0, {S, kib * 1024, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0}});
  for (int S : {2, 4}) v.push_back({"producer_only", 1, 0, {S, 32768, 1, 0, 1, 1, 8, 0, 0, 0, 0, 0}});
  // waits: producer-bound (consumers woken, or retried past the try_wait time limit) and
  // consumer-bound (the consumer's waits find their phase complete, the producer's are woken)
  for (int S : {2, 4})
    for (int PG : {500, 2000, 6000, 9000, 16000}) v.push_back({"waits", 1, 0, {S, 4096, 1, 1, 0, 0, 8, 0, PG, 0, 0, 0}});
  for (int CW : {1, 4})
    for (int W : {1000, 4000, 12000}) v.push_back({"waits", 1, 0, {8, 4096, 1, CW, 0, 0, 8, W, 0, 0, 0, 0}});
  for (int PG : {1000, 4000}) v.push_back({"waits", 1, 0, {4, 4096, 1, 1, 0, 0, 8, PG, PG, 0, 0, 0}});
  // streaming distinct addresses from L2 and HBM: 1..132 CTAs, 2-8 stages, 4-64 KiB
  const int SK[][2] = {{2, 4}, {4, 4}, {8, 4}, {2, 16}, {4, 16}, {8, 16}, {2, 32}, {3, 32}, {4, 32}, {6, 32}, {2, 64}, {3, 64}};
  for (int srcm : {1, 2})
    for (int n : {1, 8, 16, 33, 66, 99, nsm})
      for (auto& sk : SK) v.push_back({"stream", n, 0, {sk[0], sk[1] * 1024, 1, 1, 0, srcm, l2nt(sk[1] * 1024), 0, 0, 0, 0, 0}});
  // GEMM mainloops: two tensor boxes (A 128x64, B 128x64 bf16: 32 KiB a stage), TMA only or wgmma
  for (int n : {1, nsm})
    for (int srcm : {1, 2})
      for (int S : {2, 3, 4, 6}) {
        v.push_back({"mainloop_tma", n, 0, {S, 32768, 1, 1, 1, srcm, 8, 0, 0, 0, 0, 0}});
        v.push_back({"mainloop_wgmma1", n, 128, {S, 32768, 1, 4, 1, srcm, 8, 0, 0, 0, 0, 0}});
        v.push_back({"mainloop_wgmma2", n, 64, {S, 32768, 1, 8, 1, srcm, 8, 0, 0, 0, 0, 0}});
      }
  // multicast pipelines in 2- and 4-CTA clusters
  for (int C : {2, 4})
    for (int n : {C, nsm - nsm % C})
      for (int srcm : {0, 2})
        for (auto& sk : {std::array<int, 2>{2, 16}, {4, 16}, {4, 32}, {2, 64}, {3, 64}}) {
          if (n == C && srcm == 2) continue;
          v.push_back({"multicast", n, 0, {sk[0], sk[1] * 1024, C, 1, 0, srcm, 8, 0, 0, 0, 0, 0}});
        }
  for (int C : {2, 4}) v.push_back({"multicast", C, 0, {4, 16384, C, 1, 0, 0, 8, 500, 0, 1, 0, 0}});
  // persistent tile loops with an epilogue store (32 KiB per tile of KT k-steps)
  for (int n : {1, nsm})
    for (int KT : {2, 4, 8, 16}) {
      v.push_back({"persistent_wgmma1", n, 128, {4, 32768, 1, 4, 1, 1, 8, 0, 0, 0, KT, 32768}});
      v.push_back({"persistent_wgmma2", n, 64, {4, 32768, 1, 8, 1, 1, 8, 0, 0, 0, KT, 32768}});
      v.push_back({"persistent_tma", n, 0, {4, 32768, 1, 4, 1, 1, 8, 0, 0, 0, KT, 32768}});
    }
  // epilogue parts (docs/HARDWARE.md "The persistent epilogue, piece by piece"): TMA only and one warpgroup, KT 2 and 4
  for (int n : {1, nsm})
    for (int KT : {2, 4})
      for (int ef : {0, 1, 2, 4, 8, 16, 32, 31}) {
        v.push_back({"epilogue_tma", n, 0, {4, 32768, 1, 4, 1, 1, 8, 0, 0, 0, KT, 32768, ef}});
        v.push_back({"epilogue_wgmma1", n, 128, {4, 32768, 1, 4, 1, 1, 8, 0, 0, 0, KT, 32768, ef}});
      }
  // multicast receive rate at full load (item 7): 2- and 4-CTA clusters, 32 and 64 KiB, S 2-4
  for (int C : {2, 4})
    for (int srcm : {0, 2})
      for (int S : {2, 3, 4})
        for (int kib : {32, 64})
          if (S * kib <= 192) v.push_back({"mcast_rate", nsm - nsm % C, 0, {S, kib * 1024, C, 1, 0, srcm, 8, 0, 0, 0, 0, 0}});
  return v;
}

int main(int argc, char** argv) {
  const std::string fam = argc > 1 ? argv[1] : "";  // only families starting with this
  // "plain": launch single-CTA-cluster configurations without the cluster attribute (<<<>>>-like)
  const bool plain = argc > 2 && std::string(argv[2]) == "plain";
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int nsm = prop.multiProcessorCount;
  const int maxSmem = 200 * 1024;
  const size_t big = (size_t)nsm * ITERS * 64 * 1024;
  uint8_t *src, *dst, *flush;
  CK(cudaMalloc(&src, big));
  CK(cudaMemset(src, 0x3c, big));
  CK(cudaMalloc(&dst, (size_t)nsm * ITERS * 32 * 1024));
  const size_t flushBytes = 256u << 20;
  CK(cudaMalloc(&flush, flushBytes));
  const uint64_t kc = (uint64_t)ITERS * 64;
  CUtensorMap tA = make_tmap_2d(src, kc, (uint64_t)nsm * 128, 64, 128);
  CUtensorMap tB = make_tmap_2d(src + big - kc * 128 * 2, kc, 128, 64, 128);
  LOut* d;
  CK(cudaMalloc(&d, sizeof(LOut) * nsm));
  std::vector<LOut> h(nsm);
  CK(cudaFuncSetAttribute(lpipe<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(lpipe<64>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(lpipe<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  printf("{\"probe\": \"hw/probes/lean.cu\", \"gpu\": \"%s\", \"sm_count\": %d, \"iters\": %d, \"warmup\": %d,\n"
         " \"note\": \"cycles_per_iter: median over CTAs of the first consumer thread's (clock64 at its last full-wait pass - at pass WARM) / (ITERS-1-WARM); "
         "producer_per_iter: the same for the producer's issues; cta_min/cta_max over CTAs; sm_clock_mhz from clock64 against globaltimer; median of 3 launches after a warm-up launch\",\n"
         " \"configs\": [",
         prop.name, nsm, ITERS, WARM);
  bool first = true;
  for (const LC& c : configs(nsm)) {
    if (std::string(c.family).rfind(fam, 0) != 0) continue;
    if (plain && c.p.C > 1) continue;
    const LP& P = c.p;
    int smemBytes = P.S * P.tile + (P.KT ? P.E : 0);
    if (c.ctas > 1) smemBytes = std::max(smemBytes, 120 * 1024);  // one CTA per SM
    const int CW0 = (c.acc > 0 || P.CW >= 4) ? 4 : 1;  // CW 0: the producer warp alone
    std::vector<double> per, pper, mhz, ctamin, ctamax;
    int timeouts = 0, distinct = 0;
    for (int rep = 0; rep < 4; ++rep) {
      if (P.src == 2) CK(cudaMemset(flush, rep, flushBytes));
      CK(cudaMemset(d, 0, sizeof(LOut) * nsm));
      cudaLaunchConfig_t lc = {};
      lc.gridDim = dim3(c.ctas);
      lc.blockDim = dim3(32 * (CW0 + P.CW));
      lc.dynamicSmemBytes = smemBytes;
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = P.C;
      at[0].val.clusterDim.y = 1;
      at[0].val.clusterDim.z = 1;
      lc.attrs = at;
      lc.numAttrs = plain ? 0 : 1;
      if (c.acc == 0) CK(cudaLaunchKernelEx(&lc, lpipe<0>, d, (const uint8_t*)src, dst, P, tA, tB));
      if (c.acc == 64) CK(cudaLaunchKernelEx(&lc, lpipe<64>, d, (const uint8_t*)src, dst, P, tA, tB));
      if (c.acc == 128) CK(cudaLaunchKernelEx(&lc, lpipe<128>, d, (const uint8_t*)src, dst, P, tA, tB));
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (rep == 0) continue;
      CK(cudaMemcpy(h.data(), d, sizeof(LOut) * c.ctas, cudaMemcpyDeviceToHost));
      std::vector<double> cp, pp, mz;
      std::vector<int> sms;
      for (int b = 0; b < c.ctas; ++b) {
        const LOut& o = h[b];
        timeouts += o.timeout;
        sms.push_back(o.smid);
        if (o.timeout) continue;
        cp.push_back((double)(o.c1 - o.c0) / (ITERS - 1 - WARM));
        pp.push_back((double)(o.p1 - o.p0) / (ITERS - 1 - WARM));
        if (o.g1 > o.g0) mz.push_back((double)(o.c1 - o.c0) / (double)(o.g1 - o.g0) * 1000.0);
      }
      per.push_back(median(cp));
      pper.push_back(median(pp));
      mhz.push_back(median(mz));
      ctamin.push_back(pctl(cp, 0));
      ctamax.push_back(pctl(cp, 1));
      std::sort(sms.begin(), sms.end());
      distinct = (int)(std::unique(sms.begin(), sms.end()) - sms.begin());
    }
    const char* srcName = P.src == 0 ? "l2_shared" : P.src == 1 ? "l2_distinct" : "hbm";
    printf("%s\n  {\"family\": \"%s\", \"ctas\": %d, \"stages\": %d, \"tile_bytes\": %d, \"cluster\": %d, \"consumer_warps\": %d, \"copy\": \"%s\", "
           "\"source\": \"%s\", \"launch\": \"%s\", \"src_tiles\": %d, \"work_cycles\": %d, \"producer_work_cycles\": %d, \"read\": %d, \"wgmma_per_stage\": %d, "
           "\"tile_k_steps\": %d, \"epilogue_bytes\": %d, \"epilogue_flags\": %d, \"timeouts\": %d, \"distinct_sms\": %d, \"cycles_per_iter\": %.1f, \"producer_per_iter\": %.1f, "
           "\"cta_min\": %.1f, \"cta_max\": %.1f, \"rep_min\": %.1f, \"rep_max\": %.1f, \"sm_clock_mhz\": %.1f}",
           first ? "" : ",", c.family, c.ctas, P.S, P.tile, P.C, P.CW, P.copy ? "tensor_ab" : P.C > 1 ? "bulk_multicast" : "bulk", srcName,
           plain ? "plain" : "cluster", P.src == 2 ? ITERS : P.nt, P.W, P.PG, P.read, c.acc == 128 ? 8 : c.acc == 64 ? 4 * (P.CW / 4) : 0, P.KT, P.KT ? P.E : 0, P.EF, timeouts,
           distinct, median(per), median(pper), median(ctamin), median(ctamax), pctl(per, 0), pctl(per, 1), median(mhz));
    first = false;
    fflush(stdout);
  }
  printf("\n]}\n");
  return 0;
}
