// mbsim probe: parity waits on a shared-memory word that was never initialized as an mbarrier.
//
//   uninit_wait PATTERN     PATTERN: a 64-bit hex fill (e.g. 0, ffffffffffffffff, a5a5a5a5a5a5a5a5)
//
// One CTA, one thread: stores PATTERN into a shared 64-bit word with a plain st.shared (no
// mbarrier.init), then polls it with test_wait.parity(0), test_wait.parity(1), try_wait.parity(0)
// and try_wait.parity(1) (each a single poll; try_wait returns by itself), timing each try_wait
// with clock64, then repeats the two test_waits and reads the word back with a plain load.
// Results go to mapped host memory with a system fence after every step, so what happened before a
// trap survives it. Prints one JSON object: the pattern, each result (1 = the predicate was true),
// the try_wait cycles, the word read back, and the launch status (a trap shows as a CUDA error).
#include <cstdlib>
#include <cstring>
#include "ptx.cuh"

struct Rec {
  unsigned long long step;      // number of steps completed
  unsigned r[6];                // test0, test1, try0, try1, test0 again, test1 again
  long long cyc[2];             // try_wait(0), try_wait(1) cycles
  unsigned long long back;      // the word read back with ld.shared after the waits
};

__global__ void probe(unsigned long long pattern, Rec* rec) {
  __shared__ __align__(8) unsigned long long word;
  if (threadIdx.x != 0) return;
  volatile Rec* v = rec;
  volatile unsigned long long* w = &word;
  *w = pattern;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __threadfence_block();
  const uint32_t a = smem_addr(&word);
  v->r[0] = mb_test_parity(a, 0); v->step = 1; __threadfence_system();
  v->r[1] = mb_test_parity(a, 1); v->step = 2; __threadfence_system();
  long long t0 = clock64();
  v->r[2] = mb_try_parity(a, 0);
  long long t1 = clock64();
  v->cyc[0] = t1 - t0; v->step = 3; __threadfence_system();
  t0 = clock64();
  v->r[3] = mb_try_parity(a, 1);
  t1 = clock64();
  v->cyc[1] = t1 - t0; v->step = 4; __threadfence_system();
  v->r[4] = mb_test_parity(a, 0); v->step = 5; __threadfence_system();
  v->r[5] = mb_test_parity(a, 1); v->step = 6; __threadfence_system();
  v->back = *w; v->step = 7; __threadfence_system();
}

int main(int argc, char** argv) {
  if (argc != 2) { fprintf(stderr, "usage: uninit_wait HEXPATTERN\n"); return 2; }
  const unsigned long long pattern = strtoull(argv[1], nullptr, 16);
  CK(cudaSetDeviceFlags(cudaDeviceMapHost));
  Rec* h = nullptr;
  CK(cudaHostAlloc(&h, sizeof(Rec), cudaHostAllocMapped));
  memset(h, 0xee, sizeof(Rec));
  h->step = 0;
  Rec* d = nullptr;
  CK(cudaHostGetDevicePointer(&d, h, 0));
  probe<<<1, 32>>>(pattern, d);
  cudaError_t e = cudaDeviceSynchronize();
  printf("{\"pattern\": \"0x%016llx\", \"status\": \"%s\", \"steps\": %llu, "
         "\"test_wait.parity(0)\": %u, \"test_wait.parity(1)\": %u, "
         "\"try_wait.parity(0)\": %u, \"try_wait.parity(1)\": %u, "
         "\"try_wait_cycles\": [%lld, %lld], "
         "\"again test_wait.parity(0)\": %u, \"again test_wait.parity(1)\": %u, "
         "\"word_after\": \"0x%016llx\"}\n",
         pattern, cudaGetErrorString(e), h->step, h->r[0], h->r[1], h->r[2], h->r[3], h->cyc[0], h->cyc[1],
         h->r[4], h->r[5], h->back);
  return e == cudaSuccess ? 0 : 1;
}
