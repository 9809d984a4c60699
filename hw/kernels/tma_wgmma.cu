// (a) TMA -> wgmma full/empty pipeline, one 128x128 fp32 tile per CTA: C = A * B^T + bias.
// 384 threads: warpgroup 0 is the producer (its warp 0's elected thread issues the bias bulk copy
// and, per k-iteration, arrive.expect_tx on full[s] and two tensor-map copies into stage s);
// warpgroups 1 and 2 are consumers (rows 0-63 and 64-127): wait full[s] with try_wait.parity,
// four wgmma.mma_async m64n128k16 on the stage (both operands in shared memory), commit, wait,
// then every consumer thread arrives on empty[s] (count 256). Parity flips each time the stage
// index wraps. Epilogue: wait for the bias, store the accumulators to global memory.
// Sketch: examples/kernels/tma-wgmma.mbk. Planted bugs (-DBUG=N):
//   1  expect_tx counts 1 KiB more than the two copies deliver: full[0] never completes (hang)
//   2  empty[s] initialized for 128 arrivals, half the consumers: a stage is released while the
//      other warpgroup's wgmma still reads it (race; or a hang when both halves land in one phase)
//   3  the consumers' start parity off by one: their first wait passes on the fresh barrier and
//      wgmma reads a stage no copy has filled yet (race)
#include "common.cuh"

#pragma nv_diag_suppress static_var_with_dynamic_init

#if BUG == 1
constexpr uint32_t FULL_TX = STAGE_BYTES + 1024;  // BUG: 1 KiB more than the two boxes
#else
constexpr uint32_t FULL_TX = STAGE_BYTES;
#endif
#if BUG == 2
constexpr uint32_t EMPTY_COUNT = 128;  // BUG: one warpgroup's threads; 256 arrive
#else
constexpr uint32_t EMPTY_COUNT = 256;  // every thread of both consumer warpgroups
#endif

__global__ void __launch_bounds__(384, 1)
    tma_wgmma(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
              const float* __restrict__ bias, float* __restrict__ C, int ldc, int kiters, int stages,
              unsigned long long* __restrict__ timing) {
  __shared__ uint64_t full[MAX_STAGES];
  __shared__ block_barrier empty[MAX_STAGES];
  __shared__ block_barrier bias_ready;
  __shared__ alignas(16) float bias_s[BN];
  extern __shared__ uint8_t dsmem[];
  const uint32_t base = round_up_1024(smem_addr(dsmem));  // stage s: A at base + s * 32 KiB, B 16 KiB later
  uint8_t* const stage0 = dsmem + (base - smem_addr(dsmem));
  const int warp = threadIdx.x / 32, wg = threadIdx.x / 128;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      init(&empty[s], ptrdiff_t(EMPTY_COUNT));
    }
    init(&bias_ready, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();

  if (warp == 0) {
    if (elect_one()) {
      cuda::device::memcpy_async_tx(bias_s, bias + n0, cuda::aligned_size_t<16>(BN * 4), bias_ready);
      auto tok = cuda::device::barrier_arrive_tx(bias_ready, 1, BN * 4);
      (void)tok;
      int s = 0;
      uint32_t phase = 0;
      for (int k = 0; k < kiters; ++k) {
        wait_parity(cuda::device::barrier_native_handle(empty[s]), phase ^ 1);  // first pass: fresh, passes
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s], uint32_t(FULL_TX));
        const int32_t ca[2] = {k * BK, m0}, cb[2] = {k * BK, n0};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage0 + s * STAGE_BYTES, &tmA, ca, &full[s]);
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage0 + s * STAGE_BYTES + TILE_A_BYTES, &tmB,
                                  cb, &full[s]);
        if (++s == stages) { s = 0; phase ^= 1; }
      }
    }
  } else if (wg >= 1) {
    const int c = wg - 1, t = threadIdx.x - 128 * wg;  // consumer c owns rows 64c .. 64c + 63
    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.f;
    int s = 0;
    uint32_t phase = 0;
    const unsigned long long t0 = clock64();
    for (int k = 0; k < kiters; ++k) {
#if BUG == 3
      wait_parity(&full[s], phase ^ 1);  // BUG: start parity off by one
#else
      wait_parity(&full[s], phase);
#endif
      const uint32_t a = base + s * STAGE_BYTES + c * 64 * 128, b = base + s * STAGE_BYTES + TILE_A_BYTES;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64n128k16(acc, gmma_desc_sw128(a + kk * 32), gmma_desc_sw128(b + kk * 32), 1);
      wgmma_commit();
      wgmma_wait0();
      auto tok = empty[s].arrive();  // mbarrier.arrive: this thread is done reading stage s
      (void)tok;
      if (++s == stages) { s = 0; phase ^= 1; }
    }
    const unsigned long long t1 = clock64();
    if (t == 0 && c == 0) {
      const int cta = blockIdx.y * gridDim.x + blockIdx.x;
      timing[2 * cta] = t1 - t0;
      timing[2 * cta + 1] = kiters;
    }
    wait_parity(cuda::device::barrier_native_handle(bias_ready), 0);
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      const int r = m0 + 64 * c + frag_row(t, i), col = frag_col(t, i);
      C[(size_t)r * ldc + n0 + col] = acc[i] + bias_s[col];
    }
  }
}

#ifndef __CUDA_ARCH__
static void run(int stages, int kiters, int ctas, const Problem& p, Device& d, bool timed) {
  const CUtensorMap tA = make_tmap_2d(d.a, p.K, p.M, BK, BM, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap tB = make_tmap_2d(d.b, p.K, p.N, BK, BN, CU_TENSOR_MAP_SWIZZLE_128B);
  const size_t smem = 1024 + (size_t)stages * STAGE_BYTES;
  const dim3 grid(p.M / BM, p.N / BN);
  run_config("tma_wgmma", stages, kiters, ctas, ctas, 1, p, d, timed,
             [&] { tma_wgmma<<<grid, 384, smem>>>(tA, tB, d.bias, d.c, p.N, kiters, stages, d.timing); });
}

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(tma_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024 + MAX_STAGES * STAGE_BYTES));
  int only[4];
  if (parse_only(argc, argv, only)) {  // --only STAGES,KITERS,TILES,CTAS (TILES = CTAS here)
    Problem p = make_problem(BM * only[3], BN, BK * only[1], 1);
    Device d = upload(p, only[3]);
    run(only[0], only[1], only[3], p, d, true);
    release(d);
    return 0;
  }
  const std::vector<std::pair<int, std::vector<int>>> shapes =
      BUG ? std::vector<std::pair<int, std::vector<int>>>{{1, {8}}, {sms, {8}}}
          : std::vector<std::pair<int, std::vector<int>>>{{1, {1, 3, 8, 32}}, {sms, {8, 32}}};
  for (const auto& [ctas, ks] : shapes)
    for (int kiters : ks) {
      Problem p = make_problem(BM * ctas, BN, BK * kiters, 1 + kiters);
      Device d = upload(p, ctas);
      for (int stages : BUG ? std::vector<int>{2, 4} : std::vector<int>{2, 3, 4, 6}) run(stages, kiters, ctas, p, d, !BUG);
      release(d);
    }
  return 0;
}
#endif
