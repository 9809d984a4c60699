// mbsim timing probe: items 5 and 6 of docs/HARDWARE.md "Not yet measured". Prints one JSON
// object with two arrays.
//
// Both families run one kernel, `pipe`: NCTA CTAs (one per SM by its shared memory) of two warps.
// Warp 0 lane 0 is the producer: for each iteration it waits on empty[s] (bounded try_wait, from
// iteration S on), then arrive.expect_tx(full[s], stage bytes) and NC copies into stage s. Warp 1
// is the consumer: all 32 lanes wait on full[s] (try_wait.parity), __syncwarp, lane 0 arrives on
// empty[s] (count 1); no other work. Records, per CTA: the consumer's clock64 at iteration WARM and
// at the last (loop = cycles an iteration), and the producer's own work an iteration, from its wait
// on empty[s] passing to its last copy issued (busy, clock64 to clock64, iterations WARM..ITERS-2).
// Medians over CTAs, then over 3 launches after a warm-up launch; before every launch of an HBM
// configuration a 256 MiB memset evicts L2.
//
// stride (item 5, `tmaHbmStridedRowsPct`): one 16 KiB copy a stage from HBM, each CTA its own fresh
//   rows: a bulk copy of 16 KiB contiguous bytes (`bulk`), or a 2D tensor box of 128 rows x 128 B
//   (64 bf16) from a tensor whose rows are PITCH bytes apart (128: the box is 16 KiB contiguous;
//   256, 1024, 40960: strided rows). The box walks the row's 128-byte chunks first, then the next
//   128 rows (the k-loop of a GEMM mainloop's A operand). With `b`: a second 16 KiB box a stage, the
//   same for every CTA, from an L2-resident tensor of 8 tiles (the mainloop's shared B operand).
//   1 and NSM CTAs, S = 4.
// copies (item 6, `issueCopyFollowing` and the run-time divisions): one CTA, S = 4, NC = 1, 2 or 3
//   copies of 4, 8 or 16 KiB a stage from 8 shared L2 tiles, bulk or tensor (box 64 bf16 x
//   bytes/128 rows); the source tile of copy j is (it * NC + j) & 7 (div 0) or (it * NC + j) % nt
//   with nt a run-time 8 (div 1: one run-time division a copy).
//
// Build and run (from the repository root): bash hw/run_plan4.sh
#include <algorithm>
#include <string>
#include <vector>
#include "tmap.cuh"
#include "bounded.cuh"

constexpr int ITERS = 400, WARM = 80, SMAX = 4;

struct PP {
  int S, NC, bytes;  // stages, copies a stage, bytes a copy
  int kind;          // 0 bulk, 1 tensor
  int src;           // 0 shared L2 (8 tiles), 1 fresh HBM rows of the CTA's own
  int pitch;         // tensor rows' pitch in bytes (stride family)
  int rowsPerCta;    // tensor rows owned by each CTA (stride family)
  int withB;         // a second box from the shared L2 tensor tb
  int div, nt;       // run-time division of the source index (copies family)
};
struct POut { long long c0, c1, busy; int timeout; };

__device__ __forceinline__ long long clk() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

__global__ void __launch_bounds__(64, 1)
pipe(POut* outs, const uint8_t* src, PP P, const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full[SMAX], empty[SMAX];
  POut* out = outs + blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int stage = P.NC * P.bytes + (P.withB ? 16384 : 0);
  if (threadIdx.x == 0) {
    for (int s = 0; s < P.S; ++s) { mb_init(smem_addr(&full[s]), 1); mb_init(smem_addr(&empty[s]), 1); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    out->timeout = 0;
  }
  __syncthreads();
  if (warp == 0) {
    if (lane != 0) return;
    const int chunks = P.pitch / 128;  // 128-byte chunks a row (stride family)
    int s = 0;
    uint32_t ph = 0;
    long long busy = 0;
    for (int it = 0; it < ITERS; ++it) {
      if (it >= P.S && !wait_try(smem_addr(&empty[s]), ph ^ 1u)) { out->timeout = 1; break; }
      const long long b0 = clk();
      const uint32_t st = smem_addr(smem + (size_t)s * stage), fb = smem_addr(&full[s]);
      mb_arrive_expect_tx(fb, (uint32_t)stage);
      for (int j = 0; j < P.NC; ++j) {
        const uint32_t d = st + (uint32_t)(j * P.bytes);
        if (P.src == 1) {  // stride family: the CTA's own fresh HBM rows
          if (P.kind == 0) {
            bulk_g2s(d, src + ((size_t)blockIdx.x * ITERS + it) * (size_t)P.bytes, (uint32_t)P.bytes, fb);
          } else {
            const int x = (it % chunks) * 64, y = (int)blockIdx.x * P.rowsPerCta + (it / chunks) * 128;
            tensor_g2s(d, &ta, x, y, fb);
          }
        } else {  // copies family: 8 shared L2 tiles
          const int c = it * P.NC + j;
          const int n = P.div ? c % P.nt : c & 7;
          if (P.kind == 0) bulk_g2s(d, src + (size_t)n * P.bytes, (uint32_t)P.bytes, fb);
          else tensor_g2s(d, &ta, 0, n * (P.bytes / 128), fb);
        }
      }
      if (P.withB) tensor_g2s(st + (uint32_t)(P.NC * P.bytes), &tb, 0, (it & 7) * 128, fb);
      if (it >= WARM && it < ITERS - 1) busy += clk() - b0;
      if (++s == P.S) { s = 0; ph ^= 1u; }
    }
    out->busy = busy;
  } else {
    int s = 0;
    uint32_t ph = 0;
    long long c0 = 0;
    for (int it = 0; it < ITERS; ++it) {
      const bool ok = wait_try(smem_addr(&full[s]), ph);
      if (!__all_sync(0xffffffffu, ok)) { if (lane == 0) out->timeout = 1; break; }
      __syncwarp();
      if (lane == 0) {
        if (it == WARM) c0 = clk();
        if (it == ITERS - 1) { out->c0 = c0; out->c1 = clk(); }
        mb_arrive(smem_addr(&empty[s]));
      }
      if (++s == P.S) { s = 0; ph ^= 1u; }
    }
  }
}

static double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct PC { const char* family; const char* name; int ctas; PP p; };

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int nsm = prop.multiProcessorCount;
  // stride family: each CTA reads ITERS x 16 KiB; at pitch P its rows are 128 x ceil(ITERS / (P / 128))
  auto rowsPerCta = [](int pitch) { const int ch = pitch / 128; return 128 * ((ITERS + ch - 1) / ch); };
  size_t big = (size_t)nsm * ITERS * 16384;
  for (int pitch : {128, 256, 1024, 40960}) big = std::max(big, (size_t)nsm * rowsPerCta(pitch) * pitch);
  const size_t flushBytes = (size_t)256 << 20, l2Bytes = 8 * 3 * 16384;
  uint8_t *hbm, *l2, *flush;
  CK(cudaMalloc(&hbm, big));
  CK(cudaMalloc(&l2, l2Bytes));
  CK(cudaMalloc(&flush, flushBytes));
  CK(cudaMemset(hbm, 1, big));
  CK(cudaMemset(l2, 1, l2Bytes));
  POut* d;
  CK(cudaMalloc(&d, sizeof(POut) * nsm));
  std::vector<POut> h(nsm);
  CK(cudaFuncSetAttribute(pipe, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  const CUtensorMap tbL2 = make_tmap_2d(l2, 64, 8 * 128, 64, 128);
  std::vector<PC> cs;
  for (int n : {1, nsm}) {
    for (int b : {0, 1}) {
      cs.push_back({"stride", "bulk", n, {4, 1, 16384, 0, 1, 128, 0, b, 0, 8}});
      for (int pitch : {128, 256, 1024, 40960}) cs.push_back({"stride", "tensor", n, {4, 1, 16384, 1, 1, pitch, rowsPerCta(pitch), b, 0, 8}});
    }
  }
  for (int kind : {0, 1})
    for (int bytes : {4096, 8192, 16384})
      for (int nc : {1, 2, 3})
        for (int dv : {0, 1}) cs.push_back({"copies", kind ? "tensor" : "bulk", 1, {4, nc, bytes, kind, 0, 128, 0, 0, dv, 8}});
  printf("{\"probe\": \"hw/probes/plan4.cu\", \"gpu\": \"%s\", \"sm_count\": %d, \"iters\": %d, \"warmup\": %d,\n"
         " \"note\": \"loop: the consumer's cycles an iteration (clock64 at iteration warmup and at the last); busy: the producer's cycles an iteration from its empty wait passing to its last copy issued; "
         "median over CTAs, then over 3 launches after a warm-up launch; HBM rows: L2 evicted by a 256 MiB memset before every launch\",\n \"rows\": [",
         prop.name, nsm, ITERS, WARM);
  bool first = true;
  for (const PC& c : cs) {
    const PP& P = c.p;
    CUtensorMap ta = P.src == 1 ? make_tmap_2d(hbm, (uint64_t)P.pitch / 2, (uint64_t)nsm * (P.rowsPerCta ? P.rowsPerCta : 128), 64, 128)
                                : make_tmap_2d(l2, 64, (uint64_t)l2Bytes / 128, 64, (uint32_t)(P.bytes / 128));
    const int stage = P.NC * P.bytes + (P.withB ? 16384 : 0);
    std::vector<double> loop, busy, cmax;
    int to = 0;
    for (int rep = 0; rep < 4; ++rep) {
      if (P.src == 1) CK(cudaMemset(flush, rep, flushBytes));
      CK(cudaMemset(d, 0, sizeof(POut) * c.ctas));
      pipe<<<c.ctas, 64, std::max(P.S * stage, 120 * 1024)>>>(d, P.src == 1 ? hbm : l2, P, ta, tbL2);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (!rep) continue;
      CK(cudaMemcpy(h.data(), d, sizeof(POut) * c.ctas, cudaMemcpyDeviceToHost));
      std::vector<double> l, b;
      for (int k = 0; k < c.ctas; ++k) {
        to += h[k].timeout;
        if (h[k].timeout) continue;
        l.push_back((double)(h[k].c1 - h[k].c0) / (ITERS - 1 - WARM));
        b.push_back((double)h[k].busy / (ITERS - 1 - WARM));
      }
      loop.push_back(median(l));
      busy.push_back(median(b));
      cmax.push_back(l.empty() ? -1 : *std::max_element(l.begin(), l.end()));
    }
    printf("%s\n  {\"family\": \"%s\", \"copy\": \"%s\", \"ctas\": %d, \"stages\": %d, \"copies\": %d, \"copy_bytes\": %d, \"source\": \"%s\", "
           "\"pitch\": %d, \"with_b\": %d, \"div\": %d, \"timeouts\": %d, \"loop\": %.1f, \"loop_cta_max\": %.1f, \"busy\": %.1f}",
           first ? "" : ",", c.family, c.name, c.ctas, P.S, P.NC, P.bytes, P.src ? "hbm" : "l2_shared", P.pitch, P.withB, P.div, to,
           median(loop), median(cmax), median(busy));
    first = false;
    fflush(stdout);
  }
  printf("\n]}\n");
  return 0;
}
