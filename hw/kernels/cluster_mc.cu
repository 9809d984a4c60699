// (c) The pipeline of tma_wgmma.cu in 2-CTA clusters with TMA multicast. CTA rank r of a cluster
// computes tile blockIdx.x (rows 128 * blockIdx.x ..) of C = A * B^T + bias; both CTAs need the same B
// slice, so each loads its own A box and one half of B (rows 64r .. 64r + 63) and multicasts the
// half into both CTAs' stage (.multicast::cluster, mask 0b11), where it completes the bytes of
// both CTAs' full[s]: full[s] expects A + both B halves = 32 KiB. A stage of CTA r is written by
// both producers, so empty[s] counts the consumer warpgroups of both CTAs (2 x 2 = 4): each
// warpgroup's thread 0 arrives on its own empty[s] and, through mapa, on the peer's
// (mbarrier.arrive.release.cluster.shared::cluster). The barrier inits are published with
// fence.mbarrier_init and a cluster barrier before any copy; a second cluster barrier before the
// exit keeps each CTA alive until the peer's last remote arrives have landed.
// Sketch: examples/kernels/cluster-mc.mbk. Planted bugs (-DBUG=N):
//   1  empty[s] counts only the local consumer warpgroups (2, the multicast factor left out): a
//      producer refills a stage of both CTAs while the peer's consumers still read it (race)
//   2  no cluster barrier before the exit: a CTA may exit while the peer still arrives on its
//      empty barriers (a remote arrive into an exited CTA: undefined)
//   3  no cluster barrier after the inits (only __syncthreads): the peer's multicast copy may
//      signal a full barrier this CTA has not initialized yet (undefined: lost bytes, hang or race)
#include "common.cuh"

#if BUG == 1
constexpr uint32_t EMPTY_COUNT = 2;  // BUG: the local consumer warpgroups only
#else
constexpr uint32_t EMPTY_COUNT = 2 * 2;  // consumer warpgroups x CTAs of the multicast
#endif
constexpr uint32_t HALF_B_BYTES = TILE_B_BYTES / 2;

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
    cluster_mc(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB64,
               const float* __restrict__ bias, float* __restrict__ C, int ldc, int kiters, int stages, unsigned long long* __restrict__ timing) {
  __shared__ uint64_t full[MAX_STAGES];
  __shared__ uint64_t empty[MAX_STAGES];
  extern __shared__ uint8_t dsmem[];
  const uint32_t base = round_up_1024(smem_addr(dsmem));
  uint8_t* const stage0 = dsmem + (base - smem_addr(dsmem));
  const int warp = threadIdx.x / 32, wg = threadIdx.x / 128;
  const uint32_t rank = cluster_rank(), peer = rank ^ 1;
  const int m0 = blockIdx.x * BM;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], uint32_t(EMPTY_COUNT));
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
#if BUG == 3
  __syncthreads();  // BUG: the peer's copies are not ordered after these inits
#else
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
#endif

  if (warp == 0) {
    if (elect_one()) {
      int s = 0;
      uint32_t phase = 0;
      for (int k = 0; k < kiters; ++k) {
        wait_parity_cluster(&empty[s], phase ^ 1);  // released by the consumers of both CTAs
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                       uint32_t(STAGE_BYTES));
        const int32_t ca[2] = {k * BK, m0}, cb[2] = {k * BK, (int)(64 * rank)};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, stage0 + s * STAGE_BYTES, &tmA, ca, &full[s]);
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global,
                                  stage0 + s * STAGE_BYTES + TILE_A_BYTES + rank * HALF_B_BYTES, &tmB64, cb, &full[s],
                                  uint16_t(0b11));
        if (++s == stages) { s = 0; phase ^= 1; }
      }
    }
  } else if (wg >= 1) {
    const int c = wg - 1, t = threadIdx.x - 128 * wg;
    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.f;
    int s = 0;
    uint32_t phase = 0;
    const unsigned long long t0 = clock64();
    for (int k = 0; k < kiters; ++k) {
      wait_parity(&full[s], phase);
      const uint32_t a = base + s * STAGE_BYTES + c * 64 * 128, b = base + s * STAGE_BYTES + TILE_A_BYTES;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64n128k16(acc, gmma_desc_sw128(a + kk * 32), gmma_desc_sw128(b + kk * 32), 1);
      wgmma_commit();
      wgmma_wait0();
      if (t == 0) {
        ptx::mbarrier_arrive(&empty[s]);                     // this CTA's producer
        rmb_arrive_cnt(mapa(smem_addr(&empty[s]), peer), 1);  // the peer's producer, through DSMEM
      }
      if (++s == stages) { s = 0; phase ^= 1; }
    }
    const unsigned long long t1 = clock64();
    if (t == 0 && c == 0) {
      timing[2 * blockIdx.x] = t1 - t0;
      timing[2 * blockIdx.x + 1] = kiters;
    }
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      const int r = m0 + 64 * c + frag_row(t, i), col = frag_col(t, i);
      C[(size_t)r * ldc + col] = acc[i] + bias[col];
    }
  }
#if BUG != 2
  ptx::barrier_cluster_arrive(ptx::sem_release);  // no CTA exits while the peer may still arrive on it
  ptx::barrier_cluster_wait(ptx::sem_acquire);
#endif
}

#ifndef __CUDA_ARCH__
static void run(int stages, int kiters, int ctas, const Problem& p, Device& d, bool timed) {
  const CUtensorMap tA = make_tmap_2d(d.a, p.K, p.M, BK, BM, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap tB = make_tmap_2d(d.b, p.K, p.N, BK, BN / 2, CU_TENSOR_MAP_SWIZZLE_128B);
  const size_t smem = 1024 + (size_t)stages * STAGE_BYTES;
  run_config("cluster_mc", stages, kiters, ctas, ctas, 2, p, d, timed,
             [&] { cluster_mc<<<ctas, 384, smem>>>(tA, tB, d.bias, d.c, p.N, kiters, stages, d.timing); });
}

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(cluster_mc, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024 + MAX_STAGES * STAGE_BYTES));
  int only[4];
  if (parse_only(argc, argv, only)) {  // --only STAGES,KITERS,TILES,CTAS (CTAS even; TILES = CTAS)
    Problem p = make_problem(BM * only[3], BN, BK * only[1], 3);
    Device d = upload(p, only[3]);
    run(only[0], only[1], only[3], p, d, true);
    release(d);
    return 0;
  }
  const int big = sms & ~1;
  const std::vector<std::pair<int, std::vector<int>>> shapes =
      BUG ? std::vector<std::pair<int, std::vector<int>>>{{2, {8}}, {big, {8}}}
          : std::vector<std::pair<int, std::vector<int>>>{{2, {1, 3, 8, 32}}, {big, {8, 32}}};
  for (const auto& [ctas, ks] : shapes)
    for (int kiters : ks) {
      Problem p = make_problem(BM * ctas, BN, BK * kiters, 3 + kiters);
      Device d = upload(p, ctas);
      for (int stages : BUG ? std::vector<int>{2, 4} : std::vector<int>{2, 3, 4, 6}) run(stages, kiters, ctas, p, d, !BUG);
      release(d);
    }
  return 0;
}
#endif
