// mbsim timing probe: TMA copy latency and throughput under load, and many warps contending on
// one mbarrier. Prints one JSON object.
//
// tma_load: N CTAs (one per SM), each with one thread that keeps K bulk copies of B bytes in flight
//   (K barriers, count 1; as soon as copy k is seen complete by a try_wait poll, it is re-issued).
//   Per copy: latency = poll seeing completion - clock before its arrive.expect_tx + issue.
//   Per CTA: median latency, cycles per copy (mean over the timed copies), bytes/cycle.
//   N in {1, 33, 66, 132}, B in {4, 16, 64} KiB, K in {1, 2, 4, 8} (K x B <= 192 KiB),
//   source L2-hot (all CTAs cycle over the same 8 tiles) or HBM (a fresh region for every copy).
// contention: one CTA of N warps (1..32); every round each warp arrives on ONE barrier (lane 0
//   only: count N; or all 32 lanes: count 32 N, the H200 aggregates them into one arrive per warp)
//   and then all its lanes poll try_wait on the same phase. cycles/round = mean after warm-up.
// Every wait is a bounded poll: a timeout is recorded and the kernel ends.
#include <algorithm>
#include <cstring>
#include <vector>
#include "ptx.cuh"

constexpr long long POLL_CAP_CYCLES = 400000000ll;  // 0.2 s at 2 GHz
constexpr int COPIES = 256, WARM = 32, NSRC_TILES = 8;

struct LOut {
  long long lat[COPIES];
  long long done[COPIES];
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

__global__ void __launch_bounds__(32, 1) tma_load(LOut* outs, const uint8_t* src, int B, int K, int stream) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t bar[8];
  __shared__ long long issued[8];
  LOut* out = outs + blockIdx.x;
  if (threadIdx.x != 0) return;
  uint32_t smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  out->smid = (int)smid;
  out->timeout = 0;
  for (int k = 0; k < K; ++k) mb_init(smem_addr(&bar[k]), 1);
  auto issue = [&](int n) {
    const int k = n % K;
    const uint8_t* sp = stream ? src + ((size_t)blockIdx.x * COPIES + n) * (size_t)B
                               : src + (size_t)(n & (NSRC_TILES - 1)) * B;
    issued[k] = clock64();
    mb_arrive_expect_tx(smem_addr(&bar[k]), (uint32_t)B);
    bulk_g2s(smem_addr(smem + (size_t)k * B), sp, (uint32_t)B, smem_addr(&bar[k]));
  };
  for (int n = 0; n < K && n < COPIES; ++n) issue(n);
  for (int n = 0; n < COPIES; ++n) {
    const int k = n % K;
    if (!wait_par(smem_addr(&bar[k]), (uint32_t)((n / K) & 1))) { out->timeout = 1; return; }
    const long long t = clock64();
    out->lat[n] = t - issued[k];
    out->done[n] = t;
    if (n + K < COPIES) issue(n + K);
  }
  out->sink = *(volatile unsigned*)smem;
}

struct COut {
  long long t[260];
  int timeout;
};

// N warps, every round: arrive (lane 0, or all lanes), then every lane polls try_wait.
__global__ void contention(COut* out, int rounds, int all_lanes) {
  __shared__ __align__(8) uint64_t bar;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
  if (threadIdx.x == 0) { mb_init(smem_addr(&bar), all_lanes ? 32 * nw : nw); out->timeout = 0; }
  __syncthreads();
  const uint32_t a = smem_addr(&bar);
  for (int r = 0; r < rounds; ++r) {
    if (all_lanes || lane == 0) mb_arrive(a);
    bool ok = wait_par(a, (uint32_t)(r & 1));
    if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) out->timeout = 1; return; }
    if (warp == 0 && lane == 0) out->t[r] = clock64();
  }
}

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

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int nsm = prop.multiProcessorCount;
  const int smemBytes = 200 * 1024;  // forces one CTA per SM
  CK(cudaFuncSetAttribute(tma_load, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
  const size_t big = (size_t)nsm * COPIES * 64 * 1024;
  uint8_t* src;
  CK(cudaMalloc(&src, big));
  CK(cudaMemset(src, 0x3c, big));
  LOut* d;
  CK(cudaMalloc(&d, sizeof(LOut) * nsm));
  std::vector<LOut> h(nsm);
  printf("{\"probe\": \"hw/probes/load.cu\", \"gpu\": \"%s\", \"sm_count\": %d, \"copies\": %d, \"warmup\": %d,\n"
         " \"tma_load\": {\"note\": \"N CTAs (one per SM), one thread each keeps K bulk copies of B bytes in flight (re-issue as soon as a try_wait poll sees one complete); latency = poll seeing completion - clock before arrive.expect_tx+issue; cycles_per_copy = mean spacing of completions per CTA; medians over CTAs\", \"rows\": [",
         prop.name, nsm, COPIES, WARM);
  bool first = true;
  for (int stream = 0; stream < 2; ++stream)
    for (int N : {1, 33, 66, nsm})
      for (int kib : {4, 16, 64})
        for (int K : {1, 2, 3, 4, 8}) {
          if (K * kib > 192) continue;
          if (K == 3 && kib != 64) continue;
          const int B = kib * 1024;
          std::vector<double> lat_cta, cpc_cta, lat_all;
          int timeouts = 0, distinct = 0;
          for (int rep = 0; rep < 3; ++rep) {
            tma_load<<<N, 32, smemBytes>>>(d, src, B, K, stream);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            if (rep == 0) continue;
            CK(cudaMemcpy(h.data(), d, sizeof(LOut) * N, cudaMemcpyDeviceToHost));
            std::vector<int> sms;
            for (int b = 0; b < N; ++b) {
              const LOut& o = h[b];
              timeouts += o.timeout;
              sms.push_back(o.smid);
              if (o.timeout) continue;
              std::vector<double> l;
              for (int n = WARM; n < COPIES; ++n) l.push_back((double)o.lat[n]);
              lat_cta.push_back(median(l));
              if (b == 0) lat_all.insert(lat_all.end(), l.begin(), l.end());
              cpc_cta.push_back((double)(o.done[COPIES - 1] - o.done[WARM]) / (COPIES - 1 - WARM));
            }
            std::sort(sms.begin(), sms.end());
            distinct = (int)(std::unique(sms.begin(), sms.end()) - sms.begin());
          }
          const double cpc = median(cpc_cta);
          printf("%s\n  {\"source\": \"%s\", \"ctas\": %d, \"bytes\": %d, \"in_flight\": %d, \"timeouts\": %d, \"distinct_sms\": %d, "
                 "\"latency_median\": %.1f, \"latency_cta_min\": %.1f, \"latency_cta_max\": %.1f, \"cta0_p10\": %.1f, \"cta0_p90\": %.1f, "
                 "\"cycles_per_copy\": %.1f, \"bytes_per_cycle_per_sm\": %.2f, \"gpu_bytes_per_cycle\": %.1f}",
                 first ? "" : ",", stream ? "hbm" : "l2", N, B, K, timeouts, distinct, median(lat_cta), pctl(lat_cta, 0),
                 pctl(lat_cta, 1), pctl(lat_all, 0.1), pctl(lat_all, 0.9), cpc, B / cpc, N * B / cpc);
          first = false;
          fflush(stdout);
        }
  printf("]},\n \"contention\": {\"note\": \"one CTA of N warps; every round each warp arrives on one barrier (lane 0: count N; all lanes: count 32N) and all lanes poll try_wait on that phase; cycles_per_round = mean over rounds 32..255, median of 3 launches\", \"rows\": [");
  COut* dc;
  CK(cudaMalloc(&dc, sizeof(COut)));
  COut hc;
  first = true;
  for (int all : {0, 1})
    for (int nw : {1, 2, 4, 8, 16, 32}) {
      std::vector<double> v;
      int to = 0;
      for (int rep = 0; rep < 4; ++rep) {
        contention<<<1, 32 * nw>>>(dc, 256, all);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (rep == 0) continue;
        CK(cudaMemcpy(&hc, dc, sizeof(COut), cudaMemcpyDeviceToHost));
        to += hc.timeout;
        v.push_back((double)(hc.t[255] - hc.t[32]) / 223.0);
      }
      printf("%s\n  {\"warps\": %d, \"arrive\": \"%s\", \"count\": %d, \"timeouts\": %d, \"cycles_per_round\": %.1f}", first ? "" : ",", nw,
             all ? "all_lanes" : "lane0", all ? 32 * nw : nw, to, median(v));
      first = false;
    }
  printf("]}}\n");
  return 0;
}
