// Shared pieces of mbsim's reference kernels (hw/kernels/*.cu): the bounded or unbounded parity
// wait, elect.sync, the 128-byte-swizzle shared-memory descriptors, and the host side (operands,
// CPU reference, verification, JSON, one configuration's run: run_config). Tensor maps, wgmma and
// the inline-PTX helpers come from the probes' headers (hw/probes/tmap.cuh, hw/probes/ptx.cuh).
//
// Macros: BUG (0: the correct kernel; 1..3: a planted bug, see each .cu and hw/kernels/README.md),
// WATCHDOG (1: every mbarrier wait gives up after WATCHDOG_NS and sets g_watchdog, so a kernel
// with a hang bug finishes and reports it; 0: the plain spin a production kernel has). The
// committed PTX is built with WATCHDOG=0.
#pragma once
#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include "../probes/tmap.cuh"

#ifndef BUG
#define BUG 0
#endif
#ifndef WATCHDOG
#define WATCHDOG 0
#endif
#ifndef WATCHDOG_NS
#define WATCHDOG_NS 200000000ull  // 0.2 s per wait
#endif

namespace ptx = cuda::ptx;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

// Tile geometry shared by every kernel: a 128x128 fp32 output tile, 64-wide (128-byte) K slices of
// bf16 A [M][K] and B [N][K] (both K-major), one slice of each per pipeline stage.
constexpr int BM = 128, BN = 128, BK = 64;
constexpr uint32_t TILE_A_BYTES = BM * BK * 2;  // 16 KiB
constexpr uint32_t TILE_B_BYTES = BN * BK * 2;  // 16 KiB
constexpr uint32_t STAGE_BYTES = TILE_A_BYTES + TILE_B_BYTES;
constexpr int MAX_STAGES = 6;

__device__ unsigned int g_watchdog;  // set by a wait that timed out (WATCHDOG=1 builds)

// Wait until the phase with parity `parity` of the mbarrier at `bar` has completed
// (mbarrier.try_wait.parity in a retry loop, PTX ISA 9.7.13.15.16).
__device__ __forceinline__ void wait_parity(uint64_t* bar, uint32_t parity) {
#if WATCHDOG
  if (*(volatile unsigned int*)&g_watchdog) return;
  const uint64_t t0 = globaltimer();
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
    if (globaltimer() - t0 > WATCHDOG_NS) { atomicExch(&g_watchdog, 1u); return; }
  }
#else
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
#endif
}

// The same wait at cluster scope (a phase completed by remote arrivals: mbarrier.try_wait.parity
// .acquire.cluster).
__device__ __forceinline__ void wait_parity_cluster(uint64_t* bar, uint32_t parity) {
#if WATCHDOG
  if (*(volatile unsigned int*)&g_watchdog) return;
  const uint64_t t0 = globaltimer();
  while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, bar, parity)) {
    if (globaltimer() - t0 > WATCHDOG_NS) { atomicExch(&g_watchdog, 1u); return; }
  }
#else
  while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, bar, parity)) {
  }
#endif
}

// elect.sync: true on one lane of the (fully active) warp.
__device__ __forceinline__ bool elect_one() {
  uint32_t pred;
  asm volatile(
      "{\n.reg .pred p;\n.reg .b32 r;\nelect.sync r|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(pred));
  return pred != 0;
}

// sm_90 wgmma shared-memory descriptor of a K-major operand written by a 128B-swizzle tensor map:
// start address, LBO 16 (unused by swizzled K-major layouts), SBO 1024 (eight 128-byte rows),
// layout type 1 (128B swizzle) in bits 62-63. The base must be 1024-byte aligned; a K step inside
// the 128-byte row advances the start address by 32 bytes (16 bf16).
__device__ __forceinline__ uint64_t gmma_desc_sw128(uint32_t saddr) {
  return gmma_desc(saddr, 16, 1024) | (1ull << 62);
}

__device__ __forceinline__ uint32_t round_up_1024(uint32_t a) { return (a + 1023u) & ~1023u; }

// wgmma D fragment of m64nNk16 (f32): register i of thread t of the warpgroup holds row
// 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2 * (t % 4) + i % 2.
__device__ __forceinline__ int frag_row(int t, int i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i >> 1) & 1); }
__device__ __forceinline__ int frag_col(int t, int i) { return 8 * (i >> 2) + 2 * (t % 4) + (i & 1); }

#ifndef __CUDA_ARCH__
// ---------------------------------------------------------------- host side
// Operands are small integers (-2..2) in bf16, so every fp32 sum is exact and the check is
// bit-exact: any stage read too early or overwritten shows as a mismatch.
struct Problem {
  int M, N, K;
  std::vector<__nv_bfloat16> a, b;  // A [M][K], B [N][K]
  std::vector<float> bias, ref;     // bias [N], ref [M][N] = A * B^T + bias
};

static Problem make_problem(int M, int N, int K, unsigned seed) {
  Problem p{M, N, K, {}, {}, {}, {}};
  p.a.resize((size_t)M * K);
  p.b.resize((size_t)N * K);
  p.bias.resize(N);
  std::vector<float> fa((size_t)M * K), fb((size_t)N * K);
  unsigned s = seed;
  auto rnd = [&]() { s = s * 1664525u + 1013904223u; return (int)((s >> 16) % 5) - 2; };
  for (size_t i = 0; i < fa.size(); ++i) { fa[i] = (float)rnd(); p.a[i] = __float2bfloat16(fa[i]); }
  for (size_t i = 0; i < fb.size(); ++i) { fb[i] = (float)rnd(); p.b[i] = __float2bfloat16(fb[i]); }
  for (int n = 0; n < N; ++n) p.bias[n] = (float)(n % 7);
  p.ref.assign((size_t)M * N, 0.f);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      const float* ra = &fa[(size_t)m * K];
      const float* rb = &fb[(size_t)n * K];
      float acc = 0.f;
      for (int k = 0; k < K; ++k) acc += ra[k] * rb[k];
      p.ref[(size_t)m * N + n] = acc + p.bias[n];
    }
  return p;
}

struct Device {
  __nv_bfloat16 *a = nullptr, *b = nullptr;
  float *bias = nullptr, *c = nullptr;
  unsigned long long* timing = nullptr;  // per CTA: mainloop cycles, k-iterations
};

static Device upload(const Problem& p, int ctas) {
  Device d;
  CK(cudaMalloc(&d.a, p.a.size() * 2));
  CK(cudaMalloc(&d.b, p.b.size() * 2));
  CK(cudaMalloc(&d.bias, p.bias.size() * 4));
  CK(cudaMalloc(&d.c, (size_t)p.M * p.N * 4));
  CK(cudaMalloc(&d.timing, (size_t)ctas * 2 * 8));
  CK(cudaMemcpy(d.a, p.a.data(), p.a.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.b, p.b.data(), p.b.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.bias, p.bias.data(), p.bias.size() * 4, cudaMemcpyHostToDevice));
  return d;
}

static void release(Device& d) {
  cudaFree(d.a); cudaFree(d.b); cudaFree(d.bias); cudaFree(d.c); cudaFree(d.timing);
}

static void reset_outputs(const Device& d, const Problem& p, int ctas) {
  CK(cudaMemset(d.c, 0xff, (size_t)p.M * p.N * 4));  // NaN: an unwritten element never matches
  CK(cudaMemset(d.timing, 0, (size_t)ctas * 2 * 8));
  unsigned int zero = 0;
  CK(cudaMemcpyToSymbol(g_watchdog, &zero, sizeof zero));
}

struct Outcome {
  long mismatches = 0;
  double max_err = 0;
  unsigned watchdog = 0;
  double cycles_per_k = 0;  // median over CTAs of (mainloop cycles / k-iterations)
};

static Outcome collect(const Device& d, const Problem& p, int ctas) {
  Outcome o;
  std::vector<float> c((size_t)p.M * p.N);
  CK(cudaMemcpy(c.data(), d.c, c.size() * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < c.size(); ++i) {
    const double e = std::fabs((double)c[i] - (double)p.ref[i]);
    if (!(e == 0.0)) { ++o.mismatches; o.max_err = std::isnan(e) ? INFINITY : std::max(o.max_err, e); }
  }
  std::vector<unsigned long long> t((size_t)ctas * 2);
  CK(cudaMemcpy(t.data(), d.timing, t.size() * 8, cudaMemcpyDeviceToHost));
  std::vector<double> per;
  for (int i = 0; i < ctas; ++i)
    if (t[2 * i + 1]) per.push_back((double)t[2 * i] / (double)t[2 * i + 1]);
  if (!per.empty()) { std::sort(per.begin(), per.end()); o.cycles_per_k = per[per.size() / 2]; }
  CK(cudaMemcpyFromSymbol(&o.watchdog, g_watchdog, sizeof o.watchdog));
  return o;
}

// One JSON line per configuration (schema: hw/kernels/README.md).
static void print_json(const char* kernel, int stages, int kiters, int tiles, int ctas, int cluster, const Outcome& o,
                       float ms, const Problem& p) {
  const double flops = 2.0 * p.M * p.N * p.K;
  printf("{\"kernel\": \"%s\", \"bug\": %d, \"stages\": %d, \"k_iters\": %d, \"tiles\": %d, \"ctas\": %d, \"cluster\": %d, "
         "\"m\": %d, \"n\": %d, \"k\": %d, \"ok\": %s, \"mismatches\": %ld, \"max_abs_err\": %g, \"watchdog\": %u, "
         "\"cycles_per_k_iter\": %.1f, \"ms\": %.4f, \"tflops\": %.2f}\n",
         kernel, BUG, stages, kiters, tiles, ctas, cluster, p.M, p.N, p.K,
         (o.mismatches == 0 && !o.watchdog) ? "true" : "false", o.mismatches, std::isinf(o.max_err) ? -1.0 : o.max_err,
         o.watchdog, o.cycles_per_k, ms, ms > 0 ? flops / (ms * 1e9) : 0.0);
  fflush(stdout);
}

// Parses "--only S,K,TILES,CTAS" (one configuration) from argv; returns false if absent.
static bool parse_only(int argc, char** argv, int (&cfg)[4]) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], "--only"))
      return sscanf(argv[i + 1], "%d,%d,%d,%d", &cfg[0], &cfg[1], &cfg[2], &cfg[3]) == 4;
  return false;
}

// Runs one configuration: clears the outputs, launches once (`launch()` issues the kernel), checks
// the launch and collects the outcome; then, when `timed` and no watchdog fired, times 10 more
// launches with CUDA events (the mean in ms) and prints the configuration's JSON line.
template <class Launch>
static void run_config(const char* kernel, int stages, int kiters, int tiles, int ctas, int cluster, const Problem& p, Device& d,
                       bool timed, Launch launch) {
  reset_outputs(d, p, ctas);
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const Outcome o = collect(d, p, ctas);
  float ms = 0;
  if (timed && !o.watchdog) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    for (int r = 0; r < 10; ++r) launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    ms /= 10;
  }
  print_json(kernel, stages, kiters, tiles, ctas, cluster, o, ms, p);
}
#endif
