// mbsim timing probe of docs/HARDWARE.md "One-SM mechanisms (`plan.cu`, `plan2.cu`, H100)". Prints
// one JSON object with three arrays.
//
// epi (item 2, the persistent epilogue on one SM): the persistent loop of lean.cu (`persistent_tma`
//   and `persistent_wgmma1`: two tensor boxes a stage, 32 KiB, S = 4, distinct L2 tiles, 4 consumer
//   warps from warp 4, a conflict-free 32 KiB epilogue every KT k-steps: wait for the previous
//   store's read, bar.sync, st.shared.v4, fence.proxy.async, bar.sync, one bulk store to a fresh
//   global tile) with three changes switched by parameters:
//     SW    the stores done by the first SW consumer warps only (1, 2 or 4: the same 32 KiB);
//     PW    the producer lane in warp PW (0 as lean.cu; 1: a warp on another warp scheduler than
//           consumer warp 4, the one storing warp of SW = 1);
//     PAUSE the TMA's writes paused during the stores: before issuing the first copy that the
//           epilogue's release allows (k-step (t+1) KT + S - 1), the producer waits until its S - 1
//           copies in flight have landed, arrives on an mbarrier `paused` and waits on `resume`;
//           consumer thread 0 waits on `paused` before the first bar.sync and arrives on `resume`
//           after the second.
//   Besides cycles_per_iter (lean.cu's: consumer thread 0's clock64 from its pass of k-step WARM to
//   the last pass), consumer thread 0 reads clock64 at the epilogue's start (after its arrive on
//   empty), after the first bar.sync, after the second and after the store's commit: per tile from
//   k-step WARM on, medians over tiles: `epi_total` (start to commit), `epi_stores` (the two
//   bar.syncs apart: every storer's st.shared and fence), `epi_wait` (start to after the first
//   bar.sync; with PAUSE the wait for the producer's copies to land).
// wg (item 3, wgmma fed by TMA): lean.cu's `mainloop_wgmma1/2` (ACC 128: one warpgroup, 8 wgmma
//   m64n128k16 a stage; ACC 64: two warpgroups, 4 each), with the operands read from
//     MODE 0 the stage just landed (lean.cu),
//     MODE 1 a fixed 32 KiB buffer after the stages that no copy writes (the copies still land
//            into the stages and the consumers still wait for them),
//     MODE 2 the stage, with no copy at all: the producer's plain arrive completes full[s]
//            (the tensor core's and the loop's own rate, no TMA writes into shared memory).
// issue (item 4, a copy's cost inside the producer's issue): plan.cu's chain producer (one lane,
//   waits on its own copy S back, arrive.expect_tx, one bulk copy) with clock64 read before the
//   arrive (t0), after it (t1), after the copy instruction (t2) and, with PROBE, after an
//   mbarrier.test_wait on the barrier just armed whose result is stored to shared memory (t3; PROBE 2
//   also stores the arrive's state before t1, so that t1 waits for the arrive's result). Per iteration from WU on, medians:
//   `arrive` t1 - t0, `copy` t2 - t1, `probe` t3 - t2, `rest` t0(next) - t2 (or - t3), `loop`
//   t0(next) - t0; `clock` is two back-to-back clock64 reads. MODE 1: no copy (the arrive carries
//   no tx): the same loop without the copy instruction.
// Every wait is bounded (bounded.cuh). Medians over CTAs, then over 3 launches after a warm-up one.
//
// Build and run (from the repository root): bash hw/run_plan2.sh
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
struct EP { int S, KT, E, SW, PW, PAUSE, src /*1 l2_distinct 2 hbm*/, nt, MODE; };
constexpr int MAXT = ITERS / 2;
struct EOut {
  long long c0, c1;
  int timeout, ntile;
  unsigned sink;
  int tot[MAXT], sto[MAXT], wt[MAXT];
};

template <int ACC>  // 0: no wgmma; 64: two warpgroups of 4 wgmma a stage; 128: one warpgroup of 8
__global__ void __launch_bounds__(ACC == 64 ? 384 : 256, 1)
epi(EOut* outs, uint8_t* dst, EP P, const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[8], empty[8], paused, resume;
  EOut* out = outs + blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int CW = ACC == 64 ? 8 : 4, CW0 = 4;
  const int S = P.S, tile = 32768;
  uint8_t* fixed = smem + (size_t)S * tile;  // MODE 1's operands; the epilogue buffer otherwise
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) { mb_init(smem_addr(&full[s]), 1); mb_init(smem_addr(&empty[s]), (uint32_t)CW); }
    mb_init(smem_addr(&paused), 1);
    mb_init(smem_addr(&resume), 1);
    out->timeout = 0;
  }
  for (int i = threadIdx.x * 16; i < S * tile + 32768; i += blockDim.x * 16)
    asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(smem_addr(smem + i)), "r"(0u) : "memory");
  __syncthreads();
  if (warp == P.PW) {
    if (lane == 0) {
      int s = 0;
      uint32_t ph = 0;
      int t = 0;  // the epilogue the next pause belongs to
      for (int it = 0; it < ITERS; ++it) {
        if (it >= S && !wait_try(smem_addr(&empty[s]), ph ^ 1u)) { out->timeout = 1; break; }
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
      }
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
      if (rec && it == WARM) c0 = clk();
      if (rec && it == ITERS - 1) c1 = clk();
      uint8_t* st = smem + (size_t)s * tile;
      if constexpr (ACC > 0) {
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
          bulk_s2g(dst + ((size_t)blockIdx.x * (ITERS / P.KT) + ntile) * (size_t)P.E, smem_addr(ebuf), (uint32_t)P.E);
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

// ------------------------------------------------------------------------------------------ issue
constexpr int N = 160, WU = 32;
struct IP { int S, tile, hbm, MODE, PROBE; };
struct IOut { long long t0[N], t1[N], t2[N], t3[N]; long long clk; int timeout; };

__global__ void __launch_bounds__(32, 1) issue(IOut* outs, const uint8_t* src, IP P) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[8], sink;
  __shared__ long long a0[N], a1[N], a2[N], a3[N];
  IOut* out = outs + blockIdx.x;
  if (threadIdx.x != 0) return;
  for (int s = 0; s < P.S; ++s) mb_init(smem_addr(&full[s]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  out->timeout = 0;
  {
    const long long x0 = clk(), x1 = clk(), x2 = clk();
    out->clk = (x2 - x0) / 2;
  }
  const size_t off = P.hbm ? (size_t)blockIdx.x * N : 0;
  int s = 0;
  uint32_t ph = 0;
  for (int it = 0; it < N; ++it) {
    if (it >= P.S && !wait_try(smem_addr(&full[s]), ph ^ 1u)) { out->timeout = 1; break; }
    const size_t n = off + (P.hbm ? (size_t)it : (size_t)(it & 7));
    const uint32_t bar = smem_addr(&full[s]);
    a0[it] = clk();
    const uint64_t tok = P.MODE == 1 ? mb_arrive(bar) : mb_arrive_expect_tx(bar, (uint32_t)P.tile);
    if (P.PROBE == 2) st_shared_u64(smem_addr(&sink), tok);  // the clock read waits for the arrive's state
    a1[it] = clk();
    if (P.MODE != 1) bulk_g2s(smem_addr(smem + (size_t)s * P.tile), src + n * (size_t)P.tile, (uint32_t)P.tile, bar);
    a2[it] = clk();
    if (P.PROBE) {  // a test_wait on the barrier just armed; storing its result makes the clock read wait for it
      st_shared_u64(smem_addr(&sink), (uint64_t)mb_test_parity(bar, ph));
      a3[it] = clk();
    } else {
      a3[it] = a2[it];
    }
    if (++s == P.S) { s = 0; ph ^= 1u; }
  }
  for (int j = N - P.S; j < N && !out->timeout; ++j) {
    if (!wait_try(smem_addr(&full[s]), ph ^ 1u)) { out->timeout = 1; break; }
    if (++s == P.S) { s = 0; ph ^= 1u; }
  }
  for (int i = 0; i < N; ++i) { out->t0[i] = a0[i]; out->t1[i] = a1[i]; out->t2[i] = a2[i]; out->t3[i] = a3[i]; }
}

// ------------------------------------------------------------------------------------------- host
int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";  // "epi", "wg", "issue" or all
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int nsm = prop.multiProcessorCount;
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
  const int maxSmem = 227 * 1024 - 1024;  // the opt-in limit less the kernels' static shared memory
  CK(cudaFuncSetAttribute(epi<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(epi<64>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(epi<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
  CK(cudaFuncSetAttribute(issue, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  EOut* d;
  CK(cudaMalloc(&d, sizeof(EOut) * nsm));
  std::vector<EOut> h(nsm);
  printf("{\"probe\": \"hw/probes/plan2.cu\", \"gpu\": \"%s\", \"sm_count\": %d, \"iters\": %d, \"warmup\": %d,\n"
         " \"note\": \"epi/wg: cycles_per_iter as lean.cu (consumer thread 0, k-step WARM to the last), epi_* medians over tiles from WARM of consumer thread 0's clock64 "
         "differences; issue: per-iteration clock64 differences (median over iterations WU..N-2); every figure the median over CTAs, then over 3 launches after a warm-up\",\n"
         " \"epi\": [",
         prop.name, nsm, ITERS, WARM);
  struct EC { const char* family; int ctas, acc; EP p; };
  std::vector<EC> ecs;
  if (only.empty() || only == "epi") {
    for (int acc : {0, 128})
      for (int KT : {2, 4}) {
        const char* fam = acc ? "epi_wgmma1" : "epi_tma";
        ecs.push_back({fam, 1, acc, {4, KT, 32768, 4, 0, 0, 1, 8, 0}});     // lean.cu's loop
        ecs.push_back({fam, 1, acc, {4, KT, 32768, 2, 0, 0, 1, 8, 0}});
        ecs.push_back({fam, 1, acc, {4, KT, 32768, 1, 0, 0, 1, 8, 0}});
        ecs.push_back({fam, 1, acc, {4, KT, 32768, 1, 1, 0, 1, 8, 0}});     // producer on another scheduler
        ecs.push_back({fam, 1, acc, {4, KT, 32768, 4, 1, 0, 1, 8, 0}});
        ecs.push_back({fam, 1, acc, {4, KT, 32768, 4, 0, 1, 1, 8, 0}});     // TMA paused during the stores
        ecs.push_back({fam, 1, acc, {4, KT, 32768, 1, 0, 1, 1, 8, 0}});
        ecs.push_back({fam, 1, acc, {4, KT, 0, 4, 0, 0, 1, 8, 0}});         // the epilogue without stores (E 0)
        ecs.push_back({fam, nsm, acc, {4, KT, 32768, 4, 0, 0, 1, 8, 0}});
        ecs.push_back({fam, nsm, acc, {4, KT, 32768, 4, 0, 1, 1, 8, 0}});
      }
    for (int acc : {0, 128}) ecs.push_back({acc ? "epi_wgmma1" : "epi_tma", 1, acc, {4, 0, 0, 4, 0, 0, 1, 8, 0}});  // no epilogue
  }
  if (only.empty() || only == "wg")
    for (int acc : {64, 128})
      for (int n : {1, nsm})
        for (int srcm : {1, 2})
          for (int S : {4, 6})
            for (int mode : {0, 1, 2}) {
              if (mode == 2 && srcm == 2) continue;  // no copy: the source does not matter
              ecs.push_back({acc == 64 ? "wg_wgmma2" : "wg_wgmma1", n, acc, {S, 0, 0, 4, 0, 0, srcm, 8, mode}});
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
    int smemBytes = P.S * 32768 + 32768;
    if (c.ctas > 1) smemBytes = std::max(smemBytes, 120 * 1024);
    std::vector<double> per, tot, sto, wt;
    int timeouts = 0;
    for (int rep = 0; rep < 4; ++rep) {
      if (P.src == 2) CK(cudaMemset(flush, rep, flushBytes));
      CK(cudaMemset(d, 0, sizeof(EOut) * nsm));
      const int threads = 32 * (4 + (c.acc == 64 ? 8 : 4));
      if (c.acc == 0) epi<0><<<c.ctas, threads, smemBytes>>>(d, dst, P, tA, tB);
      if (c.acc == 64) epi<64><<<c.ctas, threads, smemBytes>>>(d, dst, P, tA, tB);
      if (c.acc == 128) epi<128><<<c.ctas, threads, smemBytes>>>(d, dst, P, tA, tB);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (rep == 0) continue;
      CK(cudaMemcpy(h.data(), d, sizeof(EOut) * c.ctas, cudaMemcpyDeviceToHost));
      std::vector<double> cp, tt, ss, ww;
      for (int b = 0; b < c.ctas; ++b) {
        const EOut& o = h[b];
        timeouts += o.timeout;
        if (o.timeout) continue;
        cp.push_back((double)(o.c1 - o.c0) / (ITERS - 1 - WARM));
        std::vector<double> a, bb, cc;
        for (int i = 0; i < o.ntile && i < MAXT; ++i) { a.push_back(o.tot[i]); bb.push_back(o.sto[i]); cc.push_back(o.wt[i]); }
        if (!a.empty()) { tt.push_back(median(a)); ss.push_back(median(bb)); ww.push_back(median(cc)); }
      }
      per.push_back(median(cp));
      tot.push_back(median(tt));
      sto.push_back(median(ss));
      wt.push_back(median(ww));
    }
    printf("%s\n  {\"family\": \"%s\", \"ctas\": %d, \"stages\": %d, \"tile_bytes\": 32768, \"copy\": \"tensor_ab\", \"source\": \"%s\", \"tile_k_steps\": %d, "
           "\"epilogue_bytes\": %d, \"store_warps\": %d, \"producer_warp\": %d, \"pause\": %d, \"operands\": \"%s\", \"timeouts\": %d, \"cycles_per_iter\": %.1f, "
           "\"epi_total\": %.1f, \"epi_stores\": %.1f, \"epi_wait\": %.1f, \"rep_min\": %.1f, \"rep_max\": %.1f}",
           first ? "" : ",", c.family, c.ctas, P.S, P.src == 2 ? "hbm" : "l2_distinct", P.KT, P.E, P.SW, P.PW, P.PAUSE,
           P.MODE == 0 ? "landed" : P.MODE == 1 ? "fixed" : "no_copy", timeouts, median(per), median(tot), median(sto), median(wt),
           *std::min_element(per.begin(), per.end()), *std::max_element(per.begin(), per.end()));
    first = false;
    fflush(stdout);
  }
  if (std::string(arr) == "epi") printf("\n], \"wg\": [");
  printf("\n], \"issue\": [");
  first = true;
  if (only.empty() || only == "issue") {
    IOut* di;
    CK(cudaMalloc(&di, sizeof(IOut) * nsm));
    std::vector<IOut> hi(nsm);
    struct IC { int ctas; IP p; };
    std::vector<IC> ics;
    for (int hbm : {0, 1})
      for (int S : {1, 4})
        for (int kib : {4, 16, 64})
          for (int probe : {0, 1, 2})
            if (S * kib <= 192) ics.push_back({1, {S, kib * 1024, hbm, 0, probe}});  // the 200 KiB set above
    for (int S : {1, 4}) ics.push_back({1, {S, 16384, 0, 1, 0}});
    for (int hbm : {0, 1}) ics.push_back({nsm, {4, 16384, hbm, 0, 0}});
    for (const IC& c : ics) {
      const IP& P = c.p;
      std::vector<double> va, vc, vp, vr, vl, vk;
      int to = 0;
      for (int rep = 0; rep < 4; ++rep) {
        if (P.hbm) CK(cudaMemset(flush, rep, flushBytes));
        CK(cudaMemset(di, 0, sizeof(IOut) * c.ctas));
        issue<<<c.ctas, 32, std::max(P.S * P.tile, 120 * 1024)>>>(di, src, P);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (!rep) continue;
        CK(cudaMemcpy(hi.data(), di, sizeof(IOut) * c.ctas, cudaMemcpyDeviceToHost));
        std::vector<double> ca, cc, cpb, cr, cl, ck;
        for (int b = 0; b < c.ctas; ++b) {
          const IOut& o = hi[b];
          to += o.timeout;
          if (o.timeout) continue;
          std::vector<double> a, cpy, pb, r, l;
          for (int j = WU; j < N - 1; ++j) {
            a.push_back((double)(o.t1[j] - o.t0[j]));
            cpy.push_back((double)(o.t2[j] - o.t1[j]));
            pb.push_back((double)(o.t3[j] - o.t2[j]));
            r.push_back((double)(o.t0[j + 1] - o.t3[j]));
            l.push_back((double)(o.t0[j + 1] - o.t0[j]));
          }
          ca.push_back(median(a)); cc.push_back(median(cpy)); cpb.push_back(median(pb)); cr.push_back(median(r)); cl.push_back(median(l));
          ck.push_back((double)o.clk);
        }
        va.push_back(median(ca)); vc.push_back(median(cc)); vp.push_back(median(cpb)); vr.push_back(median(cr)); vl.push_back(median(cl));
        vk.push_back(median(ck));
      }
      printf("%s\n  {\"ctas\": %d, \"stages\": %d, \"tile_bytes\": %d, \"source\": \"%s\", \"copy\": %d, \"probe\": %d, \"timeouts\": %d, "
             "\"arrive\": %.1f, \"copy_cycles\": %.1f, \"probe_cycles\": %.1f, \"rest\": %.1f, \"loop\": %.1f, \"clock\": %.1f}",
             first ? "" : ",", c.ctas, P.S, P.tile, P.hbm ? "hbm" : "l2_shared", P.MODE != 1, P.PROBE, to, median(va), median(vc), median(vp),
             median(vr), median(vl), median(vk));
      first = false;
      fflush(stdout);
    }
  }
  printf("\n]}\n");
  return 0;
}
