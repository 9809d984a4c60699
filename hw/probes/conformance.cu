// mbsim semantic conformance probe: a tiny interpreter that runs scripted mbarrier operation
// sequences on a real GPU (one CTA, or a 2-CTA cluster) and records, after every step, what the
// hardware reports: tokens, wait results, pending_count, the word written back by inval, and for
// every live barrier the two parity waits plus the upper 32 bits of the state (read with a
// count-0 arrive, FINDINGS.md section 0/5).
//
//   conformance --list          names of the sequences, one a line: index group name
//   conformance --run K         runs sequence K in this process, prints one JSON object
//
// Each sequence runs in its own process (hw/run.sh), so a trapping sequence (sticky launch
// failure) cannot poison the others. Results are written to mapped (zero-copy) host memory with
// a system fence after every step, so what happened before a trap survives it. Nothing in here
// blocks: the only waits are single test_wait / try_wait polls (try_wait returns by itself).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "tmap.cuh"

enum Kind {
  K_INIT, K_INVAL, K_ARRIVE, K_ARRIVE_CNT, K_ARRIVE_EXPECT_TX, K_ARRIVE_DROP, K_ARRIVE_DROP_EXPECT_TX,
  K_ARRIVE_NOCOMPLETE, K_EXPECT_TX, K_COMPLETE_TX, K_TEST_PARITY, K_TRY_PARITY, K_TEST_TOKEN, K_TRY_TOKEN,
  K_PENDING_COUNT, K_BULK, K_ARRIVE_THREADS,
  // remote (target CTA != executing CTA), through mapa + .shared::cluster
  K_R_ARRIVE_CNT, K_R_ARRIVE_EXPECT_TX, K_R_EXPECT_TX, K_R_COMPLETE_TX,
  K_DELAY, K_ARRIVE_WARPS, K_ARRIVE_THREADS_CNT, K_TENSOR,
};
static const char* kKindName[] = {"init", "inval", "arrive", "arrive", "arrive.expect_tx", "arrive_drop",
                                  "arrive_drop.expect_tx", "arrive.noComplete", "expect_tx", "complete_tx",
                                  "test_wait.parity", "try_wait.parity", "test_wait.token", "try_wait.token",
                                  "pending_count", "bulk_copy", "arrive.threads", "arrive", "arrive.expect_tx",
                                  "expect_tx", "complete_tx", "delay", "arrive.warps", "arrive.threads",
                                  "tensor_copy"};

constexpr int NB = 4;          // barriers per CTA
constexpr int MAXSTEPS = 160;
constexpr int MAXCTA = 2;
constexpr int DATA_OFF = 1024; // data buffer offset in dynamic smem
constexpr int DATA_BYTES = 192 * 1024;
constexpr int SMEM_BYTES = DATA_OFF + DATA_BYTES;
constexpr size_t SRC_BYTES = 4u << 20;
constexpr int TW = 256, TH = 256;  // the tensor-map view of src: bf16 [TH][TW] (128 KiB)
constexpr int BOX[2][2] = {{64, 64}, {32, 16}};  // tensor map 0: 64x64 box (8 KiB); map 1: 32x16 (1 KiB)

struct Op {
  int kind, cta, bar, target; // executing CTA, barrier index, CTA owning the barrier
  int a;                       // count / tx / bytes / parity / threads / cycles
  int tok;                     // token step index (waits, pending_count)
  int settle;                  // cycles to spin after the op before observing
  int mask;                    // multicast mask (0: plain copy into own CTA); lane count for K_ARRIVE_THREADS_CNT
  int srcoff, dstoff;          // bulk copy offsets (bytes)
  int map, x, y, bw, bh;       // tensor copy: map index, box coordinates (elements), box size
};

struct Rec {
  int started, done;
  unsigned long long res;      // token / result / word
  unsigned lanetok[32];
  unsigned obs[MAXCTA][NB][2]; // [0]: 1 | p0<<1 | p1<<2 (0 = not live), [1]: state hi (count-0 arrive)
  int data[MAXCTA];            // 0 not checked, 1 ok, 2 mismatch
};

__device__ __forceinline__ uint32_t src_word(uint32_t byte_index) {
  uint32_t i = byte_index >> 2;
  return (i * 2654435761u) ^ 0x5bd1e995u;
}

__device__ void sync_all(int ncta) {
  if (ncta > 1) cluster_sync_all();
  else __syncthreads();
}

__global__ void __launch_bounds__(128) interp(const Op* ops, int nops, Rec* rec, const uint32_t* src, int ncta,
                                              uint32_t zero, int probe, const __grid_constant__ CUtensorMap tm0,
                                              const __grid_constant__ CUtensorMap tm1) {
  extern __shared__ __align__(128) uint8_t smem[];
  const int tid = threadIdx.x;
  const int rank = ncta > 1 ? (int)cluster_rank() : 0;
  volatile Rec* vr = rec;
  __shared__ int live[NB];
  __shared__ unsigned long long tokens[MAXSTEPS];
  uint32_t bar0 = smem_addr(smem);
  if (tid < NB) {
    st_shared_u64(bar0 + 8 * tid, 0xA5A5A5A5A5A5A5A5ull); // fill pattern; never a valid barrier
    live[tid] = 0;
  }
  for (int i = tid; i < DATA_BYTES / 4; i += blockDim.x) ((uint32_t*)(smem + DATA_OFF))[i] = 0;
  fence_proxy_async();
  __syncthreads();
  sync_all(ncta);

  for (int i = 0; i < nops; ++i) {
    const Op o = ops[i];
    const bool me = (rank == o.cta);
    const uint32_t ba = bar0 + 8 * o.bar;
    if (me && tid == 0) {
      vr[i].started = 1;
      __threadfence_system();
    }
    if (me && o.kind == K_ARRIVE_THREADS) {
      if (tid < o.a) {  // lanes 0..a-1 of warp 0: one arrive instruction
        uint64_t t = mb_arrive(ba);
        vr[i].lanetok[tid] = (unsigned)(t >> 32);
      }
    } else if (me && o.kind == K_ARRIVE_THREADS_CNT) {
      if (tid < o.mask) {  // lanes 0..mask-1 of warp 0, each with count a
        uint64_t t = mb_arrive_cnt(ba, (uint32_t)o.a);
        vr[i].lanetok[tid] = (unsigned)(t >> 32);
      }
    } else if (me && o.kind == K_ARRIVE_WARPS) {
      if ((tid & 31) == 0 && tid / 32 < o.a) {  // lane 0 of warps 0..a-1: separate instructions
        uint64_t t = mb_arrive(ba);
        vr[i].lanetok[tid / 32] = (unsigned)(t >> 32);
      }
    } else if (me && tid == 0) {
      uint64_t r = 0;
      uint32_t rb = (o.target != o.cta) ? mapa(ba, (uint32_t)o.target) : ba;
      switch (o.kind) {
        case K_INIT: mb_init(ba, (uint32_t)o.a); if (ncta > 1) fence_mbarrier_init_cluster(); break;
        case K_INVAL: mb_inval(ba); r = ld_shared_u64(ba); break;
        case K_ARRIVE: r = mb_arrive(ba); break;
        case K_ARRIVE_CNT: r = mb_arrive_cnt(ba, (uint32_t)o.a); break;
        case K_ARRIVE_EXPECT_TX: r = mb_arrive_expect_tx(ba, (uint32_t)o.a); break;
        case K_ARRIVE_DROP: r = mb_arrive_drop_cnt(ba, (uint32_t)o.a); break;
        case K_ARRIVE_DROP_EXPECT_TX: r = mb_arrive_drop_expect_tx(ba, (uint32_t)o.a); break;
        case K_ARRIVE_NOCOMPLETE: r = mb_arrive_nocomplete(ba, (uint32_t)o.a); break;
        case K_EXPECT_TX: mb_expect_tx(ba, (uint32_t)o.a); break;
        case K_COMPLETE_TX: mb_complete_tx(ba, (uint32_t)o.a); break;
        case K_TEST_PARITY: r = mb_test_parity(ba, (uint32_t)o.a); break;
        case K_TRY_PARITY: r = mb_try_parity(ba, (uint32_t)o.a); break;
        case K_TEST_TOKEN: r = mb_test_token(ba, tokens[o.tok]); break;
        case K_TRY_TOKEN: r = mb_try_token(ba, tokens[o.tok]); break;
        case K_PENDING_COUNT: r = mb_pending_count(tokens[o.tok]); break;
        case K_BULK: {
          uint32_t dst = smem_addr(smem + DATA_OFF + o.dstoff);
          const void* s = (const uint8_t*)src + o.srcoff;
          if (o.mask) bulk_g2s_mc(dst, s, (uint32_t)o.a, ba, (uint16_t)o.mask);
          else bulk_g2s(dst, s, (uint32_t)o.a, ba);
          break;
        }
        case K_TENSOR:
          tensor_g2s(smem_addr(smem + DATA_OFF + o.dstoff), o.map ? &tm1 : &tm0, o.x, o.y, ba);
          break;
        case K_R_ARRIVE_CNT: rmb_arrive_cnt(rb, (uint32_t)o.a); break;
        case K_R_ARRIVE_EXPECT_TX: rmb_arrive_expect_tx(rb, (uint32_t)o.a); break;
        case K_R_EXPECT_TX: rmb_expect_tx(rb, (uint32_t)o.a); break;
        case K_R_COMPLETE_TX: rmb_complete_tx(rb, (uint32_t)o.a); break;
        case K_DELAY: break;
      }
      tokens[i] = r;
      vr[i].res = r;
      if (o.settle) spin_cycles(o.settle);
      __threadfence_system();
    }
    __syncthreads();
    sync_all(ncta);
    if (o.kind == K_INIT && o.target == rank) { if (tid == 0) live[o.bar] = 1; }
    if (o.kind == K_INVAL && o.target == rank) { if (tid == 0) live[o.bar] = 0; }
    __syncthreads();
    if (tid == 0) {
      for (int b = 0; b < NB; ++b) {
        if (!live[b]) { vr[i].obs[rank][b][0] = 0; continue; }
        uint32_t a = bar0 + 8 * b;
        uint32_t p0 = mb_test_parity(a, 0), p1 = mb_test_parity(a, 1);
        // count-0 arrive: returns the state's upper half. A pure read, except that it runs the
        // completion check: with pending 0 and tx 0 (only after the expected count fell to 0) it
        // completes the phase, so sequences that reach that state run with probe = 0.
        uint64_t st = probe ? mb_arrive_cnt(a, zero) : 0ull;
        vr[i].obs[rank][b][0] = 1u | (p0 << 1) | (p1 << 2) | (probe ? 8u : 0u);
        vr[i].obs[rank][b][1] = (unsigned)(st >> 32);
      }
      bool dest = (o.kind == K_BULK) && (o.mask ? ((o.mask >> rank) & 1) : (rank == o.cta));
      if (dest) {
        const uint32_t* d = (const uint32_t*)(smem + DATA_OFF + o.dstoff);
        int ok = 1;
        for (int w = 0; w < o.a / 4; ++w)
          if (d[w] != src_word((uint32_t)o.srcoff + 4u * w)) { ok = 2; break; }
        vr[i].data[rank] = ok;
      }
      if (o.kind == K_TENSOR && rank == o.cta) {  // in-bounds elements from the source, the rest 0
        const uint16_t* d = (const uint16_t*)(smem + DATA_OFF + o.dstoff);
        int ok = 1;
        for (int j = 0; j < o.bh && ok == 1; ++j)
          for (int e = 0; e < o.bw; ++e) {
            const int gx = o.x + e, gy = o.y + j;
            uint16_t want = 0;
            if (gx >= 0 && gx < TW && gy >= 0 && gy < TH) {
              const uint32_t byte = (uint32_t)(gy * TW + gx) * 2u;
              const uint32_t w = src_word(byte & ~3u);
              want = (uint16_t)((byte & 2u) ? (w >> 16) : (w & 0xffffu));
            }
            if (d[j * o.bw + e] != want) { ok = 2; break; }
          }
        vr[i].data[rank] = ok;
      }
      __threadfence_system();
    }
    if (me && tid == 0) {
      vr[i].done = 1;
      __threadfence_system();
    }
    __syncthreads();
    sync_all(ncta);
  }
}

__global__ void fill_src(uint32_t* s, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    s[i] = ((uint32_t)i * 2654435761u) ^ 0x5bd1e995u;
}

// ------------------------------------------------------------------------------------------------
// Sequences
struct Seq {
  std::string group, name, note;
  int ncta = 1;
  int probe = 1;
  std::vector<Op> ops;
  int last = -1;
  Op base() const { Op o{}; o.cta = 0; o.bar = 0; o.target = 0; o.tok = -1; return o; }
  int push(Op o) { if (o.target < 0) o.target = o.cta; ops.push_back(o); last = (int)ops.size() - 1; return last; }
  int op(int kind, int a = 0, int bar = 0, int cta = 0) {
    Op o = base(); o.kind = kind; o.a = a; o.bar = bar; o.cta = cta; o.target = cta; return push(o);
  }
  int init(int c, int bar = 0, int cta = 0) { return op(K_INIT, c, bar, cta); }
  int inval(int bar = 0, int cta = 0) { return op(K_INVAL, 0, bar, cta); }
  int arrive(int bar = 0, int cta = 0) { return op(K_ARRIVE, 1, bar, cta); }
  int arrive_cnt(int c, int bar = 0, int cta = 0) { return op(K_ARRIVE_CNT, c, bar, cta); }
  int aet(int tx, int bar = 0, int cta = 0) { return op(K_ARRIVE_EXPECT_TX, tx, bar, cta); }
  int drop(int c, int bar = 0, int cta = 0) { return op(K_ARRIVE_DROP, c, bar, cta); }
  int nocomp(int c, int bar = 0, int cta = 0) { return op(K_ARRIVE_NOCOMPLETE, c, bar, cta); }
  int etx(int tx, int bar = 0, int cta = 0) { return op(K_EXPECT_TX, tx, bar, cta); }
  int ctx(int tx, int bar = 0, int cta = 0) { return op(K_COMPLETE_TX, tx, bar, cta); }
  int tp(int p, int bar = 0, int cta = 0) { return op(K_TEST_PARITY, p, bar, cta); }
  int tryp(int p, int bar = 0, int cta = 0) { return op(K_TRY_PARITY, p, bar, cta); }
  int tt(int tok, int bar = 0, int cta = 0) { int i = op(K_TEST_TOKEN, 0, bar, cta); ops[i].tok = tok; return i; }
  int trt(int tok, int bar = 0, int cta = 0) { int i = op(K_TRY_TOKEN, 0, bar, cta); ops[i].tok = tok; return i; }
  int pc(int tok, int cta = 0) { int i = op(K_PENDING_COUNT, 0, 0, cta); ops[i].tok = tok; return i; }
  int bulk(int bytes, int srcoff, int dstoff, int bar = 0, int cta = 0, int mask = 0, int settle = 30000) {
    Op o = base(); o.kind = K_BULK; o.a = bytes; o.bar = bar; o.cta = cta; o.target = cta; o.mask = mask;
    o.srcoff = srcoff; o.dstoff = dstoff; o.settle = settle; return push(o);
  }
  int threads(int n, int bar = 0, int cta = 0) { return op(K_ARRIVE_THREADS, n, bar, cta); }
  int threads_cnt(int n, int c, int bar = 0, int cta = 0) { int i = op(K_ARRIVE_THREADS_CNT, c, bar, cta); ops[i].mask = n; return i; }
  int warps(int n, int bar = 0, int cta = 0) { return op(K_ARRIVE_WARPS, n, bar, cta); }
  int tensor(int map, int x, int y, int dstoff, int bar = 0, int cta = 0) {
    Op o = base(); o.kind = K_TENSOR; o.map = map; o.x = x; o.y = y; o.bw = BOX[map][0]; o.bh = BOX[map][1];
    o.a = o.bw * o.bh * 2; o.bar = bar; o.cta = cta; o.target = cta; o.dstoff = dstoff; o.settle = 30000; return push(o);
  }
  int remote(int kind, int a, int target, int bar = 0, int cta = 0) {
    Op o = base(); o.kind = kind; o.a = a; o.bar = bar; o.cta = cta; o.target = target; o.settle = 4000; return push(o);
  }
};

static std::vector<Seq> build() {
  std::vector<Seq> v;
  auto add = [&](const char* g, const char* n, int ncta = 1) -> Seq& {
    v.emplace_back(); v.back().group = g; v.back().name = n; v.back().ncta = ncta; return v.back();
  };
  // ---------------- init / encoding ----------------
  { Seq& s = add("init", "init_counts_then_inval");
    for (int c : {1, 2, 3, 5, 7, 128, 4096, 1048575}) { s.init(c); s.inval(); } }
  { Seq& s = add("init", "init_inval_after_arrivals");
    s.init(3); s.arrive(); s.etx(4096); s.inval();
    s.init(5); s.arrive_cnt(2); s.inval();
    s.init(2); s.arrive(); s.arrive(); s.arrive(); s.inval(); }
  { Seq& s = add("init", "init_count0_ub"); s.init(0); s.tp(0); s.tp(1); s.inval(); }
  { Seq& s = add("init", "init_count0_then_arrive_traps"); s.init(0); s.arrive(); }
  { Seq& s = add("init", "arrive_uninitialized_traps"); s.arrive(); }
  { Seq& s = add("init", "four_barriers_independent");
    for (int b = 0; b < 4; ++b) s.init(b + 1, b);
    s.arrive(0); s.arrive(1); s.arrive(3); s.arrive_cnt(3, 2); s.arrive(1); s.arrive_cnt(3, 3);
    for (int b = 0; b < 4; ++b) s.inval(b); }
  // ---------------- arrive ----------------
  { Seq& s = add("arrive", "arrive_c5_two_phases");
    s.init(5); for (int k = 0; k < 10; ++k) s.arrive(); s.inval(); }
  { Seq& s = add("arrive", "arrive_counts_c4");
    s.init(4); s.arrive_cnt(3); s.arrive_cnt(1); s.arrive_cnt(4); s.arrive_cnt(2); s.arrive_cnt(1); s.arrive_cnt(1); s.inval(); }
  { Seq& s = add("arrive", "arrive_count_max");
    s.init(1048575); s.arrive_cnt(1048574); s.arrive_cnt(1); s.arrive_cnt(1048575); s.arrive_cnt(1000); s.inval(); }
  { Seq& s = add("arrive", "arrive_threads_c4_by_4_lanes");
    s.init(4); s.threads(4); s.threads(2); s.threads(2); s.inval(); }
  { Seq& s = add("arrive", "arrive_threads_spill_3_lanes_on_pending_2");
    s.init(2); s.threads(3); s.tp(0); s.tp(1); s.arrive(); s.inval(); }
  { Seq& s = add("arrive", "arrive_threads_32_lanes_c32"); s.init(32); s.threads(32); s.threads(16); s.threads(16); s.inval(); }
  { Seq& s = add("arrive", "arrive_threads_3_lanes_count2_c6"); s.init(6); s.threads_cnt(3, 2); s.threads_cnt(2, 2); s.arrive_cnt(2); s.inval(); }
  { Seq& s = add("arrive", "arrive_warps_4_on_pending3_spill"); s.init(3); s.warps(4); s.tp(0); s.arrive(); s.arrive(); s.inval(); }
  { Seq& s = add("arrive", "arrive_warps_2_on_c1_two_phases"); s.init(1); s.warps(2); s.tp(0); s.tp(1); s.warps(4); s.inval(); }
  { Seq& s = add("arrive", "over_arrival_count3_on_pending2_traps"); s.init(2); s.arrive_cnt(3); }
  { Seq& s = add("arrive", "over_arrival_after_phase_waits_on_tx_traps"); s.init(1); s.etx(16); s.arrive(); s.arrive(); }
  { Seq& s = add("arrive", "over_arrival_count2_on_pending1_traps"); s.init(3); s.arrive_cnt(2); s.arrive_cnt(2); }
  // ---------------- parity / tokens ----------------
  { Seq& s = add("parity", "parity_waits_c2_phases0to5");
    s.init(2);
    for (int ph = 0; ph < 6; ++ph) {
      s.tp(0); s.tp(1); s.tryp(0); s.tryp(1);
      s.arrive(); s.tp(0); s.tp(1);
      s.arrive(); s.tp(0); s.tp(1); s.tryp(0); s.tryp(1);
    }
    s.inval(); }
  { Seq& s = add("parity", "parity_fresh_c1");
    s.init(1); s.tp(1); s.tryp(1); s.tp(0); s.tryp(0); s.arrive(); s.tp(0); s.tryp(0); s.tp(1); s.inval(); }
  { Seq& s = add("parity", "token_waits_incl_stale_phases0to5");
    s.init(2);
    std::vector<int> toks;
    for (int ph = 0; ph < 6; ++ph) {
      int a = s.arrive(); toks.push_back(a);
      for (int t : toks) s.tt(t);
      int b = s.arrive(); toks.push_back(b);
      for (int t : toks) s.tt(t);
    }
    s.trt(toks[0]); s.trt(toks.back());
    s.inval(); }
  { Seq& s = add("parity", "pending_count_nocomplete_tokens_c5");
    s.init(5);
    int t1 = s.nocomp(1), t2 = s.nocomp(1), t3 = s.nocomp(2);
    s.pc(t1); s.pc(t2); s.pc(t3);
    int t4 = s.arrive(); s.pc(t4);
    int t5 = s.nocomp(1); s.pc(t5); s.tt(t5); s.tt(t1);
    s.inval(); }
  // ---------------- tx ----------------
  { Seq& s = add("tx", "expect_then_complete");
    s.init(1); s.etx(1024); s.arrive(); s.ctx(512); s.ctx(512); s.etx(4096); s.ctx(4096); s.arrive(); s.inval(); }
  { Seq& s = add("tx", "arrive_expect_tx_then_complete");
    s.init(1); s.aet(4096); s.ctx(2048); s.ctx(2048); s.aet(0); s.aet(65536); s.ctx(65536); s.inval(); }
  { Seq& s = add("tx", "complete_first_negative_then_expect");
    s.init(1); s.ctx(2048); s.arrive(); s.tp(0); s.etx(2048); s.tp(0); s.inval(); }
  { Seq& s = add("tx", "complete_first_then_arrive_expect_tx_c2");
    s.init(2); s.ctx(6144); s.arrive(); s.aet(6144); s.arrive(); s.ctx(100); s.aet(100); s.inval(); }
  { Seq& s = add("tx", "tx_sign_both_orders");
    s.init(1); s.etx(2048); s.etx(2048); s.ctx(4096); s.ctx(2048); s.etx(2048); s.arrive();
    s.ctx(16); s.ctx(48); s.etx(32); s.etx(32); s.arrive(); s.inval(); }
  { Seq& s = add("tx", "tx_max_plus_2pow20_accepted");
    s.init(1); s.etx(1048575); s.etx(1); s.ctx(1048575); s.ctx(1); s.arrive(); s.inval(); }
  { Seq& s = add("tx", "tx_min_accepted");
    s.init(1); s.ctx(1048575); s.etx(1048575); s.arrive(); s.inval(); }
  { Seq& s = add("tx", "tx_overflow_traps"); s.init(1); s.etx(1048575); s.etx(2); }
  { Seq& s = add("tx", "tx_underflow_traps"); s.init(1); s.ctx(1048575); s.ctx(1); }
  { Seq& s = add("tx", "expect_tx_single_operand_2pow20_traps"); s.init(1); s.etx(1048576); }
  { Seq& s = add("tx", "inval_word_with_tx_fields");
    s.init(3); s.etx(16); s.inval(); s.init(3); s.ctx(16); s.inval(); s.init(2); s.etx(2064); s.inval();
    s.init(1); s.ctx(1048575); s.inval(); s.init(1); s.etx(1048575); s.etx(1); s.inval(); }
  // ---------------- drop / noComplete ----------------
  { Seq& s = add("drop", "arrive_drop_c3");
    s.init(3); s.drop(1); s.arrive(); s.arrive(); s.arrive(); s.arrive(); s.arrive(); s.arrive(); s.inval(); }
  { Seq& s = add("drop", "arrive_drop_count2_c4");
    s.init(4); s.drop(2); s.arrive_cnt(2); s.arrive(); s.arrive(); s.inval(); }
  { Seq& s = add("drop", "arrive_drop_completes_phase");
    s.init(2); s.arrive(); s.drop(1); s.arrive(); s.arrive(); s.inval(); }
  { Seq& s = add("drop", "arrive_drop_expect_tx");
    s.init(2); s.op(K_ARRIVE_DROP_EXPECT_TX, 1024); s.arrive(); s.ctx(1024); s.arrive(); s.inval(); }
  { Seq& s = add("drop", "arrive_drop_to_zero_then_arrive_traps");
    s.probe = 0; s.init(1); s.drop(1); s.tp(0); s.tp(1); s.tryp(0); s.tp(0); s.arrive(); }
  { Seq& s = add("drop", "arrive_drop_to_zero_probe_completes_phase");
    // count-0 arrive (the probe) after the expected count fell to 0: does it complete the phase?
    s.probe = 0; s.init(1); s.drop(1); s.tp(0); s.arrive_cnt(0); s.tp(0); s.arrive_cnt(0); s.tp(0); s.inval(); }
  { Seq& s = add("drop", "arrive_drop_c2_then_arrivals_inval");
    s.init(2); s.drop(1); s.arrive(); s.arrive(); s.inval(); }
  { Seq& s = add("drop", "arrive_drop_over_pending_traps"); s.init(3); s.drop(5); }
  { Seq& s = add("drop", "nocomplete_c4");
    s.init(4); int t = s.nocomp(2); s.pc(t); int u = s.nocomp(1); s.pc(u); s.arrive(); s.inval(); }
  { Seq& s = add("drop", "nocomplete_that_completes_ub");
    s.init(2); s.nocomp(1); s.nocomp(1); s.tp(0); s.arrive(); s.inval(); }
  // ---------------- bulk copies (TMA) ----------------
  { Seq& s = add("bulk", "bulk_one_copy_sizes");
    s.init(1);
    int off = 0;
    for (int bytes : {16, 1024, 4096, 16384, 65536}) { s.aet(bytes); s.bulk(bytes, off, 0); s.tp(0); s.tp(1); off += bytes; }
    s.inval(); }
  { Seq& s = add("bulk", "bulk_two_copies_one_barrier");
    s.init(1); s.aet(8192); s.bulk(4096, 0, 0); s.bulk(4096, 4096, 4096); s.inval(); }
  { Seq& s = add("bulk", "bulk_16x1k_one_barrier");
    s.init(1); s.aet(16384); for (int k = 0; k < 16; ++k) s.bulk(1024, 65536 + 1024 * k, 1024 * k, 0, 0, 0, 8000); s.inval(); }
  { Seq& s = add("bulk", "bulk_lands_before_expect");
    s.init(1); s.bulk(8192, 0, 0); s.tp(0); s.aet(8192); s.bulk(4096, 8192, 8192); s.etx(4096); s.arrive(); s.inval(); }
  { Seq& s = add("bulk", "bulk_expect_more_than_copied");
    s.init(1); s.aet(4112); s.bulk(4096, 0, 0); s.tp(0); s.tryp(0); s.ctx(16); s.tp(0); s.inval(); }
  { Seq& s = add("bulk", "bulk_c2_two_producers");
    s.init(2); s.aet(2048); s.bulk(2048, 0, 0); s.aet(2048); s.bulk(2048, 2048, 2048);
    s.aet(65536); s.aet(65536); s.bulk(65536, 0, 0); s.bulk(65536, 65536, 65536); s.inval(); }
  { Seq& s = add("bulk", "bulk_pending_arrival_blocks");
    s.init(2); s.aet(4096); s.bulk(4096, 0, 0); s.tp(0); s.arrive(); s.inval(); }
  // ---------------- 2-CTA cluster ----------------
  { Seq& s = add("cluster", "remote_arrive_both_directions", 2);
    s.init(1, 0, 0); s.init(2, 0, 1);
    s.remote(K_R_ARRIVE_CNT, 1, 1, 0, 0); s.arrive(0, 1);
    s.remote(K_R_ARRIVE_CNT, 1, 0, 0, 1); s.remote(K_R_ARRIVE_CNT, 2, 1, 0, 0);
    s.remote(K_R_ARRIVE_CNT, 1, 0, 0, 1); s.inval(0, 0); s.inval(0, 1); }
  { Seq& s = add("cluster", "remote_complete_tx_split", 2);
    s.init(1, 0, 0); s.init(1, 0, 1);
    s.aet(64, 0, 1); s.remote(K_R_COMPLETE_TX, 32, 1, 0, 0); s.remote(K_R_COMPLETE_TX, 32, 1, 0, 0);
    s.remote(K_R_COMPLETE_TX, 64, 1, 0, 0); s.aet(64, 0, 1);
    s.inval(0, 0); s.inval(0, 1); }
  { Seq& s = add("cluster", "remote_expect_tx_and_arrive_expect_tx", 2);
    s.init(1, 0, 0); s.init(2, 0, 1);
    s.remote(K_R_ARRIVE_EXPECT_TX, 128, 1, 0, 0); s.remote(K_R_EXPECT_TX, 64, 1, 0, 0);
    s.ctx(192, 0, 1); s.arrive(0, 1);
    s.inval(0, 0); s.inval(0, 1); }
  { Seq& s = add("cluster", "multicast_both_armed", 2);
    s.init(1, 0, 0); s.init(1, 0, 1);
    s.aet(4096, 0, 0); s.aet(4096, 0, 1); s.bulk(4096, 0, 0, 0, 0, 3);
    s.aet(65536, 0, 0); s.aet(65536, 0, 1); s.bulk(65536, 65536, 4096, 0, 0, 3);
    s.inval(0, 0); s.inval(0, 1); }
  { Seq& s = add("cluster", "multicast_peer_arms_late", 2);
    s.init(1, 0, 0); s.init(1, 0, 1);
    s.aet(16384, 0, 0); s.bulk(16384, 0, 0, 0, 0, 3);
    s.tp(0, 0, 1); s.etx(16384, 0, 1); s.tp(0, 0, 1); s.arrive(0, 1);
    s.inval(0, 0); s.inval(0, 1); }
  { Seq& s = add("cluster", "multicast_mask_peer_only_from_cta1", 2);
    s.init(1, 0, 0); s.init(1, 0, 1);
    s.aet(8192, 0, 1); s.bulk(8192, 4096, 0, 0, 1, 2);
    s.aet(8192, 0, 0); s.aet(8192, 0, 1); s.bulk(8192, 16384, 8192, 0, 1, 3);
    s.inval(0, 0); s.inval(0, 1); }
  { Seq& s = add("cluster", "cluster_pipeline_two_stages", 2);
    // full[0..1] in each CTA (count 1), empty[2..3] in CTA0 (count 2: both consumers)
    for (int c = 0; c < 2; ++c) { s.init(1, 0, c); s.init(1, 1, c); }
    s.init(2, 2, 0); s.init(2, 3, 0);
    for (int it = 0; it < 4; ++it) {
      int st = it & 1;
      if (it >= 2) s.tp(((it / 2) - 1) & 1, 2 + st, 0);
      s.aet(4096, st, 0); s.aet(4096, st, 1);
      s.bulk(4096, 4096 * it, 4096 * st, st, 0, 3);
      s.tp(it / 2 & 1, st, 0); s.tp(it / 2 & 1, st, 1);
      s.arrive(2 + st, 0); s.remote(K_R_ARRIVE_CNT, 1, 0, 2 + st, 1);
    }
    for (int c = 0; c < 2; ++c) { s.inval(0, c); s.inval(1, c); }
    s.inval(2, 0); s.inval(3, 0); }
  // ---------------- tensor-map copies (cp.async.bulk.tensor.2d, bf16, no swizzle, OOB fill 0) ----------------
  { Seq& s = add("tensor", "tensor_box_in_bounds_two_phases");
    s.init(1); s.aet(8192); s.tensor(0, 0, 0, 0); s.aet(8192); s.tensor(0, 64, 128, 8192); s.inval(); }
  { Seq& s = add("tensor", "tensor_box_partly_oob_credits_full_box");
    s.init(1); s.aet(8192); s.tensor(0, 224, 224, 0); s.aet(1024); s.tensor(1, 240, 250, 8192);
    s.aet(1024); s.tensor(1, -16, -8, 16384); s.inval(); }
  { Seq& s = add("tensor", "tensor_box_fully_oob_credits_full_box");
    s.init(1); s.aet(8192); s.tensor(0, 256, 0, 0); s.aet(8192); s.tensor(0, -64, -64, 8192); s.inval(); }
  { Seq& s = add("tensor", "tensor_box_lands_before_expect_tx");
    s.init(1); s.tensor(0, 0, 0, 0); s.tp(0); s.aet(8192); s.tp(0); s.inval(); }
  { Seq& s = add("tensor", "tensor_two_boxes_one_barrier_and_extra_tx");
    s.init(1); s.aet(9216); s.tensor(0, 0, 0, 0); s.tensor(1, 64, 0, 8192); s.tp(0);
    s.aet(8192 + 1024 + 16); s.tensor(0, 128, 0, 0); s.tensor(1, 128, 64, 8192); s.ctx(16); s.inval(); }
  { Seq& s = add("tensor", "tensor_with_pending_arrival");
    s.init(2); s.aet(8192); s.tensor(0, 32, 32, 0); s.arrive(); s.inval(); }
  return v;
}

static void print_json_str(const std::string& s) {
  putchar('"');
  for (char c : s) { if (c == '"' || c == '\\') putchar('\\'); putchar(c); }
  putchar('"');
}

int main(int argc, char** argv) {
  std::vector<Seq> seqs = build();
  if (argc >= 2 && !strcmp(argv[1], "--list")) {
    for (size_t k = 0; k < seqs.size(); ++k) printf("%zu %s %s\n", k, seqs[k].group.c_str(), seqs[k].name.c_str());
    return 0;
  }
  if (argc < 3 || strcmp(argv[1], "--run")) { fprintf(stderr, "usage: %s --list | --run K\n", argv[0]); return 1; }
  int k = atoi(argv[2]);
  if (k < 0 || k >= (int)seqs.size()) return 1;
  Seq& s = seqs[k];
  int n = (int)s.ops.size();
  if (n > MAXSTEPS) { fprintf(stderr, "too many steps\n"); return 1; }

  CK(cudaSetDeviceFlags(cudaDeviceMapHost));
  Rec* hrec;
  CK(cudaHostAlloc(&hrec, sizeof(Rec) * n, cudaHostAllocMapped));
  memset(hrec, 0, sizeof(Rec) * n);
  Rec* drec;
  CK(cudaHostGetDevicePointer(&drec, hrec, 0));
  Op* dops;
  CK(cudaMalloc(&dops, sizeof(Op) * n));
  CK(cudaMemcpy(dops, s.ops.data(), sizeof(Op) * n, cudaMemcpyHostToDevice));
  uint32_t* src;
  CK(cudaMalloc(&src, SRC_BYTES));
  fill_src<<<256, 256>>>(src, SRC_BYTES / 4);
  CK(cudaDeviceSynchronize());
  CK(cudaFuncSetAttribute(interp, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));

  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(s.ncta);
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = SMEM_BYTES;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = s.ncta;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const CUtensorMap tm0 = make_tmap_2d(src, TW, TH, BOX[0][0], BOX[0][1]);
  const CUtensorMap tm1 = make_tmap_2d(src, TW, TH, BOX[1][0], BOX[1][1]);
  cudaError_t le = cudaLaunchKernelEx(&cfg, interp, (const Op*)dops, n, drec, (const uint32_t*)src, s.ncta, 0u, s.probe, tm0, tm1);
  cudaError_t se = le == cudaSuccess ? cudaDeviceSynchronize() : le;

  // ---- JSON ----
  printf("{\"name\": ");
  print_json_str(s.name);
  printf(", \"group\": ");
  print_json_str(s.group);
  printf(", \"cta_count\": %d, \"state_probe\": %s", s.ncta, s.probe ? "true" : "false");
  if (se != cudaSuccess) {
    printf(", \"error\": ");
    print_json_str(cudaGetErrorName(se));
  }
  printf(", \"steps\": [");
  bool first = true;
  for (int i = 0; i < n; ++i) {
    const Op& o = s.ops[i];
    const Rec& r = hrec[i];
    if (!r.started) break;
    if (!first) printf(",");
    first = false;
    printf("\n    {\"op\": \"%s\", \"cta\": %d, \"bar\": %d", kKindName[o.kind], o.cta, o.bar);
    if (o.target != o.cta) printf(", \"target\": %d", o.target);
    switch (o.kind) {
      case K_INIT: case K_ARRIVE_CNT: case K_ARRIVE_DROP: case K_ARRIVE_NOCOMPLETE: case K_R_ARRIVE_CNT:
        printf(", \"count\": %d", o.a); break;
      case K_ARRIVE: printf(", \"count\": 1"); break;
      case K_ARRIVE_EXPECT_TX: case K_ARRIVE_DROP_EXPECT_TX: case K_EXPECT_TX: case K_COMPLETE_TX:
      case K_R_ARRIVE_EXPECT_TX: case K_R_EXPECT_TX: case K_R_COMPLETE_TX:
        printf(", \"tx\": %d", o.a); break;
      case K_TEST_PARITY: case K_TRY_PARITY: printf(", \"parity\": %d", o.a); break;
      case K_TEST_TOKEN: case K_TRY_TOKEN: case K_PENDING_COUNT: printf(", \"token_step\": %d", o.tok); break;
      case K_BULK:
        printf(", \"bytes\": %d, \"src_offset\": %d, \"dst_offset\": %d", o.a, o.srcoff, o.dstoff);
        if (o.mask) printf(", \"multicast_mask\": %d", o.mask);
        break;
      case K_ARRIVE_THREADS: case K_ARRIVE_WARPS: printf(", \"threads\": %d", o.a); break;
      case K_TENSOR:
        printf(", \"bytes\": %d, \"box\": [%d, %d], \"coords\": [%d, %d], \"tensor\": [%d, %d], \"dst_offset\": %d", o.a, o.bw, o.bh,
               o.x, o.y, TW, TH, o.dstoff);
        break;
      case K_ARRIVE_THREADS_CNT: printf(", \"threads\": %d, \"count\": %d", o.mask, o.a); break;
      default: break;
    }
    if (o.settle) printf(", \"settle_cycles\": %d", o.settle);
    printf(", \"observed\": {");
    if (!r.done) {
      printf("\"trap\": true, \"error\": ");
      print_json_str(se != cudaSuccess ? cudaGetErrorName(se) : "incomplete");
      printf("}}");
      continue;
    }
    bool any = false;
    auto sep = [&]() { if (any) printf(", "); any = true; };
    bool local = o.target == o.cta;
    switch (o.kind) {
      case K_ARRIVE: case K_ARRIVE_CNT: case K_ARRIVE_EXPECT_TX: case K_ARRIVE_DROP: case K_ARRIVE_DROP_EXPECT_TX:
      case K_ARRIVE_NOCOMPLETE:
        if (local) { sep(); printf("\"token\": \"0x%08x\"", (unsigned)(r.res >> 32)); }
        break;
      case K_TEST_PARITY: case K_TRY_PARITY: case K_TEST_TOKEN: case K_TRY_TOKEN:
        sep(); printf("\"result\": %s", r.res ? "true" : "false"); break;
      case K_PENDING_COUNT: sep(); printf("\"result\": %u", (unsigned)r.res); break;
      case K_INVAL: sep(); printf("\"word\": \"0x%016llx\"", r.res); break;
      case K_ARRIVE_THREADS: case K_ARRIVE_WARPS: case K_ARRIVE_THREADS_CNT: {
        Rec& rw = hrec[i];
        if (o.kind == K_ARRIVE_WARPS) std::sort(rw.lanetok, rw.lanetok + o.a);  // warps race: sorted
        sep(); printf("\"lane_tokens\": [");
        for (int l = 0; l < (o.kind == K_ARRIVE_THREADS_CNT ? o.mask : o.a); ++l) printf("%s\"0x%08x\"", l ? ", " : "", r.lanetok[l]);
        printf("]");
        break;
      }
      default: break;
    }
    if (o.kind == K_BULK || o.kind == K_TENSOR) {
      sep(); printf("\"data_ok\": {");
      bool f2 = true;
      for (int c = 0; c < s.ncta; ++c)
        if (r.data[c]) { printf("%s\"%d\": %s", f2 ? "" : ", ", c, r.data[c] == 1 ? "true" : "false"); f2 = false; }
      printf("}");
    }
    sep(); printf("\"state\": {");
    bool f3 = true;
    for (int c = 0; c < s.ncta; ++c)
      for (int b = 0; b < NB; ++b) {
        unsigned f = r.obs[c][b][0];
        if (!(f & 1)) continue;
        printf("%s\"%d:%d\": {\"parity0\": %s, \"parity1\": %s", f3 ? "" : ", ", c, b, (f & 2) ? "true" : "false",
               (f & 4) ? "true" : "false");
        if (f & 8) printf(", \"hi\": \"0x%08x\"", r.obs[c][b][1]);
        printf("}");
        f3 = false;
      }
    printf("}}}");
  }
  printf("\n  ]}\n");
  return 0;
}
