// mbsim timing probe: the mechanisms of docs/HARDWARE.md "One-SM mechanisms (`plan.cu`, `plan2.cu`,
// H100)" that a single producer lane can measure. Prints one JSON object.
//
// chain: NCTA CTAs (one per SM) of one warp; lane 0 alone runs a producer that waits on its own copy
//   S iterations back (bounded try_wait), then arrive.expect_tx(full[s]) and one bulk copy of TILE
//   bytes. Per iteration it records clock64 right after its wait passes (pass[it - S]) and right
//   before the arrive (issue[it]) into shared memory, so that
//     latency = pass[j] - issue[j]  (issue to the waiter seeing the copy complete; with S = 1 the
//               light-load latency of one copy, with S >= 2 under the load of every SM's stream),
//     loop    = (issue[N-1] - issue[WU]) / (N - 1 - WU)  (cycles an iteration).
//   Source tile n = off + f(it): off and mask choose shared L2 tiles (off 0, mask 7), the CTA's own
//   L2 tiles (off = CTA x NT, mask NT - 1), a fresh HBM tile (off = CTA x N, mask 255; L2 evicted
//   by a 256 MiB memset before every launch). f by `div`: 0 it & mask; 1 it % nt (signed, run-time
//   nt); 2 (unsigned) it % nt; 3 it % nt + it / nt2 (two independent run-time divisions, nt2 > N so
//   the second is 0). The clock reads and shared stores are in every configuration alike.
// sched: one CTA of 16 warps. Warp 0 lane 0 runs the chain producer (S 4, 16 KiB, shared L2 tiles,
//   div 0, loop time only). The warps in `fmask` either follow (all lanes wait on full[s] in order,
//   __syncwarp, lane 0 arrives on a barrier nobody waits on: a consumer's loop body, woken every
//   stage) or spin (clock64 busy loop until the producer is done). Warps w and 0 share a warp
//   scheduler when w % 4 == 0. loop as above.
// Every wait is bounded (bounded.cuh; followers also stop when the producer is done).
//
// Build and run (from the repository root): bash hw/run_plan.sh
#include <algorithm>
#include <string>
#include <vector>
#include "bounded.cuh"

constexpr int N = 160, WU = 32, SMAX = 8;

struct CP { int S, tile, mask, div, nt, nt2, hbm, off; };  // off: tiles of source offset per CTA
struct COut { long long iss[N], pas[N]; int timeout; };

// The source tile index of iteration `it` (see the header): the division modes are the code under test.
__device__ __forceinline__ size_t src_index(int it, const CP& P) {
  switch (P.div) {
    case 1: return (size_t)(it % P.nt);
    case 2: return (size_t)((unsigned)it % (unsigned)P.nt);
    case 3: return (size_t)(it % P.nt + it / P.nt2);
    default: return (size_t)(it & P.mask);
  }
}

__global__ void __launch_bounds__(32, 1) chain(COut* outs, const uint8_t* src, CP P) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[SMAX];
  __shared__ long long iss[N], pas[N];
  COut* out = outs + blockIdx.x;
  if (threadIdx.x != 0) return;
  for (int s = 0; s < P.S; ++s) mb_init(smem_addr(&full[s]), 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  out->timeout = 0;
  const size_t off = (size_t)blockIdx.x * P.off;
  int s = 0;
  uint32_t ph = 0;
  for (int it = 0; it < N; ++it) {
    if (it >= P.S) {
      if (!wait_try(smem_addr(&full[s]), ph ^ 1u)) { out->timeout = 1; break; }
      pas[it - P.S] = clock64();
    }
    const size_t n = off + src_index(it, P);
    iss[it] = clock64();
    mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)P.tile);
    bulk_g2s(smem_addr(smem + (size_t)s * P.tile), src + n * (size_t)P.tile, (uint32_t)P.tile, smem_addr(&full[s]));
    if (++s == P.S) { s = 0; ph ^= 1u; }
  }
  for (int j = N - P.S; j < N && !out->timeout; ++j) {  // the last S copies land before the CTA ends
    if (!wait_try(smem_addr(&full[s]), ph ^ 1u)) { out->timeout = 1; break; }
    pas[j] = clock64();
    if (++s == P.S) { s = 0; ph ^= 1u; }
  }
  for (int i = 0; i < N; ++i) { out->iss[i] = iss[i]; out->pas[i] = pas[i]; }
}

struct SOut { long long c0, c1; int timeout; };

__global__ void __launch_bounds__(512, 1) sched(SOut* out, const uint8_t* src, unsigned fmask, int spin) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[4], sink;
  __shared__ volatile int done;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 4; ++s) mb_init(smem_addr(&full[s]), 1);
    mb_init(smem_addr(&sink), (1u << 20) - 1);  // never completes
    done = 0;
    out->timeout = 0;
  }
  __syncthreads();
  if (warp == 0) {
    if (lane != 0) return;
    int s = 0;
    uint32_t ph = 0;
    long long c0 = 0;
    for (int it = 0; it < N; ++it) {
      if (it >= 4 && !wait_try(smem_addr(&full[s]), ph ^ 1u)) { out->timeout = 1; break; }
      if (it == WU) c0 = clock64();
      mb_arrive_expect_tx(smem_addr(&full[s]), 16384u);
      bulk_g2s(smem_addr(smem + (size_t)s * 16384), src + (size_t)(it & 7) * 16384, 16384u, smem_addr(&full[s]));
      if (++s == 4) { s = 0; ph ^= 1u; }
    }
    out->c0 = c0;
    out->c1 = clock64();
    for (int k = 0; k < 4; ++k) wait_try(smem_addr(&full[k]), (uint32_t)(((N / 4) - 1) & 1));
    done = 1;
    return;
  }
  if (!((fmask >> warp) & 1u)) return;
  const long long t0 = clock64();
  if (spin) {
    while (!done && clock64() - t0 < CAP) {
    }
    return;
  }
  int s = 0;
  uint32_t ph = 0;
  for (int it = 0; it < N && !done; ++it) {
    while (!mb_try_parity(smem_addr(&full[s]), ph) && !done && clock64() - t0 < CAP) {
    }
    __syncwarp();
    if (lane == 0) mb_arrive(smem_addr(&sink));
    if (++s == 4) { s = 0; ph ^= 1u; }
  }
}

static double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double pctl(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[(size_t)(p * (v.size() - 1))];
}

struct CC { const char* item; const char* source; int ctas; CP p; };

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int nsm = prop.multiProcessorCount;
  const size_t srcBytes = (size_t)nsm * N * 65536, flushBytes = (size_t)256 << 20;
  uint8_t *src, *flush;
  CK(cudaMalloc(&src, srcBytes));
  CK(cudaMalloc(&flush, flushBytes));
  CK(cudaMemset(src, 1, srcBytes));
  COut* d;
  CK(cudaMalloc(&d, sizeof(COut) * nsm));
  std::vector<COut> h(nsm);
  CK(cudaFuncSetAttribute(chain, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  // distinct L2 tiles per CTA: a power of two with nsm x NT x tile <= about 24 MiB (as lean.cu), >= 2
  auto l2nt = [&](int tile) { int nt = 8; while (nt > 2 && (size_t)nsm * nt * tile > (24u << 20)) nt /= 2; return nt; };
  std::vector<CC> cs;
  // item 2: per-copy latency at light load (1 CTA, S = 1), L2 and HBM
  for (int kib : {1, 4, 8, 16, 32, 48, 64}) {
    cs.push_back({"latency", "l2_shared", 1, {1, kib * 1024, 7, 0, 8, 0, 0, 0}});
    cs.push_back({"latency", "hbm", 1, {1, kib * 1024, 255, 0, 8, 0, 1, N}});
  }
  // item 3: issue-to-full latency and rate under load at shallow pipelines
  for (int hbm : {0, 1})
    for (int n : {1, 8, 16, 33, 66, 99, nsm})
      for (int S : {2, 3, 4})
        for (int kib : {16, 32, 64}) {
          if (S * kib > 192 || (kib == 16 && S != 4)) continue;
          const int nt = l2nt(kib * 1024);
          cs.push_back({"load", hbm ? "hbm" : "l2_distinct", n, {S, kib * 1024, hbm ? 255 : nt - 1, 0, nt, 0, hbm, hbm ? N : nt}});
        }
  // items 5 and 6: the producer loop (S 4, 16 KiB) with run-time divisions and by source
  for (int n : {1, nsm})
    for (int dv : {0, 1, 2, 3}) cs.push_back({"divide", "l2_shared", n, {4, 16384, 7, dv, 8, dv == 3 ? 1 << 20 : 1, 0, 0}});
  for (int n : {1, nsm}) {
    cs.push_back({"source", "l2_shared", n, {4, 16384, 7, 0, 8, 1, 0, 0}});
    cs.push_back({"source", "l2_distinct", n, {4, 16384, 7, 0, 8, 1, 0, 8}});
    if (n == 1) cs.push_back({"source", "l2_distinct1024", n, {4, 16384, 1023, 0, 8, 1, 0, 1024}});
    cs.push_back({"source", "hbm", n, {4, 16384, 255, 0, 8, 1, 1, N}});
  }
  printf("{\"probe\": \"hw/probes/plan.cu\", \"gpu\": \"%s\", \"sm_count\": %d, \"iters\": %d, \"warmup\": %d,\n"
         " \"note\": \"chain: latency = median over steady iterations of (clock64 after the wait on copy j passes - clock64 before copy j's arrive.expect_tx), loop = cycles an iteration; "
         "median over CTAs, then over 3 launches after a warm-up launch; lat_p10/p90 over CTAs of the per-CTA median; sched: producer loop cycles an iteration\",\n \"chain\": [",
         prop.name, nsm, N, WU);
  bool first = true;
  for (const CC& c : cs) {
    const CP& P = c.p;
    std::vector<double> lat, loop, p10, p90, mx;
    int to = 0;
    for (int rep = 0; rep < 4; ++rep) {
      if (P.hbm) CK(cudaMemset(flush, rep, flushBytes));
      CK(cudaMemset(d, 0, sizeof(COut) * c.ctas));
      chain<<<c.ctas, 32, std::max(P.S * P.tile, 120 * 1024)>>>(d, src, P);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (!rep) continue;
      CK(cudaMemcpy(h.data(), d, sizeof(COut) * c.ctas, cudaMemcpyDeviceToHost));
      std::vector<double> l, lp;
      for (int b = 0; b < c.ctas; ++b) {
        to += h[b].timeout;
        if (h[b].timeout) continue;
        std::vector<double> lj;
        for (int j = WU; j < N; ++j) lj.push_back((double)(h[b].pas[j] - h[b].iss[j]));
        l.push_back(median(lj));
        lp.push_back((double)(h[b].iss[N - 1] - h[b].iss[WU]) / (N - 1 - WU));
      }
      lat.push_back(median(l));
      loop.push_back(median(lp));
      p10.push_back(pctl(l, 0.1));
      p90.push_back(pctl(l, 0.9));
      mx.push_back(pctl(lp, 1.0));
    }
    printf("%s\n  {\"item\": \"%s\", \"source\": \"%s\", \"ctas\": %d, \"stages\": %d, \"tile_bytes\": %d, \"div\": %d, \"timeouts\": %d, "
           "\"latency\": %.1f, \"lat_p10\": %.1f, \"lat_p90\": %.1f, \"loop\": %.1f, \"loop_cta_max\": %.1f}",
           first ? "" : ",", c.item, c.source, c.ctas, P.S, P.tile, P.div, to, median(lat), median(p10), median(p90), median(loop), median(mx));
    first = false;
    fflush(stdout);
  }
  printf("\n], \"sched\": [");
  SOut* sd;
  CK(cudaMalloc(&sd, sizeof(SOut)));
  CK(cudaFuncSetAttribute(sched, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * 16384));
  struct SC { const char* name; unsigned mask; };
  const SC scs[] = {{"none", 0},           {"same1", 1u << 4},          {"same2", (1u << 4) | (1u << 8)},
                    {"same3", 0x1110u},     {"other1", 1u << 1},         {"other2", 0x6u},
                    {"other3", 0xEu},       {"other3b", (1u << 5) | (1u << 9) | (1u << 13)},
                    {"warps1to4", 0x1Eu},   {"warps1to8", 0x1FEu},       {"warps1to15", 0xFFFEu}};
  first = true;
  for (int spin : {0, 1})
    for (const SC& sc : scs) {
      if (spin && sc.mask == 0) continue;
      std::vector<double> pv;
      int to = 0;
      for (int rep = 0; rep < 6; ++rep) {
        sched<<<1, 512, 4 * 16384>>>(sd, src, sc.mask, spin);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (!rep) continue;
        SOut o;
        CK(cudaMemcpy(&o, sd, sizeof o, cudaMemcpyDeviceToHost));
        to += o.timeout;
        pv.push_back((double)(o.c1 - o.c0) / (N - WU));
      }
      printf("%s\n  {\"others\": \"%s\", \"warp_mask\": %u, \"mode\": \"%s\", \"timeouts\": %d, \"producer_cycles\": %.1f}", first ? "" : ",",
             sc.name, sc.mask, spin ? "spin" : "follow", to, median(pv));
      first = false;
      fflush(stdout);
    }
  printf("\n]}\n");
  return 0;
}
