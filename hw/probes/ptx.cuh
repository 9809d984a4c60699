// Thin inline-PTX wrappers for mbarrier, bulk copies and cluster operations (sm_90a).
// Written for mbsim's hardware probes; every wait helper here is a single poll (callers bound
// their loops). Addresses are 32-bit shared-window addresses unless the name says otherwise.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      fprintf(stderr, "%s:%d %s -> %s (%d)\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_),   \
              (int)e_);                                                                           \
      exit(2);                                                                                    \
    }                                                                                             \
  } while (0)

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mb_init(uint32_t a, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void mb_inval(uint32_t a) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(a) : "memory");
}
__device__ __forceinline__ uint64_t mb_arrive(uint32_t a) {
  uint64_t s;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(s) : "r"(a) : "memory");
  return s;
}
__device__ __forceinline__ uint64_t mb_arrive_cnt(uint32_t a, uint32_t cnt) {
  uint64_t s;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(a), "r"(cnt) : "memory");
  return s;
}
__device__ __forceinline__ uint64_t mb_arrive_expect_tx(uint32_t a, uint32_t tx) {
  uint64_t s;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(a), "r"(tx) : "memory");
  return s;
}
__device__ __forceinline__ uint64_t mb_arrive_drop_cnt(uint32_t a, uint32_t cnt) {
  uint64_t s;
  asm volatile("mbarrier.arrive_drop.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(a), "r"(cnt) : "memory");
  return s;
}
__device__ __forceinline__ uint64_t mb_arrive_drop_expect_tx(uint32_t a, uint32_t tx) {
  uint64_t s;
  asm volatile("mbarrier.arrive_drop.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(a), "r"(tx) : "memory");
  return s;
}
__device__ __forceinline__ uint64_t mb_arrive_nocomplete(uint32_t a, uint32_t cnt) {
  uint64_t s;
  asm volatile("mbarrier.arrive.noComplete.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(a), "r"(cnt) : "memory");
  return s;
}
__device__ __forceinline__ void mb_expect_tx(uint32_t a, uint32_t tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(tx) : "memory");
}
__device__ __forceinline__ void mb_complete_tx(uint32_t a, uint32_t tx) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(tx) : "memory");
}
__device__ __forceinline__ uint32_t mb_test_parity(uint32_t a, uint32_t par) {
  uint32_t r;
  asm volatile(
      "{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(r) : "r"(a), "r"(par) : "memory");
  return r;
}
__device__ __forceinline__ uint32_t mb_try_parity(uint32_t a, uint32_t par) {
  uint32_t r;
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(r) : "r"(a), "r"(par) : "memory");
  return r;
}
__device__ __forceinline__ uint32_t mb_test_token(uint32_t a, uint64_t tok) {
  uint32_t r;
  asm volatile(
      "{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(r) : "r"(a), "l"(tok) : "memory");
  return r;
}
__device__ __forceinline__ uint32_t mb_try_token(uint32_t a, uint64_t tok) {
  uint32_t r;
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(r) : "r"(a), "l"(tok) : "memory");
  return r;
}
__device__ __forceinline__ uint32_t mb_pending_count(uint64_t tok) {
  uint32_t r;
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r) : "l"(tok));
  return r;
}
__device__ __forceinline__ uint64_t ld_shared_u64(uint32_t a) {
  uint64_t v;
  asm volatile("ld.volatile.shared.b64 %0, [%1];" : "=l"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_u64(uint32_t a, uint64_t v) {
  asm volatile("st.volatile.shared.b64 [%0], %1;" ::"r"(a), "l"(v) : "memory");
}

// ---- bulk copies (TMA, non-tensor) ----
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void bulk_g2s_mc(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar,
                                            uint16_t mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- cluster ----
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t mapa(uint32_t a, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void fence_mbarrier_init_cluster() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void rmb_arrive_cnt(uint32_t ra, uint32_t cnt) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(ra), "r"(cnt) : "memory");
}
__device__ __forceinline__ void rmb_arrive_expect_tx(uint32_t ra, uint32_t tx) {
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(ra), "r"(tx)
               : "memory");
}
__device__ __forceinline__ void rmb_expect_tx(uint32_t ra, uint32_t tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" ::"r"(ra), "r"(tx) : "memory");
}
__device__ __forceinline__ void rmb_complete_tx(uint32_t ra, uint32_t tx) {
  asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" ::"r"(ra), "r"(tx) : "memory");
}

__device__ __forceinline__ void spin_cycles(long long n) {
  long long t0 = clock64();
  while (clock64() - t0 < n) {
  }
}
__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// remote arrive as CUTLASS's ClusterBarrier::arrive(cta_id): default (.release.cta) semantics
__device__ __forceinline__ void rmb_arrive_plain(uint32_t ra) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(ra) : "memory");
}
