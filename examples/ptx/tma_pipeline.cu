// A two-stage TMA pipeline: one producer thread issues cp.async.bulk.tensor loads that signal
// full barriers (expect_tx + complete_tx), consumers wait with try_wait.parity loops and release
// the stage on an empty barrier. Uses CCCL's cuda::ptx and cuda::barrier.
#include <cuda.h>
#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda/std/utility>

namespace ptx = cuda::ptx;
using barrier = cuda::barrier<cuda::thread_scope_block>;

constexpr int STAGES = 2;
constexpr int TILE = 64;

__device__ inline void wait_parity(uint64_t* bar, uint32_t parity) {
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

__global__ void tma_pipeline(const __grid_constant__ CUtensorMap tmap, float* out, int tiles) {
  __shared__ alignas(128) float buf[STAGES][TILE * TILE];
  __shared__ uint64_t full[STAGES];
  __shared__ uint64_t empty[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], blockDim.x - 32);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      for (int t = 0; t < tiles; ++t) {
        int s = t % STAGES;
        if (t >= STAGES) wait_parity(&empty[s], ((t / STAGES) - 1) & 1);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                       sizeof(buf[0]));
        int32_t coords[2] = {0, t * TILE};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, buf[s], &tmap, coords, &full[s]);
      }
    }
  } else {
    float acc = 0.f;
    for (int t = 0; t < tiles; ++t) {
      int s = t % STAGES;
      wait_parity(&full[s], (t / STAGES) & 1);
      acc += buf[s][threadIdx.x];
      ptx::mbarrier_arrive(&empty[s]);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  }
}

// The same ring with cuda::barrier and cuda::device::memcpy_async_tx (1-D bulk copies).
__global__ void barrier_ring(const float* __restrict__ in, float* out, int tiles) {
  __shared__ alignas(128) float buf[STAGES][1024];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bars[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) init(&bars[s], blockDim.x);
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  float acc = 0.f;
  for (int t = 0; t < tiles; ++t) {
    int s = t % STAGES;
    barrier::arrival_token tok;
    if (threadIdx.x == 0) {
      cuda::device::memcpy_async_tx(buf[s], in + t * 1024, cuda::aligned_size_t<16>(sizeof(buf[s])), bars[s]);
      tok = cuda::device::barrier_arrive_tx(bars[s], 1, sizeof(buf[s]));
    } else {
      tok = bars[s].arrive();
    }
    bars[s].wait(cuda::std::move(tok));
    acc += buf[s][threadIdx.x % 1024];
    __syncthreads();
  }
  out[threadIdx.x] = acc;
}
