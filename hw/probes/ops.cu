// mbsim timing probe: per-operation costs inside a loop, one kernel per loop body (compile-time, so
// each loop holds only its own operation), and the parts of a tile epilogue. Prints one JSON object.
//
// ops<M>: one CTA, one warp (lanes 1 or 32 active), 256 timed iterations after 16.
//   cycles_per_iter = (clock64 after the loop - before) / 256, median of 5 launches.
//   Loop bodies (M): see OPS below. Producer loops (P*) wait on their own copy S = 4 stages back,
//   arm the stage with arrive.expect_tx and issue the copies (4 KiB bulk, or 16 KiB tensor boxes).
// epi<M>: one CTA of 128 threads (a warpgroup), 64 timed iterations after 8, bodies: bar.sync;
//   256 B of st.shared.v4 per thread + bar.sync; fence.proxy.async + bar.sync; thread 0 bulk-stores
//   32 KiB (shared -> global) and waits for its read (wait_group.read 0) or its completion
//   (wait_group 0), the others at bar.sync; the whole epilogue of hw/probes/model.cu.
#include <algorithm>
#include <cstring>
#include <vector>
#include "tmap.cuh"
#include "bounded.cuh"

constexpr int N = 256, WU = 16, EN = 64, EWU = 8;

__device__ __forceinline__ void bulk_s2g(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
}

struct Out { long long c0, c1; int timeout; unsigned sink; long long scratch[N + WU]; };

enum {
  E_EMPTY, E_TRY, E_TEST, E_ARRIVE, E_LDS, E_LDBAR, E_STS, E_CLKSTS, E_CLKSTG, E_TRY_ARRIVE,
  P_BULK, P_BULK_STG, P_TENSOR1, P_TENSOR2, P_BULK2, P_BULK_TRY, P_BULK_ARRIVE, P_BULK_LDS, P_CTX, NOPS
};
static const char* OPS[] = {"empty", "try_wait_pass", "test_wait_pass", "arrive", "ld_shared", "ld_shared_barrier_word",
                            "st_shared", "clock64_st_shared", "clock64_st_global", "arrive_try_wait_pass",
                            "producer_bulk4k", "producer_bulk4k_st_global", "producer_tensor16k", "producer_2tensor16k",
                            "producer_2bulk4k", "producer_bulk4k_try_wait_pass", "producer_bulk4k_arrive",
                            "producer_bulk4k_ld_shared", "producer_complete_tx"};

template <int M>
__global__ void __launch_bounds__(32, 1) ops(Out* out, const uint8_t* src, int lanes, const __grid_constant__ CUtensorMap tm) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[4], done, open, word;
  const int lane = threadIdx.x;
  if (lane == 0) {
    for (int s = 0; s < 4; ++s) mb_init(smem_addr(&full[s]), 1);
    mb_init(smem_addr(&done), 1);
    mb_init(smem_addr(&open), (1u << 20) - 1);
    mb_arrive(smem_addr(&done));
    word = 7;
    out->timeout = 0;
  }
  __syncthreads();
  if (lane >= lanes) return;
  constexpr bool prod = M >= P_BULK;
  if (prod && lane != 0) return;
  const uint32_t dd = smem_addr(&done), op = smem_addr(&open), wd = smem_addr(&word);
  unsigned acc = 0;
  int s = 0;
  uint32_t ph = 0;
  long long c0 = 0;
  constexpr int B = (M == P_TENSOR1 || M == P_TENSOR2) ? 16384 : 4096;
  constexpr int NC = (M == P_TENSOR2 || M == P_BULK2) ? 2 : 1;
  for (int it = 0; it < N + WU; ++it) {
    if (it == WU) c0 = clock64();
    if constexpr (M == E_EMPTY) asm volatile("" ::: "memory");
    if constexpr (M == E_TRY) acc += mb_try_parity(dd, 0);
    if constexpr (M == E_TEST) acc += mb_test_parity(dd, 0);
    if constexpr (M == E_ARRIVE) { if (lane == 0) mb_arrive(op); }
    if constexpr (M == E_TRY_ARRIVE) { if (lane == 0) mb_arrive(op); acc += mb_try_parity(dd, 0); }
    if constexpr (M == E_LDS) acc += (unsigned)ld_shared_u64(wd);
    if constexpr (M == E_LDBAR) acc += (unsigned)ld_shared_u64(dd);
    if constexpr (M == E_STS) st_shared_u64(wd, (uint64_t)it);
    if constexpr (M == E_CLKSTS) st_shared_u64(wd, (uint64_t)clock64());
    if constexpr (M == E_CLKSTG) { if (lane == 0) out->scratch[it] = clock64(); }
    if constexpr (prod) {
      if (it >= 4 && !wait_try(smem_addr(&full[s]), ph ^ 1u)) { out->timeout = 1; break; }
      if constexpr (M == P_BULK_TRY) acc += mb_try_parity(dd, 0);
      if constexpr (M == P_BULK_ARRIVE) mb_arrive(op);
      if constexpr (M == P_BULK_LDS) acc += (unsigned)ld_shared_u64(wd);
      const uint32_t st = smem_addr(smem + (size_t)s * B * NC);
      mb_arrive_expect_tx(smem_addr(&full[s]), (uint32_t)(B * NC));
      if constexpr (M == P_CTX) mb_complete_tx(smem_addr(&full[s]), (uint32_t)B);
      else if constexpr (M == P_TENSOR1 || M == P_TENSOR2) {
        for (int c = 0; c < NC; ++c) tensor_g2s(st + c * B, &tm, 0, (it & 7) * 128 + c * 1024, smem_addr(&full[s]));
      } else {
        for (int c = 0; c < NC; ++c) bulk_g2s(st + c * B, src + (size_t)((it & 7) * NC + c) * B, (uint32_t)B, smem_addr(&full[s]));
      }
      if constexpr (M == P_BULK_STG) out->scratch[it] = clock64();
      if (++s == 4) { s = 0; ph ^= 1u; }
    }
  }
  const long long c1 = clock64();
  if (lane == 0) { out->c0 = c0; out->c1 = c1; out->sink = acc; }
  if constexpr (prod) {
    for (int k = 0; k < 4; ++k) {
      int n = 0;
      for (int it = k; it < N + WU; it += 4) ++n;
      wait_try(smem_addr(&full[k]), (uint32_t)((n - 1) & 1));
    }
  }
}

enum { B_SYNC, B_STS, B_FENCE, B_STORE_READ, B_STORE_DONE, B_ALL, NEPI };
static const char* EPIS[] = {"bar_sync", "st_shared_256B_per_thread_bar_sync", "fence_proxy_async_bar_sync",
                             "bulk_store_32k_wait_read", "bulk_store_32k_wait_done", "epilogue_as_model_cu"};

template <int M>
__global__ void __launch_bounds__(128, 1) epi(Out* out, uint8_t* dst) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const int t = threadIdx.x;
  long long c0 = 0;
  float v = (float)t;
  for (int it = 0; it < EN + EWU; ++it) {
    if (it == EWU) c0 = clock64();
    if constexpr (M == B_SYNC) asm volatile("bar.sync 1, 128;" ::: "memory");
    if constexpr (M == B_STS || M == B_ALL) {
      if constexpr (M == B_ALL) {
        if (t == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        asm volatile("bar.sync 1, 128;" ::: "memory");
      }
      for (int b = 0; b < 256; b += 16) {
        uint32_t a = smem_addr(smem + (size_t)t * 256 + b);
        asm volatile("st.shared.v4.f32 [%0], {%1, %1, %1, %1};" ::"r"(a), "f"(v) : "memory");
      }
      if constexpr (M == B_ALL) fence_proxy_async();
      asm volatile("bar.sync 1, 128;" ::: "memory");
      if constexpr (M == B_ALL) {
        if (t == 0) {
          bulk_s2g(dst + (size_t)(it & 15) * 32768, smem_addr(smem), 32768u);
          asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
      }
    }
    if constexpr (M == B_FENCE) { fence_proxy_async(); asm volatile("bar.sync 1, 128;" ::: "memory"); }
    if constexpr (M == B_STORE_READ || M == B_STORE_DONE) {
      if (t == 0) {
        bulk_s2g(dst + (size_t)(it & 15) * 32768, smem_addr(smem), 32768u);
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        if constexpr (M == B_STORE_READ) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        else asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
      }
      asm volatile("bar.sync 1, 128;" ::: "memory");
    }
  }
  const long long c1 = clock64();
  if (t == 0) {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    out->c0 = c0; out->c1 = c1; out->sink = (unsigned)v;
  }
}

// contend<K>: shared-memory contention. Warp 0 lane 0 streams 16 KiB bulk copies into its own 4
// stages (self-loop as the producer loops above) from L2-hot tiles (src 1), fresh HBM tiles (src 2)
// or not at all (src 0), until the consumer is done. K = 0: warps 4..7 (a warpgroup) run 128 rounds
// of 8 wgmma.m64n128k16 (both operands in a separate 48 KiB region) + commit + wait; K = 1: warp 4's
// 32 lanes each run 16 ld.shared.v4 a round. cycles_per_round: the consumer's rounds 16..127.
constexpr int CR = 128, CWU = 16;
template <int K>
__global__ void __launch_bounds__(256, 1) contend(Out* out, const uint8_t* src, int srcm, long long* copies) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[4];
  __shared__ volatile int stop;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 4; ++s) mb_init(smem_addr(&full[s]), 1);
    stop = 0;
  }
  __syncthreads();
  uint8_t* region = smem + 4 * 16384;  // the consumer's operands
  if (warp == 0) {
    if (lane != 0 || srcm == 0) return;
    int s = 0, it = 0;
    uint32_t ph = 0;
    for (; !stop && it < 1000000; ++it) {
      if (it >= 4 && !wait_try(smem_addr(&full[s]), ph ^ 1u)) break;
      const uint8_t* sp = srcm == 1 ? src + (size_t)(it & 7) * 16384 : src + (8 + (size_t)(it % 3000)) * 16384;
      mb_arrive_expect_tx(smem_addr(&full[s]), 16384u);
      bulk_g2s(smem_addr(smem + (size_t)s * 16384), sp, 16384u, smem_addr(&full[s]));
      if (++s == 4) { s = 0; ph ^= 1u; }
    }
    // drain: the last use of every stage
    for (int k = 0; k < 4 && k < it; ++k) {
      int n = 0;
      for (int j = k; j < it; j += 4) ++n;
      wait_try(smem_addr(&full[k]), (uint32_t)((n - 1) & 1));
    }
    *copies = it;
  } else if (warp >= 4) {
    if constexpr (K == 1) { if (warp != 4) return; }
    long long c0 = 0;
    float d[64];
    for (int i = 0; i < 64; ++i) d[i] = 0.f;
    unsigned acc = 0;
    const uint32_t a0 = smem_addr(region), b0 = a0 + 16384u;
    for (int r = 0; r < CR; ++r) {
      if (r == CWU) c0 = clock64();
      if constexpr (K == 0) {
        wgmma_fence();
        for (int kk = 0; kk < 8; ++kk)
          wgmma_m64n128k16(d, gmma_desc(a0 + (kk & 3) * 2048u + (kk >> 2) * 8192u, 128, 256), gmma_desc(b0 + (kk & 3) * 4096u, 128, 256), 1);
        wgmma_commit();
        wgmma_wait0();
      } else {
        for (int j = 0; j < 16; ++j) {
          uint32_t x, y, z, w;
          asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a0 + (uint32_t)((j * 32 + lane) * 16)) : "memory");
          acc += x ^ y ^ z ^ w;
        }
      }
    }
    const long long c1 = clock64();
    if (threadIdx.x == 128) { out->c0 = c0; out->c1 = c1; out->sink = acc + (unsigned)d[0]; stop = 1; }
  }
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <int M>
static void run_op(Out* d, const uint8_t* src, int lanes, const CUtensorMap& tm, bool& first) {
  std::vector<double> v;
  int to = 0;
  CK(cudaFuncSetAttribute(ops<M>, cudaFuncAttributeMaxDynamicSharedMemorySize, 160 * 1024));
  for (int rep = 0; rep < 6; ++rep) {
    ops<M><<<1, 32, 160 * 1024>>>(d, src, lanes, tm);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    Out h;
    CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    to += h.timeout;
    if (rep) v.push_back((double)(h.c1 - h.c0) / N);
  }
  printf("%s\n  {\"body\": \"%s\", \"lanes\": %d, \"timeouts\": %d, \"cycles_per_iter\": %.2f, \"min\": %.2f, \"max\": %.2f}", first ? "" : ",",
         OPS[M], lanes, to, median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
  first = false;
  fflush(stdout);
}
template <int M>
static void run_epi(Out* d, uint8_t* dst, bool& first) {
  std::vector<double> v;
  CK(cudaFuncSetAttribute(epi<M>, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  for (int rep = 0; rep < 6; ++rep) {
    epi<M><<<1, 128, 64 * 1024>>>(d, dst);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    Out h;
    CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    if (rep) v.push_back((double)(h.c1 - h.c0) / EN);
  }
  printf("%s\n  {\"body\": \"%s\", \"threads\": 128, \"cycles_per_iter\": %.2f, \"min\": %.2f, \"max\": %.2f}", first ? "" : ",", EPIS[M], median(v),
         *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
  first = false;
  fflush(stdout);
}

template <int M>
static void all_ops(Out* d, const uint8_t* src, const CUtensorMap& tm, bool& first) {
  if constexpr (M < NOPS) {
    run_op<M>(d, src, 1, tm, first);
    if (M < P_BULK) run_op<M>(d, src, 32, tm, first);
    all_ops<M + 1>(d, src, tm, first);
  }
}
template <int M>
static void all_epi(Out* d, uint8_t* dst, bool& first) {
  if constexpr (M < NEPI) {
    run_epi<M>(d, dst, first);
    all_epi<M + 1>(d, dst, first);
  }
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  uint8_t *src, *dst;
  const size_t bytes = 64u << 20;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMemset(src, 0x3c, bytes));
  CK(cudaMalloc(&dst, 16 * 32768));
  CUtensorMap tm = make_tmap_2d(src, 64, 8192, 64, 128);  // bf16 [8192][64], box 64 x 128 = 16 KiB
  Out* d;
  CK(cudaMalloc(&d, sizeof(Out)));
  printf("{\"probe\": \"hw/probes/ops.cu\", \"gpu\": \"%s\",\n \"ops\": {\"note\": \"one loop body per kernel; cycles per iteration over 256 after 16; median of 5 launches\", \"rows\": [", prop.name);
  bool first = true;
  all_ops<0>(d, src, tm, first);
  printf("]},\n \"epilogue\": {\"note\": \"128 threads; cycles per iteration over 64 after 8; median of 5 launches\", \"rows\": [");
  first = true;
  all_epi<0>(d, dst, first);
  printf("]},\n \"contention\": {\"note\": \"consumer rounds 16..127 while warp 0 streams 16 KiB copies into other stages; median of 5 launches\", \"rows\": [");
  first = true;
  long long* dc;
  CK(cudaMalloc(&dc, sizeof(long long)));
  uint8_t* flush;
  CK(cudaMalloc(&flush, 256u << 20));
  for (int K : {0, 1})
    for (int srcm : {0, 1, 2}) {
      std::vector<double> v;
      long long ncopies = 0;
      for (int rep = 0; rep < 6; ++rep) {
        CK(cudaMemset(flush, rep, 256u << 20));
        CK(cudaMemset(dc, 0, sizeof(long long)));
        if (K == 0) {
          CK(cudaFuncSetAttribute(contend<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, 128 * 1024));
          contend<0><<<1, 256, 128 * 1024>>>(d, src, srcm, dc);
        } else {
          CK(cudaFuncSetAttribute(contend<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, 128 * 1024));
          contend<1><<<1, 256, 128 * 1024>>>(d, src, srcm, dc);
        }
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        Out h;
        CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&ncopies, dc, sizeof ncopies, cudaMemcpyDeviceToHost));
        if (rep) v.push_back((double)(h.c1 - h.c0) / (CR - CWU));
      }
      printf("%s\n  {\"consumer\": \"%s\", \"stream\": \"%s\", \"cycles_per_round\": %.2f, \"copies_last_launch\": %lld}", first ? "" : ",",
             K == 0 ? "wgmma_8x_m64n128k16" : "ld_shared_v4_16x", srcm == 0 ? "none" : srcm == 1 ? "l2_hot_16k" : "hbm_16k", median(v), ncopies);
      first = false;
      fflush(stdout);
    }
  printf("]}\n}\n");
  return 0;
}
