// (d) A Blackwell (sm_100a) TMA -> tcgen05 pipeline, one 128x128 fp32 tile per CTA: C = A * B^T.
// Compile-only (no Blackwell hardware here): its PTX is committed, there is no host run.
// 192 threads: warp 0's elected thread is the producer (arrive.expect_tx on full[s], two
// tensor-map copies); warp 1 allocates 128 TMEM columns (tcgen05.alloc, then
// relinquish_alloc_permit) and its elected thread issues four tcgen05.mma (M128 N128 K16, bf16,
// f32 accumulator in TMEM) per stage, then tcgen05.commit onto empty[s], which arrives once the
// MMAs have read the stage; after the last k-iteration a commit onto acc_full tells the epilogue
// the accumulator is complete. Warps 2-5 (TMEM lane quarters 2, 3, 0, 1) wait acc_full, load
// their 32 lanes with tcgen05.ld.32x32b.x32, tcgen05.wait::ld, store to global memory; warp 1
// frees the columns after a CTA barrier.
// Sketch: examples/kernels/tcgen05.mbk. Planted bugs (-DBUG=N):
//   1  the MMA thread releases the stage with a plain mbarrier.arrive right after issuing the MMAs
//      instead of tcgen05.commit: the producer refills a stage the tensor core still reads (race)
//   2  no tcgen05.wait::ld: the epilogue stores registers of an unfinished tcgen05.ld
//   3  the epilogue's acc_full wait has its parity off by one: it passes on the fresh barrier and
//      reads the accumulator while the MMAs still write it (race)
#include "common.cuh"

constexpr uint32_t TMEM_COLS = 128;  // 128 lanes x 128 f32 columns: the accumulator

// sm_100 shared-memory descriptor of a K-major operand in the 128B-swizzle layout: start address,
// LBO 16 (unused), SBO 1024, version 1 (bit 46), layout SWIZZLE_128B = 2 in bits 61-63.
__device__ __forceinline__ uint64_t umma_desc_sw128(uint32_t saddr) {
  return (uint64_t)((saddr >> 4) & 0x3FFF) | (1ull << 16) | (64ull << 32) | (1ull << 46) | (2ull << 61);
}
// Instruction descriptor of tcgen05.mma.kind::f16: f32 D (bits 4-5 = 1), bf16 A and B (bits 7-9,
// 10-12 = 1), both K-major, N >> 3 in bits 17-22, M >> 4 in bits 24-28.
constexpr uint32_t IDESC = (1u << 4) | (1u << 7) | (1u << 10) | ((BN >> 3) << 17) | ((BM >> 4) << 24);

__global__ void __launch_bounds__(192, 1)
    tcgen05_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                 float* __restrict__ C, int ldc, int kiters, int stages) {
  __shared__ uint64_t full[MAX_STAGES];
  __shared__ uint64_t empty[MAX_STAGES];
  __shared__ uint64_t acc_full;
  __shared__ uint32_t tmem_base;
  extern __shared__ uint8_t dsmem[];
  const uint32_t base = round_up_1024(smem_addr(dsmem));
  uint8_t* const stage0 = dsmem + (base - smem_addr(dsmem));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 1);  // one tcgen05.commit arrival per phase
    }
    ptx::mbarrier_init(&acc_full, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  if (warp == 1) {
    ptx::tcgen05_alloc(ptx::cta_group_1, &tmem_base, uint32_t(TMEM_COLS));
    ptx::tcgen05_relinquish_alloc_permit(ptx::cta_group_1);
  }
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_base;

  if (warp == 0) {
    if (elect_one()) {
      int s = 0;
      uint32_t phase = 0;
      for (int k = 0; k < kiters; ++k) {
        wait_parity(&empty[s], phase ^ 1);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                       uint32_t(STAGE_BYTES));
        const int32_t ca[2] = {k * BK, m0}, cb[2] = {k * BK, n0};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage0 + s * STAGE_BYTES, &tmA, ca, &full[s]);
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage0 + s * STAGE_BYTES + TILE_A_BYTES, &tmB,
                                  cb, &full[s]);
        if (++s == stages) { s = 0; phase ^= 1; }
      }
    }
  } else if (warp == 1) {
    if (elect_one()) {
      int s = 0;
      uint32_t phase = 0;
      for (int k = 0; k < kiters; ++k) {
        wait_parity(&full[s], phase);
        ptx::tcgen05_fence_after_thread_sync();
        const uint32_t a = base + s * STAGE_BYTES, b = a + TILE_A_BYTES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          ptx::tcgen05_mma(ptx::kind_f16, ptx::cta_group_1, tmem, umma_desc_sw128(a + kk * 32),
                           umma_desc_sw128(b + kk * 32), IDESC, k > 0 || kk > 0);
#if BUG == 1
        ptx::mbarrier_arrive(&empty[s]);  // BUG: the MMAs above may still be reading the stage
#else
        ptx::tcgen05_commit(ptx::cta_group_1, &empty[s]);  // arrives when they have read it
#endif
        if (++s == stages) { s = 0; phase ^= 1; }
      }
      ptx::tcgen05_commit(ptx::cta_group_1, &acc_full);  // the accumulator is complete
    }
  } else {
    const int q = warp % 4;  // TMEM lanes 32q .. 32q + 31 (a warp reaches the quarter warp % 4)
#if BUG == 3
    wait_parity(&acc_full, 1);  // BUG: parity off by one, passes on the fresh barrier
#else
    wait_parity(&acc_full, 0);
#endif
    ptx::tcgen05_fence_after_thread_sync();
    uint32_t v[4][32];
#pragma unroll
    for (int j = 0; j < 4; ++j) ptx::tcgen05_ld_32x32b(v[j], tmem + ((uint32_t)(32 * q) << 16) + 32 * j);
#if BUG != 2
    ptx::tcgen05_wait_ld();
#endif
    const int r = m0 + 32 * q + lane;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int i = 0; i < 32; ++i) C[(size_t)r * ldc + n0 + 32 * j + i] = __uint_as_float(v[j][i]);
  }
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == 1) {
    ptx::tcgen05_fence_after_thread_sync();
    ptx::tcgen05_dealloc(ptx::cta_group_1, tmem, uint32_t(TMEM_COLS));
  }
}
