// mbsim timing probe: single-thread mbarrier operation latencies (dependent chains), wake-up
// latency and ping-pong round trips between two warps, and cp.async.bulk (TMA) latency for
// 1..64 KiB from L2 and from HBM. Prints one JSON object on stdout. All waits are bounded polls;
// a poll loop that runs out records a timeout instead of hanging.
#include <algorithm>
#include <cstring>
#include <vector>
#include "ptx.cuh"

constexpr int LINKS = 32;   // ops per dependent chain
constexpr int REPS = 24;    // chain repetitions (first 4 are warm-up)
constexpr int WARM = 4;
constexpr long long POLL_CAP_CYCLES = 400000000ll;  // 0.2 s at 2 GHz

// chain kinds
enum { C_GLUE, C_LDS, C_ARRIVE, C_ARRIVE_TX, C_ARRIVE_DROP, C_TEST_DONE, C_TEST_NOTDONE, C_TRY_DONE, C_TEST_TOKEN_DONE,
       C_ARRIVE_THEN_TEST, C_EXPECT_TX_ISSUE, C_COMPLETE_TX_ISSUE, C_INIT_ISSUE, C_NCHAIN };
static const char* kChainName[] = {"glue_and_add", "ld.shared.b64", "arrive", "arrive.expect_tx", "arrive_drop",
                                   "test_wait.parity_complete", "test_wait.parity_incomplete", "try_wait.parity_complete",
                                   "test_wait.token_complete", "arrive_then_test_wait_completing",
                                   "expect_tx_issue_back_to_back", "complete_tx_issue_back_to_back",
                                   "init_issue_back_to_back"};

__device__ __forceinline__ uint32_t glue(uint32_t v, uint32_t zero, uint32_t base) {
  uint32_t r;
  asm volatile("{ .reg .u32 t; and.b32 t, %1, %2; add.u32 %0, t, %3; }" : "=r"(r) : "r"(v), "r"(zero), "r"(base));
  return r;
}

__global__ void chains(long long* out, uint32_t zero) {
  __shared__ __align__(8) uint64_t bars[4];
  __shared__ __align__(8) uint64_t word;
  if (threadIdx.x != 0) return;
  const uint32_t b = smem_addr(&bars[0]);
  const uint32_t w = smem_addr(&word);
  word = 0;
  for (int kind = 0; kind < C_NCHAIN; ++kind) {
    for (int rep = 0; rep < REPS; ++rep) {
      // fresh barrier state for each repetition (not timed)
      mb_init(b, kind == C_ARRIVE_THEN_TEST ? 1 : (1 << 20) - 1);
      mb_init(b + 8, 1);
      mb_arrive(b + 8); // b+8: phase 0 complete, parity(0) true
      uint32_t x = glue(0, zero, 0);
      long long t0 = clock64();
      switch (kind) {
        case C_GLUE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue(x, zero, w);
          break;
        case C_LDS:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue((uint32_t)ld_shared_u64(w + x), zero, 0);
          break;
        case C_ARRIVE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue((uint32_t)(mb_arrive(b + x) >> 32), zero, 0);
          break;
        case C_ARRIVE_TX:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue((uint32_t)(mb_arrive_expect_tx(b + x, 0) >> 32), zero, 0);
          break;
        case C_ARRIVE_DROP:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue((uint32_t)(mb_arrive_drop_cnt(b + x, 1) >> 32), zero, 0);
          break;
        case C_TEST_DONE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue(mb_test_parity(b + 8 + x, 0), zero, 0);
          break;
        case C_TEST_NOTDONE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue(mb_test_parity(b + x, 0), zero, 0);
          break;
        case C_TRY_DONE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue(mb_try_parity(b + 8 + x, 0), zero, 0);
          break;
        case C_TEST_TOKEN_DONE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) x = glue(mb_test_token(b + 8 + x, 0ull), zero, 0);
          break;
        case C_ARRIVE_THEN_TEST:
          // init(1): each arrive completes a phase; the following test_wait sees it
#pragma unroll
          for (int i = 0; i < LINKS; ++i) {
            uint32_t par = (uint32_t)i & 1u;
            x = glue((uint32_t)(mb_arrive(b + x) >> 32), zero, 0);
            x = glue(mb_test_parity(b + x, par) ^ 1u, zero, 0);
          }
          break;
        case C_EXPECT_TX_ISSUE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) mb_expect_tx(b, 16);
          x = glue((uint32_t)(mb_arrive_cnt(b, zero) >> 32), zero, 0);
          break;
        case C_COMPLETE_TX_ISSUE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) mb_complete_tx(b, 16);
          x = glue((uint32_t)(mb_arrive_cnt(b, zero) >> 32), zero, 0);
          break;
        case C_INIT_ISSUE:
#pragma unroll
          for (int i = 0; i < LINKS; ++i) mb_init(b + 16, 3);
          x = glue((uint32_t)(mb_arrive_cnt(b + 16, zero) >> 32), zero, 0);
          break;
      }
      long long t1 = clock64();
      out[kind * REPS + rep] = (t1 - t0) + (long long)(x & zero);
      mb_inval(b);
      mb_inval(b + 8);
      if (kind == C_INIT_ISSUE) mb_inval(b + 16);
    }
  }
}

// Wake-up and ping-pong between warp 0 and warp 1 (lane 0 of each, or all lanes waiting).
// mode bit0: 0 test_wait spin, 1 try_wait spin; bit1: all 32 lanes of the waiting warp poll.
constexpr int PP_ITERS = 256;
__device__ __forceinline__ bool wait_parity(uint32_t a, uint32_t par, int use_try, int* timeout) {
  const long long t0 = clock64();
  do {
    if (use_try ? mb_try_parity(a, par) : mb_test_parity(a, par)) return true;
  } while (clock64() - t0 < POLL_CAP_CYCLES);
  atomicExch(timeout, 1);
  return false;
}
__global__ void pingpong(long long* out, int mode, int* timeout) {
  __shared__ __align__(8) uint64_t bars[2];
  const uint32_t A = smem_addr(&bars[0]), B = smem_addr(&bars[1]);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int use_try = mode & 1, all_lanes = (mode >> 1) & 1;
  if (threadIdx.x == 0) { mb_init(A, 1); mb_init(B, 1); }
  __syncthreads();
  if (warp == 0) {
    if (lane != 0 && !all_lanes) return;
    long long t0 = clock64();
    for (int i = 0; i < PP_ITERS; ++i) {
      if (lane == 0) mb_arrive(A);
      if (!wait_parity(B, i & 1, use_try, timeout)) break;
      __syncwarp(all_lanes ? 0xffffffffu : 1u);
    }
    if (lane == 0) out[0] = clock64() - t0;
  } else if (warp == 1) {
    if (lane != 0 && !all_lanes) return;
    for (int i = 0; i < PP_ITERS; ++i) {
      if (!wait_parity(A, i & 1, use_try, timeout)) break;
      __syncwarp(all_lanes ? 0xffffffffu : 1u);
      if (lane == 0) mb_arrive(B);
    }
  }
}

// One-way wake-up: warp 0 lane 0 arrives at a recorded time; warp 1 polls and records the time it
// saw completion. Both clocks are the same SM's clock64.
constexpr int WK_ITERS = 128;
__global__ void wakeup(long long* out, int mode, int* timeout) {
  __shared__ __align__(8) uint64_t bars[2];
  __shared__ long long tarr[WK_ITERS], twoke[WK_ITERS];
  const uint32_t A = smem_addr(&bars[0]), B = smem_addr(&bars[1]);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int use_try = mode & 1, all_lanes = (mode >> 1) & 1;
  if (threadIdx.x == 0) { mb_init(A, 1); mb_init(B, 1); }
  __syncthreads();
  if (warp == 0 && lane == 0) {
    for (int i = 0; i < WK_ITERS; ++i) {
      spin_cycles(3000);
      long long t = clock64();
      mb_arrive(A);
      tarr[i] = t;
      if (!wait_parity(B, i & 1, 1, timeout)) break;
    }
  } else if (warp == 1 && (lane == 0 || all_lanes)) {
    for (int i = 0; i < WK_ITERS; ++i) {
      if (!wait_parity(A, i & 1, use_try, timeout)) break;
      long long t = clock64();
      __syncwarp(all_lanes ? 0xffffffffu : 1u);
      if (lane == 0) { twoke[i] = t; mb_arrive(B); }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int i = 0; i < WK_ITERS; ++i) out[i] = twoke[i] - tarr[i];
}

// try_wait on an incomplete phase: how long until it returns false.
__global__ void trywait_timeout(long long* out) {
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x != 0) return;
  uint32_t a = smem_addr(&bar);
  mb_init(a, 1);
  for (int i = 0; i < 16; ++i) {
    long long t0 = clock64();
    uint32_t r = mb_try_parity(a, 0);
    long long t1 = clock64();
    out[i] = (t1 - t0) + r;
  }
}

// TMA latency: issue arrive.expect_tx + cp.async.bulk, poll until completion.
constexpr int TMA_REPS = 72, TMA_WARM = 8;
__global__ void tma_latency(long long* out, long long* issue, const uint8_t* src, size_t src_stride, int bytes,
                            int use_try, int* timeout) {
  extern __shared__ __align__(128) uint8_t dyn[];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x != 0) return;
  uint32_t a = smem_addr(&bar);
  uint32_t dst = smem_addr(dyn);
  mb_init(a, 1);
  for (int r = 0; r < TMA_REPS; ++r) {
    const uint8_t* s = src + (size_t)r * src_stride;
    long long t0 = clock64();
    mb_arrive_expect_tx(a, (uint32_t)bytes);
    bulk_g2s(dst, s, (uint32_t)bytes, a);
    long long ti = clock64();
    bool ok = false;
    for (long long k = 0; !ok && clock64() - t0 < POLL_CAP_CYCLES; ++k) ok = use_try ? mb_try_parity(a, r & 1) : mb_test_parity(a, r & 1);
    long long t1 = clock64();
    if (!ok) { atomicExch(timeout, 1); return; }
    out[r] = t1 - t0;
    issue[r] = ti - t0;
  }
}

// Issue throughput of arrive.expect_tx + cp.async.bulk pairs from one thread: 32 pairs over 8
// barriers (init 4), then a bounded wait for all 8 phases. out[0] = issue cycles for 32 pairs,
// out[1] = cycles until all complete (from the first issue).
__global__ void bulk_issue_rate(long long* out, const uint8_t* src, int bytes, int* timeout) {
  extern __shared__ __align__(128) uint8_t dyn[];
  __shared__ __align__(8) uint64_t bars[8];
  if (threadIdx.x != 0) return;
  for (int r = 0; r < 4; ++r) {
    for (int k = 0; k < 8; ++k) mb_init(smem_addr(&bars[k]), 4);
    long long t0 = clock64();
#pragma unroll 1
    for (int k = 0; k < 32; ++k) {
      uint32_t b = smem_addr(&bars[k & 7]);
      mb_arrive_expect_tx(b, (uint32_t)bytes);
      bulk_g2s(smem_addr(dyn + (size_t)(k & 7) * bytes), src + (size_t)k * bytes, (uint32_t)bytes, b);
    }
    long long t1 = clock64();
    for (int k = 0; k < 8; ++k) {
      bool ok = false;
      while (!ok && clock64() - t0 < POLL_CAP_CYCLES) ok = mb_try_parity(smem_addr(&bars[k]), 0);
      if (!ok) { atomicExch(timeout, 1); return; }
    }
    long long t2 = clock64();
    for (int k = 0; k < 8; ++k) mb_inval(smem_addr(&bars[k]));
    out[2 * r] = t1 - t0;
    out[2 * r + 1] = t2 - t0;
  }
}

__global__ void clock_rate(long long* out) {
  if (threadIdx.x != 0) return;
  uint64_t g0 = globaltimer();
  long long c0 = clock64();
  while (globaltimer() - g0 < 20000000ull) {
  }
  uint64_t g1 = globaltimer();
  long long c1 = clock64();
  out[0] = c1 - c0;
  out[1] = (long long)(g1 - g0);
}

__global__ void touch(uint8_t* p, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = (uint8_t)(i * 7);
}

static double median(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? (double)v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double pct(std::vector<long long> v, double p) {
  std::sort(v.begin(), v.end());
  return (double)v[(size_t)(p * (v.size() - 1))];
}
static void print_arr(const std::vector<long long>& v) {
  printf("[");
  for (size_t i = 0; i < v.size(); ++i) printf("%s%lld", i ? "," : "", v[i]);
  printf("]");
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  long long* d;
  CK(cudaMalloc(&d, 1 << 20));
  int* dto;
  CK(cudaMalloc(&dto, 4));
  CK(cudaMemset(dto, 0, 4));
  std::vector<long long> h(1 << 17);

  printf("{\"probe\": \"hw/probes/latency.cu\", \"gpu\": \"%s\", \"sm_count\": %d", prop.name, prop.multiProcessorCount);

  clock_rate<<<1, 32>>>(d);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), d, 16, cudaMemcpyDeviceToHost));
  double mhz = (double)h[0] / (double)h[1] * 1000.0;
  printf(",\n \"sm_clock_mhz\": %.1f", mhz);

  // ---- chains ----
  chains<<<1, 32>>>(d, 0u);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), d, sizeof(long long) * C_NCHAIN * REPS, cudaMemcpyDeviceToHost));
  double glue_per = 0;
  printf(",\n \"chains\": {\"links\": %d, \"note\": \"cycles per link = median over reps of (chain cycles / links); net subtracts one glue link (and+add) where the op's result feeds the next address\", \"ops\": {", LINKS);
  for (int k = 0; k < C_NCHAIN; ++k) {
    std::vector<long long> v(h.begin() + k * REPS + WARM, h.begin() + (k + 1) * REPS);
    double per = median(v) / LINKS;
    if (k == C_GLUE) glue_per = per;
    double net = per - glue_per;
    if (k == C_ARRIVE_THEN_TEST) net = per - 2 * glue_per;
    bool issue = (k == C_EXPECT_TX_ISSUE || k == C_COMPLETE_TX_ISSUE || k == C_INIT_ISSUE);
    printf("%s\n  \"%s\": {\"per_link\": %.2f, \"net\": %.2f, \"kind\": \"%s\", \"samples\": ", k ? "," : "", kChainName[k], per,
           k == C_GLUE ? per : (issue ? per : net), issue ? "issue_throughput_per_op" : "dependent_latency");
    print_arr(v);
    printf("}");
  }
  printf("}}");

  // ---- try_wait timeout ----
  trywait_timeout<<<1, 32>>>(d);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), d, 16 * 8, cudaMemcpyDeviceToHost));
  {
    std::vector<long long> v(h.begin() + 2, h.begin() + 16);
    printf(",\n \"try_wait_incomplete_returns_false_after\": {\"median\": %.1f, \"samples\": ", median(v));
    print_arr(v);
    printf("}");
  }

  // ---- ping-pong & wake-up ----
  const char* modeName[] = {"test_wait_lane0", "try_wait_lane0", "test_wait_all_lanes", "try_wait_all_lanes"};
  printf(",\n \"pingpong_round_trip\": {");
  for (int m = 0; m < 4; ++m) {
    std::vector<long long> v;
    for (int r = 0; r < 7; ++r) {
      pingpong<<<1, 64>>>(d, m, dto);
      CK(cudaDeviceSynchronize());
      long long t;
      CK(cudaMemcpy(&t, d, 8, cudaMemcpyDeviceToHost));
      v.push_back(t);
    }
    std::vector<long long> vv(v.begin() + 1, v.end());
    printf("%s\n  \"%s\": {\"cycles_per_round_trip\": %.1f, \"iters\": %d, \"launch_totals\": ", m ? "," : "", modeName[m],
           median(vv) / PP_ITERS, PP_ITERS);
    print_arr(vv);
    printf("}");
  }
  printf("}");
  printf(",\n \"wakeup_one_way\": {");
  for (int m = 0; m < 4; ++m) {
    wakeup<<<1, 64>>>(d, m, dto);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), d, WK_ITERS * 8, cudaMemcpyDeviceToHost));
    std::vector<long long> v(h.begin() + 8, h.begin() + WK_ITERS);
    printf("%s\n  \"%s\": {\"median\": %.1f, \"p10\": %.1f, \"p90\": %.1f, \"note\": \"clock64 just before the completing arrive until the waiter's clock64 after its successful poll\"}",
           m ? "," : "", modeName[m], median(v), pct(v, 0.1), pct(v, 0.9));
  }
  printf("}");

  // ---- TMA latency ----
  const size_t big = (size_t)2 << 30;
  uint8_t* src;
  CK(cudaMalloc(&src, big));
  touch<<<1024, 256>>>(src, big);
  CK(cudaDeviceSynchronize());
  CK(cudaFuncSetAttribute(tma_latency, cudaFuncAttributeMaxDynamicSharedMemorySize, 128 * 1024));
  printf(",\n \"tma_bulk_latency\": {\"note\": \"cycles from before arrive.expect_tx + cp.async.bulk issue until a poll sees the phase complete; one thread; l2: same source every repetition (L2-hot); hbm: a fresh never-read 256 KiB-aligned source region each repetition and row, in a 2 GiB buffer written before (out of L2)\", \"rows\": [");
  bool firstRow = true;
  int combo = 0;
  for (int src_mode = 0; src_mode < 2; ++src_mode)
    for (int use_try = 0; use_try < 2; ++use_try)
      for (int kib : {1, 2, 4, 8, 16, 32, 64}) {
        // hbm: every repetition of every (poll, size) row reads its own never-read 256 KiB-aligned
        // region in [64 MiB, 320 MiB) of a 2 GiB buffer written sequentially before (so out of L2)
        const size_t stride = src_mode == 0 ? 0 : (size_t)256 << 10;
        const uint8_t* s0 = src_mode == 0 ? src : src + ((size_t)64 << 20) + (size_t)(combo++) * TMA_REPS * stride;
        tma_latency<<<1, 32, 128 * 1024>>>(d, d + 4096, s0, stride, kib * 1024, use_try, dto);
        CK(cudaDeviceSynchronize());
        std::vector<long long> lat(TMA_REPS), iss(TMA_REPS);
        CK(cudaMemcpy(lat.data(), d, TMA_REPS * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(iss.data(), d + 4096, TMA_REPS * 8, cudaMemcpyDeviceToHost));
        std::vector<long long> v(lat.begin() + TMA_WARM, lat.end()), vi(iss.begin() + TMA_WARM, iss.end());
        printf("%s\n  {\"source\": \"%s\", \"poll\": \"%s\", \"bytes\": %d, \"median\": %.1f, \"p10\": %.1f, \"p90\": %.1f, \"issue_median\": %.1f}",
               firstRow ? "" : ",", src_mode ? "hbm" : "l2", use_try ? "try_wait" : "test_wait", kib * 1024, median(v),
               pct(v, 0.1), pct(v, 0.9), median(vi));
        firstRow = false;
      }
  printf("]}");
  // ---- bulk issue throughput ----
  CK(cudaFuncSetAttribute(bulk_issue_rate, cudaFuncAttributeMaxDynamicSharedMemorySize, 160 * 1024));
  printf(",\n \"bulk_issue_throughput\": {\"note\": \"one thread issues 32 (arrive.expect_tx + cp.async.bulk) pairs over 8 barriers, L2-hot; per_pair_issue = issue cycles / 32; all_done = cycles from first issue until all 8 phases complete (median of 3 after 1 warm-up)\", \"rows\": [");
  bool fr = true;
  for (int bytes : {16, 1024, 4096, 16384}) {
    bulk_issue_rate<<<1, 32, 160 * 1024>>>(d, src, bytes, dto);
    CK(cudaDeviceSynchronize());
    std::vector<long long> v(8);
    CK(cudaMemcpy(v.data(), d, 64, cudaMemcpyDeviceToHost));
    std::vector<long long> is = {v[2], v[4], v[6]}, al = {v[3], v[5], v[7]};
    printf("%s\n  {\"bytes\": %d, \"per_pair_issue\": %.1f, \"all_done\": %.1f, \"bytes_per_cycle\": %.1f}", fr ? "" : ",", bytes,
           median(is) / 32.0, median(al), 32.0 * bytes / median(al));
    fr = false;
  }
  printf("]}");
  int to = 0;
  CK(cudaMemcpy(&to, dto, 4, cudaMemcpyDeviceToHost));
  printf(",\n \"any_timeout\": %s}\n", to ? "true" : "false");
  return 0;
}
