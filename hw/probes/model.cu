// mbsim timing probe for the mechanistic model (docs/HARDWARE.md "Model probes"). Prints one JSON
// object with three sections:
//
// oploop: one CTA, one warp (lanes 1 or 32 active); a loop of 256 timed iterations (16 warm-up)
//   whose body is one mode (see OPMODES below): passing try_wait/test_wait, arrive, arrive +
//   passing wait, and a producer's own loop (wait on its own copy S stages back, arrive.expect_tx,
//   cp.async.bulk), with an extra passing wait / arrive / ld.shared, or complete_tx instead of the
//   copy. cycles_per_iter = (clock64 after - before) / 256.
// wake: one CTA, two warps. Each round the signaller (warp 1, lane 0) waits on ack, spins D cycles,
//   reads clock64 and arrives on go; the waiter (warp 0, 32 lanes or lane 0 polling) waits on go
//   (try_wait or test_wait loop), reads clock64 and arrives on ack. wake = t_pass - t_arrive
//   (clock64 is one SM-wide counter); polls = failed polls of lane 0 before the pass (a try_wait
//   that gives up after its time limit counts as one).
// gpipe: a warp-specialized pipeline on 1..132 CTAs (one per SM): warp 0 lane 0 produces (wait
//   empty[s], arrive.expect_tx(full[s], stage bytes), one bulk copy, or a 1/C slice multicast to
//   the C CTAs of a cluster, or two tensor-map boxes A and B); CW consumer warps (from warp 1, or
//   warp 4 when they form warpgroups) wait on full[s] with all lanes, optionally read a word, run
//   wgmma m64n128k16 on the stage (ACC 64: 4 per warpgroup, ACC 128: 8), spin W cycles, and lane 0
//   of each consumer warp arrives on empty[s] of every CTA of the cluster (count CW x C). An
//   epilogue every KT iterations (persistent tile loop): the consumers write E bytes to shared
//   memory, fence.proxy.async, bar.sync, one thread issues cp.async.bulk global<-shared (bulk_group)
//   after waiting for the previous store's read. Sources: l2_shared (every CTA cycles over the same
//   8 tiles), l2_distinct (each CTA, or cluster, cycles over its own NT tiles; 132 x NT x tile <=
//   about 24 MiB), hbm (a fresh tile every iteration; L2 flushed before every launch).
// Timestamps go to shared memory (no global stores in the loop). Every wait is a bounded poll.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>
#include "tmap.cuh"
#include "bounded.cuh"

constexpr int ITERS = 320, WARM = 64;

__device__ __forceinline__ void remote_arrive(uint32_t local, uint32_t rank) {
  rmb_arrive_plain(mapa(local, rank));
}
__device__ __forceinline__ void bulk_s2g(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void named_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }

// ------------------------------------------------------------------------------------------ oploop
struct OpOut { long long c0, c1; int timeout; unsigned sink; };
constexpr int OP_N = 256, OP_WARM = 16;
// modes: 0 try_wait pass; 1 test_wait pass; 2 arrive; 3 arrive + try_wait pass; 4 ld.shared;
// 5 producer loop (wait own copy S back, arrive.expect_tx, bulk copy); 6 = 5 + try_wait pass on a
// completed barrier; 7 = 5 + arrive; 8 = 5 + ld.shared; 9 = 5 with complete_tx instead of the copy
__global__ void __launch_bounds__(32, 1) oploop(OpOut* out, const uint8_t* src, int mode, int S, int bytes, int lanes) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[8], done, open;
  const int lane = threadIdx.x;
  if (lane == 0) {
    for (int s = 0; s < 8; ++s) mb_init(smem_addr(&full[s]), 1);
    mb_init(smem_addr(&done), 1);
    mb_init(smem_addr(&open), (1u << 20) - 1);
    mb_arrive(smem_addr(&done));  // phase 0 complete
    out->timeout = 0;
  }
  __syncwarp();
  __syncthreads();
  if (lane >= lanes) return;
  const uint32_t dd = smem_addr(&done), op = smem_addr(&open);
  unsigned acc = 0;
  int s = 0;
  uint32_t ph = 0;
  long long c0 = 0;
  for (int it = 0; it < OP_N + OP_WARM; ++it) {
    if (it == OP_WARM) c0 = clock64();
    if (mode == 0) acc += mb_try_parity(dd, 0);
    else if (mode == 1) acc += mb_test_parity(dd, 0);
    else if (mode == 2) { if (lane == 0) mb_arrive(op); }
    else if (mode == 3) { if (lane == 0) mb_arrive(op); acc += mb_try_parity(dd, 0); }
    else if (mode == 4) acc += (unsigned)ld_shared_u64(dd + 8 * (acc & 0));
    else if (lane == 0) {
      if (it >= S && !wait_try(smem_addr(&full[s]), ph ^ 1u)) { out->timeout = 1; break; }
      if (mode == 6) acc += mb_try_parity(dd, 0);
      if (mode == 7) mb_arrive(op);
      if (mode == 8) acc += (unsigned)ld_shared_u64(dd);
      mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)bytes);
      if (mode == 9) mb_complete_tx(smem_addr(&full[s]), (uint32_t)bytes);
      else bulk_g2s(smem_addr(smem + (size_t)s * bytes), src + (size_t)(it & 7) * bytes, (uint32_t)bytes, smem_addr(&full[s]));
      if (++s == S) { s = 0; ph ^= 1u; }
    }
  }
  const long long c1 = clock64();
  if (lane == 0) { out->c0 = c0; out->c1 = c1; out->sink = acc; }
  if (mode >= 5 && lane == 0) {
    // wait for the copies still in flight: stage k's last phase
    for (int k = 0; k < S; ++k) {
      int n = 0;
      for (int it = k; it < OP_N + OP_WARM; it += S) ++n;
      wait_try(smem_addr(&full[k]), (uint32_t)((n - 1) & 1));
    }
  }
}

// -------------------------------------------------------------------------------------------- wake
constexpr int WK_N = 48, WK_WARM = 8;
struct WOut { long long t_arr[WK_N], t_pass[WK_N]; int polls[WK_N]; int timeout; };
__global__ void __launch_bounds__(64, 1) wake(WOut* out, int D, int lanes_poll, int form) {
  __shared__ __align__(8) uint64_t go[2], ack[2];
  __shared__ long long ta[WK_N], tp[WK_N];
  __shared__ int pl[WK_N];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int i = 0; i < 2; ++i) { mb_init(smem_addr(&go[i]), 1); mb_init(smem_addr(&ack[i]), 1); }
    out->timeout = 0;
  }
  __syncthreads();
  if (warp == 1) {
    if (lane != 0) return;
    for (int i = 0; i < WK_N; ++i) {
      if (i > 0 && !wait_try(smem_addr(&ack[(i - 1) & 1]), (uint32_t)(((i - 1) >> 1) & 1))) { out->timeout = 1; return; }
      spin_cycles(D);
      ta[i] = clock64();
      mb_arrive(smem_addr(&go[i & 1]));
    }
    // wait for the last ack before leaving
    wait_try(smem_addr(&ack[(WK_N - 1) & 1]), (uint32_t)(((WK_N - 1) >> 1) & 1));
  } else {
    for (int i = 0; i < WK_N; ++i) {
      const uint32_t a = smem_addr(&go[i & 1]), par = (uint32_t)((i >> 1) & 1);
      int polls = 0;
      bool ok = true;
      if (lanes_poll == 32 || lane == 0) {
        const long long t0 = clock64();
        for (;;) {
          if (form == 0 ? mb_try_parity(a, par) : mb_test_parity(a, par)) break;
          ++polls;
          if (clock64() - t0 > CAP) { ok = false; break; }
        }
      }
      if (lanes_poll != 32) __syncwarp();
      if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) out->timeout = 1; return; }
      if (lane == 0) {
        tp[i] = clock64();
        pl[i] = polls;
        mb_arrive(smem_addr(&ack[i & 1]));
      }
    }
    __syncwarp();
    if (lane == 0) {
      // the signaller's last timestamp is written before its last arrive on go
      for (int i = 0; i < WK_N; ++i) { out->t_arr[i] = ta[i]; out->t_pass[i] = tp[i]; out->polls[i] = pl[i]; }
    }
  }
}

// ------------------------------------------------------------------------------------------- gpipe
struct GP {
  int S, tile, C, CW, copy /*0 bulk, 1 tensor A+B*/, src /*0 l2_shared 1 l2_distinct 2 hbm*/, nt, W, read, KT, E;
};
struct GOut {
  long long t[ITERS], p[ITERS], e[ITERS];
  long long g0, g1, c0, c1;
  int timeout, smid;
  unsigned sink;
};

template <int ACC>  // 0: no wgmma; 64: 4 wgmma m64n128k16 per warpgroup per stage; 128: 8
__global__ void __launch_bounds__(ACC == 128 ? 256 : 384, 1)
gpipe(GOut* outs, const uint8_t* src, uint8_t* dst, GP P, const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[8], empty[8];
  __shared__ long long ts[ITERS], es[ITERS];
  __shared__ int abort_flag;
  GOut* out = outs + blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int CW0 = (ACC > 0 || P.CW >= 4) ? 4 : 1;
  const uint32_t rank = P.C > 1 ? cluster_rank() : 0u;
  const int S = P.S, tile = P.tile;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) { mb_init(smem_addr(&full[s]), 1); mb_init(smem_addr(&empty[s]), (uint32_t)(P.CW * P.C)); }
    abort_flag = 0;
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
      for (int it = 0; it < ITERS; ++it) {
        if (it >= S && !wait_try(smem_addr(&empty[s]), ph ^ 1u)) { out->timeout = 1; abort_flag = 1; break; }
        if (*(volatile int*)&abort_flag) break;
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
        out->p[it] = clock64();
        if (++s == S) { s = 0; ph ^= 1u; }
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
    if (rec) { out->g0 = globaltimer(); out->c0 = clock64(); }
    uint8_t* ebuf = smem + (size_t)S * tile;
    int s = 0, ntile = 0;
    uint32_t ph = 0;
    for (int it = 0; it < ITERS; ++it) {
      bool ok = wait_try(smem_addr(&full[s]), ph);
      if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) { out->timeout = 1; abort_flag = 1; } break; }
      if (rec) ts[it] = clock64();
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
          else remote_arrive(smem_addr(&empty[s]), (uint32_t)r);
        }
      }
      if (P.KT > 0 && (it + 1) % P.KT == 0) {
        // epilogue: the previous store has read its buffer; every consumer thread writes its part
        if (ct == 0) bulk_wait_read0();
        named_sync(1, nct);
        float v = (float)acc;
        if constexpr (ACC > 0) v += d0[0] + d0[1];
        if constexpr (ACC == 128) v += d1[0];
        const int per = P.E / nct;  // bytes per thread, a multiple of 16
        for (int b = 0; b < per; b += 16) {
          uint32_t a = smem_addr(ebuf + (size_t)ct * per + b);
          asm volatile("st.shared.v4.f32 [%0], {%1, %1, %1, %1};" ::"r"(a), "f"(v) : "memory");
        }
        fence_proxy_async();
        named_sync(1, nct);
        if (ct == 0) {
          bulk_s2g(dst + ((size_t)blockIdx.x * (ITERS / P.KT) + ntile) * (size_t)P.E, smem_addr(ebuf), (uint32_t)P.E);
          bulk_commit();
          es[ntile] = clock64();
        }
        ++ntile;
      }
      if (++s == S) { s = 0; ph ^= 1u; }
    }
    if (ct == 0 && P.KT > 0) bulk_wait0();
    if (rec) {
      out->g1 = globaltimer(); out->c1 = clock64(); out->sink = acc + (unsigned)d0[0] + (unsigned)d1[0];
      for (int i = 0; i < ITERS; ++i) { out->t[i] = ts[i]; out->e[i] = es[i]; }
    }
  }
  if (P.C > 1) asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
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

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "all";
  const std::string fam = argc > 2 ? argv[2] : "";  // gpipe: only families starting with this
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
  // tensor maps: A [ITERS*64 cols][nsm*128 rows] bf16 over src, B [ITERS*64][128] at the end of src
  const uint64_t kc = (uint64_t)ITERS * 64;
  CUtensorMap tA = make_tmap_2d(src, kc, (uint64_t)nsm * 128, 64, 128);
  CUtensorMap tB = make_tmap_2d(src + big - kc * 128 * 2, kc, 128, 64, 128);
  printf("{\"probe\": \"hw/probes/model.cu\", \"gpu\": \"%s\", \"sm_count\": %d", prop.name, nsm);

  // ---- oploop
  if (only == "all" || only == "oploop") {
    OpOut* d;
    CK(cudaMalloc(&d, sizeof(OpOut)));
    CK(cudaFuncSetAttribute(oploop, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
    struct OC { int mode, S, bytes, lanes; };
    std::vector<OC> oc;
    for (int lanes : {1, 32}) for (int m : {0, 1, 2, 3, 4}) oc.push_back({m, 1, 0, lanes});
    for (int S : {2, 4, 8})
      for (int b : {16, 4096, 16384})
        for (int m : {5, 6, 7, 8, 9})
          if (S * b <= 200 * 1024) oc.push_back({m, S, b, 1});
    printf(",\n \"oploop\": {\"note\": \"cycles per loop iteration, 256 timed after 16; median of 5 launches\", \"rows\": [");
    bool first = true;
    for (const OC& c : oc) {
      std::vector<double> v;
      int to = 0;
      for (int rep = 0; rep < 6; ++rep) {
        oploop<<<1, 32, std::max(c.S * c.bytes, 1024)>>>(d, src, c.mode, c.S, std::max(c.bytes, 16), c.lanes);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        OpOut h;
        CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
        to += h.timeout;
        if (rep) v.push_back((double)(h.c1 - h.c0) / OP_N);
      }
      printf("%s\n  {\"mode\": %d, \"stages\": %d, \"bytes\": %d, \"lanes\": %d, \"timeouts\": %d, \"cycles_per_iter\": %.2f, \"min\": %.2f, \"max\": %.2f}",
             first ? "" : ",", c.mode, c.S, c.bytes, c.lanes, to, median(v), pctl(v, 0), pctl(v, 1));
      first = false;
      fflush(stdout);
    }
    printf("]}");
  }

  // ---- wake
  if (only == "all" || only == "wake") {
    WOut* d;
    CK(cudaMalloc(&d, sizeof(WOut)));
    printf(",\n \"wake\": {\"note\": \"wake = waiter's clock64 after its passing poll - signaller's clock64 before its arrive; rounds 8..47 of 48, 2 launches after a warm-up\", \"rows\": [");
    bool first = true;
    for (int form : {0, 1})
      for (int lanes : {32, 1})
        for (int D : {0, 200, 1000, 3000, 6000, 7000, 7600, 7900, 8500, 12000, 16000, 24000}) {
          if (form == 1 && D > 8500) continue;
          std::vector<double> w, pol, per;
          int to = 0;
          for (int rep = 0; rep < 3; ++rep) {
            wake<<<1, 64>>>(d, D, lanes, form);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            if (!rep) continue;
            WOut h;
            CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
            to += h.timeout;
            for (int i = WK_WARM; i < WK_N; ++i) {
              w.push_back((double)(h.t_pass[i] - h.t_arr[i]));
              pol.push_back(h.polls[i]);
            }
            per.push_back((double)(h.t_pass[WK_N - 1] - h.t_pass[WK_WARM]) / (WK_N - 1 - WK_WARM));
          }
          printf("%s\n  {\"form\": \"%s\", \"lanes_poll\": %d, \"delay\": %d, \"timeouts\": %d, \"wake_median\": %.1f, \"wake_p10\": %.1f, \"wake_p90\": %.1f, "
                 "\"failed_polls_median\": %.1f, \"failed_polls_max\": %.1f, \"round_cycles\": %.1f}",
                 first ? "" : ",", form ? "test_wait" : "try_wait", lanes, D, to, median(w), pctl(w, 0.1), pctl(w, 0.9), median(pol),
                 pctl(pol, 1), median(per));
          first = false;
          fflush(stdout);
        }
    printf("]}");
  }

  // ---- gpipe
  if (only == "all" || only == "gpipe") {
    GOut* d;
    CK(cudaMalloc(&d, sizeof(GOut) * nsm));
    std::vector<GOut> h(nsm);
    CK(cudaFuncSetAttribute(gpipe<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
    CK(cudaFuncSetAttribute(gpipe<64>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
    CK(cudaFuncSetAttribute(gpipe<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, maxSmem));
    CK(cudaFuncSetAttribute(gpipe<0>, cudaFuncAttributeNonPortableClusterSizeAllowed, 0));
    struct GC { const char* family; int ctas, acc; GP p; };
    std::vector<GC> gc;
    auto l2nt = [&](int tile) { return std::max(2, std::min(8, (int)((24u << 20) / ((size_t)nsm * tile)))); };
    // consumers of one warp, one and two warpgroups, no busy work (read 0/1, W 0) and with W
    for (int CW : {1, 4, 8})
      for (int S : {2, 4})
        for (int kib : {4, 16})
          for (int rd : {0, 1}) gc.push_back({"consumers", 1, 0, {S, kib * 1024, 1, CW, 0, 0, 8, 0, rd, 0, 0}});
    for (int CW : {1, 4, 8}) for (int W : {500, 2000}) gc.push_back({"consumers", 1, 0, {4, 16384, 1, CW, 0, 0, 8, W, 1, 0, 0}});
    for (int CW : {1, 4, 8}) gc.push_back({"consumers", nsm, 0, {4, 16384, 1, CW, 0, 0, 8, 0, 0, 0, 0}});
    // streaming distinct addresses from L2 and HBM: 1..132 CTAs, 2-8 stages, 4-64 KiB
    const int SK[][2] = {{2, 4}, {4, 4}, {8, 4}, {2, 16}, {4, 16}, {8, 16}, {2, 32}, {4, 32}, {2, 64}, {3, 64}};
    for (int srcm : {1, 2})
      for (int n : {1, 16, 33, 66, 99, nsm})
        for (auto& sk : SK) gc.push_back({"stream", n, 0, {sk[0], sk[1] * 1024, 1, 1, 0, srcm, l2nt(sk[1] * 1024), 0, 0, 0, 0}});
    for (auto& sk : SK) gc.push_back({"stream", nsm, 0, {sk[0], sk[1] * 1024, 1, 1, 0, 0, 8, 0, 0, 0, 0}});
    // GEMM mainloops: two tensor boxes (A 128x64, B 128x64 bf16: 32 KiB a stage), TMA only or wgmma
    for (int n : {1, nsm})
      for (int srcm : {1, 2})
        for (int S : {2, 4, 6}) {
          gc.push_back({"mainloop_tma", n, 0, {S, 32768, 1, 1, 1, srcm, 8, 0, 0, 0, 0}});
          gc.push_back({"mainloop_wgmma1", n, 128, {S, 32768, 1, 4, 1, srcm, 8, 0, 0, 0, 0}});
          gc.push_back({"mainloop_wgmma2", n, 64, {S, 32768, 1, 8, 1, srcm, 8, 0, 0, 0, 0}});
        }
    // multicast pipelines in 2- and 4-CTA clusters
    for (int C : {2, 4})
      for (int n : {C, nsm - nsm % C})
        for (int srcm : {0, 2})
          for (auto& sk : {std::array<int, 2>{2, 16}, {4, 16}, {2, 64}, {3, 64}}) {
            if (n == C && srcm == 2) continue;
            gc.push_back({"multicast", n, 0, {sk[0], sk[1] * 1024, C, 1, 0, srcm, 8, 0, 0, 0, 0}});
          }
    for (int C : {2, 4}) gc.push_back({"multicast", C, 0, {4, 16384, C, 1, 0, 0, 8, 500, 1, 0, 0}});
    // persistent tile loops with an epilogue store (32 KiB per tile of KT k-steps)
    for (int n : {1, nsm})
      for (int KT : {4, 8, 16}) {
        gc.push_back({"persistent_wgmma1", n, 128, {4, 32768, 1, 4, 1, 1, 8, 0, 0, KT, 32768}});
        gc.push_back({"persistent_wgmma2", n, 64, {4, 32768, 1, 8, 1, 1, 8, 0, 0, KT, 32768}});
        gc.push_back({"persistent_tma", n, 0, {4, 32768, 1, 4, 1, 1, 8, 0, 0, KT, 32768}});
      }
    printf(",\n \"gpipe\": {\"iters\": %d, \"warmup\": %d, \"note\": \"cycles_per_iter: median over CTAs of the median spacing of the first consumer thread's full-wait passes after warm-up; mean_cycles_per_iter: the same with the mean; producer_mean: mean spacing of the producer's issues; loop_cycles: the consumer loop (clock64) median and max over CTAs; kernel_ns: first consumer start to last consumer end (globaltimer); tile_mean: mean spacing of epilogue store issues\", \"configs\": [",
           ITERS, WARM);
    bool first = true;
    for (const GC& c : gc) {
      if (std::string(c.family).rfind(fam, 0) != 0) continue;
      const GP& P = c.p;
      int smemBytes = P.S * P.tile + (P.KT ? P.E : 0);
      if (c.ctas > 1) smemBytes = std::max(smemBytes, 120 * 1024);
      const int CW0 = (c.acc > 0 || P.CW >= 4) ? 4 : 1;
      std::vector<double> med, mean, pmean, loop, tmean, mhz, d0;
      long long gmin = 0, gmax = 0;
      std::vector<double> kns;
      int timeouts = 0, distinct = 0;
      for (int rep = 0; rep < 3; ++rep) {
        if (P.src == 2) CK(cudaMemset(flush, rep, flushBytes));
        CK(cudaMemset(d, 0, sizeof(GOut) * nsm));
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
        lc.numAttrs = 1;
        const uint8_t* csrc = src;
        if (c.acc == 0) CK(cudaLaunchKernelEx(&lc, gpipe<0>, d, csrc, dst, P, tA, tB));
        if (c.acc == 64) CK(cudaLaunchKernelEx(&lc, gpipe<64>, d, csrc, dst, P, tA, tB));
        if (c.acc == 128) CK(cudaLaunchKernelEx(&lc, gpipe<128>, d, csrc, dst, P, tA, tB));
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (rep == 0) continue;
        CK(cudaMemcpy(h.data(), d, sizeof(GOut) * c.ctas, cudaMemcpyDeviceToHost));
        std::vector<int> sms;
        gmin = (long long)9e18; gmax = 0;
        for (int b = 0; b < c.ctas; ++b) {
          const GOut& o = h[b];
          timeouts += o.timeout;
          sms.push_back(o.smid);
          if (o.timeout) continue;
          std::vector<double> dl;
          for (int i = WARM + 1; i < ITERS; ++i) dl.push_back((double)(o.t[i] - o.t[i - 1]));
          med.push_back(median(dl));
          mean.push_back((double)(o.t[ITERS - 1] - o.t[WARM]) / (ITERS - 1 - WARM));
          pmean.push_back((double)(o.p[ITERS - 1] - o.p[WARM]) / (ITERS - 1 - WARM));
          loop.push_back((double)(o.c1 - o.c0));
          if (P.KT) {
            const int nt = ITERS / P.KT, w = std::max(1, WARM / P.KT);
            tmean.push_back((double)(o.e[nt - 1] - o.e[w]) / (nt - 1 - w));
          }
          mhz.push_back((double)(o.c1 - o.c0) / (double)(o.g1 - o.g0) * 1000.0);
          if (b == 0) d0 = dl;
          gmin = std::min(gmin, (long long)o.g0);
          gmax = std::max(gmax, (long long)o.g1);
        }
        kns.push_back((double)(gmax - gmin));
        std::sort(sms.begin(), sms.end());
        distinct = (int)(std::unique(sms.begin(), sms.end()) - sms.begin());
      }
      const char* srcName = P.src == 0 ? "l2_shared" : P.src == 1 ? "l2_distinct" : "hbm";
      printf("%s\n  {\"family\": \"%s\", \"ctas\": %d, \"stages\": %d, \"tile_bytes\": %d, \"cluster\": %d, \"consumer_warps\": %d, \"copy\": \"%s\", "
             "\"source\": \"%s\", \"src_tiles\": %d, \"work_cycles\": %d, \"read\": %d, \"wgmma_per_stage\": %d, \"tile_k_steps\": %d, \"epilogue_bytes\": %d, "
             "\"timeouts\": %d, \"distinct_sms\": %d",
             first ? "" : ",", c.family, c.ctas, P.S, P.tile, P.C, P.CW, P.copy ? "tensor_ab" : P.C > 1 ? "bulk_multicast" : "bulk", srcName,
             P.src == 2 ? ITERS : P.nt, P.W, P.read, c.acc == 128 ? 8 : c.acc == 64 ? 4 * (P.CW / 4) : 0, P.KT, P.KT ? P.E : 0, timeouts, distinct);
      if (!med.empty())
        printf(", \"cycles_per_iter\": %.1f, \"mean_cycles_per_iter\": %.1f, \"cta_mean_min\": %.1f, \"cta_mean_max\": %.1f, \"producer_mean\": %.1f, "
               "\"cta0_p10\": %.1f, \"cta0_p90\": %.1f, \"loop_cycles_median\": %.0f, \"loop_cycles_max\": %.0f, \"kernel_ns\": %.0f, \"sm_clock_mhz\": %.1f%s",
               median(med), median(mean), pctl(mean, 0), pctl(mean, 1), median(pmean), pctl(d0, 0.1), pctl(d0, 0.9), median(loop), pctl(loop, 1),
               median(kns), median(mhz), "");
      if (!tmean.empty()) printf(", \"tile_mean\": %.1f", median(tmean));
      printf("}");
      first = false;
      fflush(stdout);
    }
    printf("\n]}");
  }
  printf("\n}\n");
  return 0;
}
