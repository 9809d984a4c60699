// mbsim timing probe: thread fences and the cluster barrier's release / relaxed arrive.
// One 2-CTA cluster, one warp per CTA; each loop body is a compile-time kernel, 256 timed
// iterations after 16; cycles_per_iter = (clock64 after - before) / 256 on CTA 0 lane 0, median of
// 5 launches. Bodies: fence.{acq_rel,sc}.{cta,cluster,gpu,sys} alone and after a st.shared, and
// barrier.cluster.arrive{,.relaxed}.aligned + barrier.cluster.wait.aligned (with and without a
// fence.acq_rel.cluster before the relaxed arrive). Prints one JSON object.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>

constexpr int N = 256, WU = 16;
enum { F_EMPTY, F_ACQREL_CTA, F_SC_CTA, F_ACQREL_CLUSTER, F_SC_CLUSTER, F_ACQREL_GPU, F_SC_GPU, F_SC_SYS,
       S_ONLY, S_ACQREL_CTA, S_ACQREL_CLUSTER, S_SC_GPU, C_RELEASE, C_RELAXED, C_FENCE_RELAXED, NOPS };
static const char* NAMES[] = {"empty", "fence.acq_rel.cta", "fence.sc.cta", "fence.acq_rel.cluster", "fence.sc.cluster",
                              "fence.acq_rel.gpu", "fence.sc.gpu", "fence.sc.sys", "st.shared",
                              "st.shared+fence.acq_rel.cta", "st.shared+fence.acq_rel.cluster", "st.shared+fence.sc.gpu",
                              "cluster.arrive.release+wait", "cluster.arrive.relaxed+wait",
                              "fence.acq_rel.cluster+cluster.arrive.relaxed+wait"};

template <int M>
__device__ __forceinline__ void body(volatile unsigned* s, int i) {
  if constexpr (M >= S_ONLY && M <= S_SC_GPU) s[threadIdx.x] = (unsigned)i;
  if constexpr (M == F_ACQREL_CTA || M == S_ACQREL_CTA) asm volatile("fence.acq_rel.cta;" ::: "memory");
  if constexpr (M == F_SC_CTA) asm volatile("fence.sc.cta;" ::: "memory");
  if constexpr (M == F_ACQREL_CLUSTER || M == S_ACQREL_CLUSTER) asm volatile("fence.acq_rel.cluster;" ::: "memory");
  if constexpr (M == F_SC_CLUSTER) asm volatile("fence.sc.cluster;" ::: "memory");
  if constexpr (M == F_ACQREL_GPU) asm volatile("fence.acq_rel.gpu;" ::: "memory");
  if constexpr (M == F_SC_GPU || M == S_SC_GPU) asm volatile("fence.sc.gpu;" ::: "memory");
  if constexpr (M == F_SC_SYS) asm volatile("fence.sc.sys;" ::: "memory");
  if constexpr (M == C_RELEASE) asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  if constexpr (M == C_RELAXED) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  if constexpr (M == C_FENCE_RELAXED) asm volatile("fence.acq_rel.cluster;\n\tbarrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}

template <int M>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(32, 1) probe(long long* out) {
  __shared__ unsigned s[32];
  long long t0 = 0;
  for (int i = 0; i < N + WU; ++i) {
    if (i == WU) t0 = clock64();
    body<M>(s, i);
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) out[blockIdx.x] = t1 - t0;
}

template <int M>
static double run(long long* d) {
  std::vector<double> v;
  for (int r = 0; r < 5; ++r) {
    probe<M><<<2, 32>>>(d);
    long long h[2] = {0, 0};
    if (cudaDeviceSynchronize() != cudaSuccess) return -1;
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    v.push_back((double)h[0] / N);
  }
  std::sort(v.begin(), v.end());
  return v[2];
}

template <int... Ms>
static void all(long long* d, double* r, std::integer_sequence<int, Ms...>) { ((r[Ms] = run<Ms>(d)), ...); }

int main() {
  long long* d;
  cudaMalloc(&d, 2 * sizeof(long long));
  double r[NOPS];
  all(d, r, std::make_integer_sequence<int, NOPS>{});
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  printf("{\"gpu\": \"%s\", \"iterations\": %d, \"launches\": 5, \"rows\": [", p.name, N);
  for (int m = 0; m < NOPS; ++m) printf("%s\n  {\"body\": \"%s\", \"cycles_per_iter\": %.2f}", m ? "," : "", NAMES[m], r[m]);
  printf("\n]}\n");
  return 0;
}
