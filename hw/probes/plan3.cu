// mbsim timing probe: items 2-5 of docs/HARDWARE.md "Not yet measured" (item 1 is
// hw/run_plan3.sh running plan.cu three times). Prints
// one JSON object with three arrays. The kernel is plan2.cu's `epi` (which see) with:
//   CW     4 or 8 consumer warps also without wgmma (ACC 0), so that 8 warps can store;
//   MODE 3 the consumers wait and arrive but run no wgmma (warps that only follow the stages);
//   EF     1: the epilogue stores to one L2-resident buffer per CTA instead of a fresh HBM tile;
// and two more records: the producer lane's clock64 at issue WARM and its last issue
// (`producer_per_iter`), the producer lane's own work an iteration, from its wait on empty[s]
// passing to its copies issued (`producer_busy_per_iter`, clock64 to clock64), and the pass times of the first thread of each warpgroup for the
// k-steps WARM..WARM+63 (`wg_offset`: the median of (second warpgroup's pass - first's), in cycles,
// and `wg_offset_frac` that over cycles_per_iter: near 0 when the warpgroups run in step, near 0.5
// when they alternate).
// epi (items 4-5): the persistent TMA loop on 132 SMs at KT 2, epilogues of 16, 32 and 64 KiB to
//   fresh HBM tiles or to an L2-resident buffer; stores by 8 warps (no wgmma, and under two
//   warpgroups of wgmma), on one SM.
// wg (items 2-3): one and two warpgroups fed from distinct L2 and HBM (S 3, 4, 6), the producer's
//   loop recorded; MODE 3 (no wgmma) against MODE 0 (wgmma on the landed stage) separates what the
//   wgmma warps cost the producer from what following warps cost it.
// place: which SM each CTA of an n-CTA launch (n = 8, 16, 33, 66, 99, 132; one CTA per SM by its
//   shared memory) lands on, 3 launches each (plan.cu's distinct-L2 rows at 8-66 CTAs moved by up
//   to 76% between two H100 runs).
// Every wait is bounded (bounded.cuh). Medians over CTAs, then over 3 launches after a warm-up one.
//
// Build and run (from the repository root): bash hw/run_plan3.sh
#include <algorithm>
#include <string>
#include <vector>
#include "tmap.cuh"
#include "bounded.cuh"

constexpr int ITERS = 400, WARM = 80;

__device__ __forceinline__ void bulk_s2g(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void named_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ long long clk() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

static double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ------------------------------------------------------------------------------------ epi and wg
struct EP { int S, KT, E, SW, PW, PAUSE, src /*1 l2_distinct 2 hbm*/, nt, MODE, CW, EF; };
constexpr int NWG = 64;  // k-steps whose warpgroup pass times are kept
constexpr int MAXT = ITERS / 2;
struct EOut {
  long long c0, c1, p0, p1, busy;
  long long w0[NWG], w1[NWG];
  int timeout, ntile;
  unsigned sink;
  int tot[MAXT], sto[MAXT], wt[MAXT];
};

template <int ACC>  // 0: no wgmma; 64: two warpgroups of 4 wgmma a stage; 128: one warpgroup of 8
__global__ void __launch_bounds__(384, 1)
epi(EOut* outs, uint8_t* dst, EP P, const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[8], empty[8], paused, resume;
  EOut* out = outs + blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int CW = ACC == 64 ? 8 : ACC == 128 ? 4 : P.CW, CW0 = 4;
  const int S = P.S, tile = 32768;
  uint8_t* fixed = smem + (size_t)S * tile;  // MODE 1's operands; the epilogue buffer otherwise (up to 64 KiB)
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) { mb_init(smem_addr(&full[s]), 1); mb_init(smem_addr(&empty[s]), (uint32_t)CW); }
    mb_init(smem_addr(&paused), 1);
    mb_init(smem_addr(&resume), 1);
    out->timeout = 0;
  }
  for (int i = threadIdx.x * 16; i < S * tile + max(32768, P.E); i += blockDim.x * 16)
    asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(smem_addr(smem + i)), "r"(0u) : "memory");
  __syncthreads();
  if (warp == P.PW) {
    if (lane == 0) {
      int s = 0;
      uint32_t ph = 0;
      int t = 0;  // the epilogue the next pause belongs to
      long long p0 = 0, busy = 0;
      for (int it = 0; it < ITERS; ++it) {
        if (it >= S && !wait_try(smem_addr(&empty[s]), ph ^ 1u)) { out->timeout = 1; break; }
        const long long b0 = clk();  // the wait has passed: the producer's own work starts
        if (it == WARM) p0 = b0;
        if (P.PAUSE && P.KT > 0 && it == (t + 1) * P.KT + S - 1) {
          for (int i = it - S + 1; i < it; ++i)  // the copies in flight land
            if (!wait_try(smem_addr(&full[i % S]), (uint32_t)((i / S) & 1))) { out->timeout = 1; break; }
          mb_arrive(smem_addr(&paused));
          if (!wait_try(smem_addr(&resume), (uint32_t)(t & 1))) { out->timeout = 1; break; }
          ++t;
        }
        const uint32_t st = smem_addr(smem + (size_t)s * tile);
        if (P.MODE == 2) {
          mb_arrive(smem_addr(&full[s]));
        } else {
          mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)tile);
          const int kx = (int)((P.src == 2 ? it : it % P.nt) * 64);
          tensor_g2s(st, &ta, kx, (int)(blockIdx.x * 128), smem_addr(&full[s]));
          tensor_g2s(st + tile / 2, &tb, kx, 0, smem_addr(&full[s]));
        }
        if (++s == S) { s = 0; ph ^= 1u; }
        if (it >= WARM && it < ITERS - 1) busy += clk() - b0;
      }
      out->p0 = p0;
      out->p1 = clk();
      out->busy = busy;
    }
  } else if (warp >= CW0 && warp < CW0 + CW) {
    unsigned acc = 0;
    float d0[ACC ? 64 : 1], d1[ACC == 128 ? 64 : 1];
    for (int i = 0; i < (ACC ? 64 : 1); ++i) d0[i] = 0.f;
    for (int i = 0; i < (ACC == 128 ? 64 : 1); ++i) d1[i] = 0.f;
    const int ct = threadIdx.x - CW0 * 32, nct = CW * 32, nst = P.SW * 32;
    const bool rec = ct == 0;
    const int wg = (warp - CW0) / 4;
    uint8_t* ebuf = fixed;
    int s = 0, ntile = 0, rt = 0;
    uint32_t ph = 0;
    long long c0 = 0, c1 = 0;
    for (int it = 0; it < ITERS; ++it) {
      bool ok = wait_try(smem_addr(&full[s]), ph);
      if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) out->timeout = 1; break; }
      if (lane == 0 && (warp - CW0) % 4 == 0 && it >= WARM && it < WARM + NWG) {  // first warp of each warpgroup
        const long long tp = clk();
        if (warp == CW0) out->w0[it - WARM] = tp;
        else if (warp == CW0 + 4) out->w1[it - WARM] = tp;
      }
      if (rec && it == WARM) c0 = clk();
      if (rec && it == ITERS - 1) c1 = clk();
      uint8_t* st = smem + (size_t)s * tile;
      if constexpr (ACC > 0) {
        if (P.MODE != 3) {
        wgmma_fence();
        const uint32_t a0 = smem_addr(P.MODE == 1 ? fixed : st), b0 = a0 + 16384u;
        const int mb0 = ACC == 128 ? 0 : wg;
        for (int kk = 0; kk < 4; ++kk)
          wgmma_m64n128k16(d0, gmma_desc(a0 + (mb0 * 4 + kk) * 2048u, 128, 256), gmma_desc(b0 + kk * 4096u, 128, 256), 1);
        if constexpr (ACC == 128)
          for (int kk = 0; kk < 4; ++kk)
            wgmma_m64n128k16(d1, gmma_desc(a0 + (4 + kk) * 2048u, 128, 256), gmma_desc(b0 + kk * 4096u, 128, 256), 1);
        wgmma_commit();
        wgmma_wait0();
        }
      }
      __syncwarp();
      if (lane == 0) mb_arrive(smem_addr(&empty[s]));
      if (P.KT > 0 && (it + 1) % P.KT == 0) {
        const long long e0 = rec ? clk() : 0;
        if (ct == 0) bulk_wait_read0();
        if (rec && P.PAUSE && (it + 1) + S - 1 < ITERS) {
          if (!wait_try(smem_addr(&paused), (uint32_t)(ntile & 1))) out->timeout = 1;
        }
        named_sync(1, nct);
        const long long e1 = rec ? clk() : 0;
        float v = (float)acc;
        if constexpr (ACC > 0) v += d0[0] + d0[1];
        if constexpr (ACC == 128) v += d1[0];
        if (ct < nst)
          for (int b = ct * 16; b < P.E; b += nst * 16) {
            uint32_t a = smem_addr(ebuf + b);
            asm volatile("st.shared.v4.f32 [%0], {%1, %1, %1, %1};" ::"r"(a), "f"(v) : "memory");
          }
        fence_proxy_async();
        named_sync(1, nct);
        const long long e2 = rec ? clk() : 0;
        if (rec && P.PAUSE && (it + 1) + S - 1 < ITERS) mb_arrive(smem_addr(&resume));
        if (ct == 0 && P.E > 0) {
          const size_t t = P.EF & 1 ? 0 : (size_t)ntile;
          bulk_s2g(dst + ((size_t)blockIdx.x * (ITERS / P.KT) + t) * (size_t)P.E, smem_addr(ebuf), (uint32_t)P.E);
          bulk_commit();
        }
        const long long e3 = rec ? clk() : 0;
        if (rec && it >= WARM && rt < MAXT) {
          out->tot[rt] = (int)(e3 - e0);
          out->sto[rt] = (int)(e2 - e1);
          out->wt[rt] = (int)(e1 - e0);
          ++rt;
        }
        ++ntile;
      }
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    if (ct == 0 && P.KT > 0 && P.E > 0) bulk_wait0();
    if (rec) { out->c0 = c0; out->c1 = c1; out->ntile = rt; out->sink = acc + (unsigned)d0[0] + (unsigned)d1[0]; }
  }
}

// ------------------------------------------------------------------------------------------ place
__global__ void place(int* smids) {
  extern __shared__ uint8_t smem_place[];
  if (threadIdx.x == 0) {
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    smids[blockIdx.x] = (int)smid;
    smem_place[0] = 0;
  }
}

// ------------------------------------------------------------------------------------------- host
int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";  // "epi", "wg", "place" or all
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int nsm = prop.multiProcessorCount;
  const size_t big = (size_t)nsm * ITERS * 64 * 1024;
  uint8_t *src, *dst, *flush;
  CK(cudaMalloc(&src, big));
  CK(cudaMemset(src, 0x3c, big));
  CK(cudaMalloc(&dst, (size_t)nsm * ITERS * 32 * 1024));  // KT 2 x 64 KiB tiles: ITERS / 2 x 64 KiB a CTA
  const size_t flushBytes = 256u << 20;
  CK(cudaMalloc(&flush, flushBytes));
  const uint64_t kc = (uint64_t)ITERS * 64;
  CUtensorMap tA = make_tmap_2d(src, kc, (uint64_t)nsm * 128, 64, 128);
  CUtensorMap tB = make_tmap_2d(src + big - kc * 128 * 2, kc, 128, 64, 128);
  const int maxSmem = 227 * 1024 - 2048;  // the opt-in limit less the kernels' static shared memory
  CK(cudaFuncSetAttribute(epi<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(epi<64>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(epi<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(place, cudaFuncAttributeMaxDynamicSharedMemorySize, 120 * 1024));
  EOut* d;
  CK(cudaMalloc(&d, sizeof(EOut) * nsm));
  std::vector<EOut> h(nsm);
  printf("{\"probe\": \"hw/probes/plan3.cu\", \"gpu\": \"%s\", \"sm_count\": %d, \"iters\": %d, \"warmup\": %d,\n"
         " \"note\": \"cycles_per_iter as lean.cu (consumer thread 0, k-step WARM to the last), producer_per_iter the producer lane's issues likewise, epi_* medians over tiles "
         "from WARM of consumer thread 0's clock64 differences, wg_offset the median over k-steps WARM..WARM+63 of (second warpgroup's pass - first's); every figure the median "
         "over CTAs, then over 3 launches after a warm-up\",\n \"epi\": [",
         prop.name, nsm, ITERS, WARM);
  struct EC { const char* family; int ctas, acc; EP p; };
  std::vector<EC> ecs;
  //                         S  KT  E      SW PW PAUSE src nt MODE CW EF
  if (only.empty() || only == "epi") {
    for (int kib : {16, 32, 64})
      for (int ef : {0, 1}) {
        ecs.push_back({"epi_tma", nsm, 0, {4, 2, kib * 1024, 4, 0, 0, 1, 8, 0, 4, ef}});
        ecs.push_back({"epi_tma", 1, 0, {4, 2, kib * 1024, 4, 0, 0, 1, 8, 0, 4, ef}});
      }
    for (int KT : {2, 4}) {
      ecs.push_back({"epi_tma", 1, 0, {4, KT, 32768, 8, 0, 0, 1, 8, 0, 8, 0}});  // 8 storing warps
      ecs.push_back({"epi_tma", 1, 0, {4, KT, 32768, 8, 0, 1, 1, 8, 0, 8, 0}});
      ecs.push_back({"epi_tma", 1, 0, {4, KT, 32768, 4, 0, 1, 1, 8, 0, 8, 0}});
      ecs.push_back({"epi_wgmma2", 1, 64, {4, KT, 32768, 8, 0, 0, 1, 8, 0, 8, 0}});
      ecs.push_back({"epi_wgmma2", 1, 64, {4, KT, 32768, 8, 0, 1, 1, 8, 0, 8, 0}});
      ecs.push_back({"epi_wgmma2", 1, 64, {4, KT, 32768, 4, 0, 1, 1, 8, 0, 8, 0}});
      ecs.push_back({"epi_wgmma2", 1, 64, {4, KT, 0, 8, 0, 0, 1, 8, 0, 8, 0}});
      ecs.push_back({"epi_wgmma2", nsm, 64, {4, KT, 32768, 8, 0, 0, 1, 8, 0, 8, 0}});
    }
  }
  if (only.empty() || only == "wg")
    for (int acc : {64, 128})
      for (int n : {1, nsm})
        for (int srcm : {1, 2})
          for (int S : {3, 4, 6})
            for (int mode : {0, 1, 2, 3})
              for (int pw : {0, 1}) {
                if (mode == 2 && srcm == 2) continue;  // no copy: the source does not matter
                if (pw == 1 && (mode == 1 || mode == 2 || n > 1)) continue;
                ecs.push_back({acc == 64 ? "wg_wgmma2" : "wg_wgmma1", n, acc, {S, 0, 0, 4, pw, 0, srcm, 8, mode, acc == 64 ? 8 : 4, 0}});
              }
  bool first = true;
  const char* arr = "epi";
  for (const EC& c : ecs) {
    const EP& P = c.p;
    if (std::string(c.family).rfind("wg", 0) == 0 && std::string(arr) == "epi") {
      printf("\n], \"wg\": [");
      arr = "wg";
      first = true;
    }
    int smemBytes = P.S * 32768 + std::max(32768, P.E);
    if (c.ctas > 1) smemBytes = std::max(smemBytes, 120 * 1024);
    const int CW = c.acc == 64 ? 8 : c.acc == 128 ? 4 : P.CW;
    std::vector<double> per, pper, pbusy, tot, sto, wt, off, offf;
    int timeouts = 0;
    for (int rep = 0; rep < 4; ++rep) {
      if (P.src == 2) CK(cudaMemset(flush, rep, flushBytes));
      CK(cudaMemset(d, 0, sizeof(EOut) * nsm));
      const int threads = 32 * (4 + CW);
      if (c.acc == 0) epi<0><<<c.ctas, threads, smemBytes>>>(d, dst, P, tA, tB);
      if (c.acc == 64) epi<64><<<c.ctas, threads, smemBytes>>>(d, dst, P, tA, tB);
      if (c.acc == 128) epi<128><<<c.ctas, threads, smemBytes>>>(d, dst, P, tA, tB);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (rep == 0) continue;
      CK(cudaMemcpy(h.data(), d, sizeof(EOut) * c.ctas, cudaMemcpyDeviceToHost));
      std::vector<double> cp, pp, pb, tt, ss, ww, oo, of;
      for (int b = 0; b < c.ctas; ++b) {
        const EOut& o = h[b];
        timeouts += o.timeout;
        if (o.timeout) continue;
        const double cpi = (double)(o.c1 - o.c0) / (ITERS - 1 - WARM);
        cp.push_back(cpi);
        pp.push_back((double)(o.p1 - o.p0) / (ITERS - 1 - WARM));
        pb.push_back((double)o.busy / (ITERS - 1 - WARM));
        std::vector<double> a, bb, cc, dd;
        for (int i = 0; i < o.ntile && i < MAXT; ++i) { a.push_back(o.tot[i]); bb.push_back(o.sto[i]); cc.push_back(o.wt[i]); }
        if (!a.empty()) { tt.push_back(median(a)); ss.push_back(median(bb)); ww.push_back(median(cc)); }
        if (CW >= 8 && c.acc > 0) {
          for (int i = 0; i < NWG; ++i) dd.push_back((double)(o.w1[i] - o.w0[i]));
          oo.push_back(median(dd));
          of.push_back(median(dd) / cpi);
        }
      }
      per.push_back(median(cp));
      pper.push_back(median(pp));
      pbusy.push_back(median(pb));
      tot.push_back(median(tt));
      sto.push_back(median(ss));
      wt.push_back(median(ww));
      off.push_back(median(oo));
      offf.push_back(median(of));
    }
    printf("%s\n  {\"family\": \"%s\", \"ctas\": %d, \"stages\": %d, \"tile_bytes\": 32768, \"copy\": \"tensor_ab\", \"source\": \"%s\", \"tile_k_steps\": %d, "
           "\"epilogue_bytes\": %d, \"epilogue_target\": \"%s\", \"consumer_warps\": %d, \"store_warps\": %d, \"producer_warp\": %d, \"pause\": %d, \"operands\": \"%s\", "
           "\"timeouts\": %d, \"cycles_per_iter\": %.1f, \"producer_per_iter\": %.1f, \"producer_busy_per_iter\": %.1f, \"epi_total\": %.1f, \"epi_stores\": %.1f, \"epi_wait\": %.1f, "
           "\"wg_offset\": %.1f, \"wg_offset_frac\": %.3f, \"rep_min\": %.1f, \"rep_max\": %.1f}",
           first ? "" : ",", c.family, c.ctas, P.S, P.src == 2 ? "hbm" : "l2_distinct", P.KT, P.E, P.EF & 1 ? "l2_buffer" : "hbm_fresh", CW, P.SW, P.PW,
           P.PAUSE, P.MODE == 0 ? "landed" : P.MODE == 1 ? "fixed" : P.MODE == 2 ? "no_copy" : "no_wgmma", timeouts, median(per), median(pper), median(pbusy), median(tot),
           median(sto), median(wt), median(off), median(offf), *std::min_element(per.begin(), per.end()), *std::max_element(per.begin(), per.end()));
    first = false;
    fflush(stdout);
  }
  if (std::string(arr) == "epi") printf("\n], \"wg\": [");
  printf("\n], \"place\": [");
  first = true;
  if (only.empty() || only == "place") {
    int* ds;
    CK(cudaMalloc(&ds, sizeof(int) * nsm));
    std::vector<int> hs(nsm);
    for (int n : {8, 16, 33, 66, 99, nsm})
      for (int rep = 0; rep < 3; ++rep) {
        place<<<n, 32, 120 * 1024>>>(ds);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hs.data(), ds, sizeof(int) * n, cudaMemcpyDeviceToHost));
        printf("%s\n  {\"ctas\": %d, \"launch\": %d, \"smids\": [", first ? "" : ",", n, rep);
        for (int b = 0; b < n; ++b) printf("%s%d", b ? ", " : "", hs[b]);
        printf("]}");
        first = false;
      }
  }
  printf("\n]}\n");
  return 0;
}
