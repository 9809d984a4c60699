// (b) The pipeline of tma_wgmma.cu made persistent: each CTA loops over output tiles
// blockIdx.x, blockIdx.x + gridDim.x, ... below num_tiles (a kernel parameter: the trip count),
// tile t being rows 128t .. 128t + 127 of C (N = 128). The producer's and the consumers' stage
// index and parity run on across tiles, so the producer fills the next tile's stages while the
// consumers store the previous tile. The bias is loaded once (memcpy_async_tx, one phase).
// Sketch: examples/kernels/persistent.mbk. Planted bugs (-DBUG=N):
//   1  the consumers restart their pipeline state (stage 0, parity 0) at every tile while the
//      producer's runs on: whenever K is not a multiple of 2S the consumers wait on the wrong
//      phases (race on the stages, or a hang)
//   2  the consumers issue the stage's wgmma before waiting on full[s]: a read of the stage before
//      the wait (race with the copy that fills it)
//   3  the consumers' tile loop runs to t <= num_tiles, one tile more than the producer loads:
//      the last wait of the CTAs that get the extra tile never completes (hang)
#include "common.cuh"

#pragma nv_diag_suppress static_var_with_dynamic_init

__global__ void __launch_bounds__(384, 1)
    persistent(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
               const float* __restrict__ bias, float* __restrict__ C, int M, int ldc, int kiters, int stages,
               int num_tiles, unsigned long long* __restrict__ timing) {
  __shared__ uint64_t full[MAX_STAGES];
  __shared__ block_barrier empty[MAX_STAGES];
  __shared__ block_barrier bias_ready;
  __shared__ alignas(16) float bias_s[BN];
  extern __shared__ uint8_t dsmem[];
  const uint32_t base = round_up_1024(smem_addr(dsmem));
  uint8_t* const stage0 = dsmem + (base - smem_addr(dsmem));
  const int warp = threadIdx.x / 32, wg = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      init(&empty[s], 256);
    }
    init(&bias_ready, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();

  if (warp == 0) {
    if (elect_one()) {
      cuda::device::memcpy_async_tx(bias_s, bias, cuda::aligned_size_t<16>(BN * 4), bias_ready);
      auto tok = cuda::device::barrier_arrive_tx(bias_ready, 1, BN * 4);
      (void)tok;
      int s = 0;
      uint32_t phase = 0;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        for (int k = 0; k < kiters; ++k) {
          wait_parity(cuda::device::barrier_native_handle(empty[s]), phase ^ 1);
          ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                         uint32_t(STAGE_BYTES));
          const int32_t ca[2] = {k * BK, tile * BM}, cb[2] = {k * BK, 0};
          ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage0 + s * STAGE_BYTES, &tmA, ca, &full[s]);
          ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage0 + s * STAGE_BYTES + TILE_A_BYTES, &tmB,
                                    cb, &full[s]);
          if (++s == stages) { s = 0; phase ^= 1; }
        }
      }
    }
  } else if (wg >= 1) {
    const int c = wg - 1, t = threadIdx.x - 128 * wg;
    int s = 0;
    uint32_t phase = 0;
    unsigned long long cycles = 0, kdone = 0;
    wait_parity(cuda::device::barrier_native_handle(bias_ready), 0);
#if BUG == 3
    for (int tile = blockIdx.x; tile <= num_tiles; tile += gridDim.x) {  // BUG: one tile past the producer's loop
#else
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
#endif
#if BUG == 1
      s = 0;  // BUG: the pipeline state restarts at every tile
      phase = 0;
#endif
      float acc[64];
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[i] = 0.f;
      const unsigned long long t0 = clock64();
      for (int k = 0; k < kiters; ++k) {
        const uint32_t a = base + s * STAGE_BYTES + c * 64 * 128, b = base + s * STAGE_BYTES + TILE_A_BYTES;
#if BUG != 2
        wait_parity(&full[s], phase);
#endif
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          wgmma_m64n128k16(acc, gmma_desc_sw128(a + kk * 32), gmma_desc_sw128(b + kk * 32), 1);
#if BUG == 2
        wait_parity(&full[s], phase);  // BUG: the wgmma above already reads the stage
#endif
        wgmma_commit();
        wgmma_wait0();
        auto tok = empty[s].arrive();
        (void)tok;
        if (++s == stages) { s = 0; phase ^= 1; }
      }
      cycles += clock64() - t0;
      kdone += kiters;
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        const int r = tile * BM + 64 * c + frag_row(t, i), col = frag_col(t, i);
        if (r < M) C[(size_t)r * ldc + col] = acc[i] + bias_s[col];
      }
    }
    if (t == 0 && c == 0) {
      timing[2 * blockIdx.x] = cycles;
      timing[2 * blockIdx.x + 1] = kdone;
    }
  }
}

#ifndef __CUDA_ARCH__
static void run(int stages, int kiters, int tiles, int ctas, const Problem& p, Device& d, bool timed) {
  const CUtensorMap tA = make_tmap_2d(d.a, p.K, p.M, BK, BM, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap tB = make_tmap_2d(d.b, p.K, p.N, BK, BN, CU_TENSOR_MAP_SWIZZLE_128B);
  const size_t smem = 1024 + (size_t)stages * STAGE_BYTES;
  run_config("persistent", stages, kiters, tiles, ctas, 1, p, d, timed,
             [&] { persistent<<<ctas, 384, smem>>>(tA, tB, d.bias, d.c, p.M, p.N, kiters, stages, tiles, d.timing); });
}

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(persistent, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024 + MAX_STAGES * STAGE_BYTES));
  struct Shape { int ctas, tiles, kiters; };
  std::vector<Shape> shapes;
  int only[4];
  const bool one = parse_only(argc, argv, only);  // --only STAGES,KITERS,TILES,CTAS
  if (one) shapes = {{only[3], only[2], only[1]}};
  else if (BUG) shapes = {{1, 3, 3}, {2, 5, 5}};
  else shapes = {{1, 1, 8}, {1, 4, 3}, {1, 4, 8}, {2, 5, 5}, {sms, 2 * sms, 8}, {sms, 2 * sms + 3, 16}};
  for (const Shape& sh : shapes) {
    Problem p = make_problem(BM * sh.tiles, BN, BK * sh.kiters, 7 + sh.kiters);
    Device d = upload(p, sh.ctas);
    const std::vector<int> st = one ? std::vector<int>{only[0]} : BUG ? std::vector<int>{2, 4} : std::vector<int>{2, 3, 4, 6};
    for (int stages : st) run(stages, sh.kiters, sh.tiles, sh.ctas, p, d, !BUG);
    release(d);
  }
  return 0;
}
#endif
