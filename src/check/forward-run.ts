/**
 * The forward run of stable.ts: one other agent run from its position, without changing the
 * state, reporting what it can signal before it certainly blocks while the asking agent stays put
 * (the module comment of stable.ts says when it blocks and when it gives up).
 */
import { testParity } from '../model/mbarrier.js';
import type { AsyncOp, MachineState } from '../machine/machine.js';
import { NAMED_PER_CTA, waitGroupNeeds } from '../machine/state.js';
import { maskRanks } from '../machine/cta-mask.js';
import { perThreads, type Instr, type OpInstr, type Program } from '../machine/program.js';
import { OPC } from '../machine/ops/index.js';

/** Most instructions one agent is run forward per question (then the answer is "not stable"). */
export const FORWARD_BUDGET = 20_000;
/** What {@link runForward} returns when it cannot tell where the agent blocks. */
export const GIVE_UP = -1;
const OPC_ST_ASYNC = OPC['st.async'];
const OPC_CHOOSE = OPC['choose'];
const OPC_TRY_CANCEL = OPC['clc.try_cancel'];
const OPC_DSMEM = OPC['cp.async.bulk.shared::cluster'];
const OPC_BAR_SYNC = OPC['bar.sync'];
const OPC_BAR_ARRIVE = OPC['bar.arrive'];
const OPC_BULK_COMMIT = OPC['cp.async.bulk.commit_group'];
const OPC_BULK_WAIT = OPC['cp.async.bulk.wait_group'];

/**
 * What a step may contribute to barrier `key`: `count` arrivals, a tx-count change (`bytes`), an
 * init / inval; `raise`: the bytes each of the arrivals registers with `expect_tx` (0 for a plain
 * arrive); `deliver`: the bytes it credits with `complete_tx` (Infinity when not known).
 */
export type Signal = (key: number, count: number, bytes: boolean, init: boolean, raise?: number, deliver?: number) => void;

/** What a forward run reads and reports to (see {@link runForward}). */
export interface Forward {
  gated: Uint8Array;
  /** Per barrier: the phase completions the others can bring while A stays put. */
  comps: Float64Array;
  /** Named barriers whose current generation cannot complete while A stays put. */
  namedGated: Uint8Array;
  /**
   * Per named barrier: how many generations, the current one first, the others can complete while
   * A stays put (0 while gated). A run's j-th `bar.sync` on one named barrier needs j of them
   * (each `bar.sync` waits for the generation it joined, and the next one joins a later one).
   */
  namedComps: Float64Array;
  signal: Signal;
  /**
   * A wait on barrier `key` that the run passes, relying on `relied` completions of it (0: it
   * passes on the barrier's current phase, the parity of the phase before).
   */
  pass: (key: number, relied: number) => void;
  /** `threads` arrive on named barrier `key`, whose instruction names `count` threads. */
  arriveNamed: (key: number, threads: number, count: number) => void;
  budget: { left: number };
  /** Set by the callbacks once the question's answer is certainly false: the runs stop. */
  failed: boolean;
  /** Called with every operation agent `x` reaches (the stable-access question); true: a conflict. */
  touch: ((x: number, op: OpInstr, f: number[]) => boolean) | null;
  /** Called when agent `x`'s forward run begins (before its first `touch`). */
  begin: ((x: number) => void) | null;
  /** Called when agent `x`'s forward run reaches its end or an `exit` (the agent could finish). */
  ended?: ((x: number) => void) | null;
  /**
   * Set by {@link runForward} when the run blocked where more completions can let it go on (a wait
   * whose barrier needs more completions, a `bar.sync` whose generation cannot complete): where
   * to resume it; null otherwise (it ended, gave up, or blocked for good).
   */
  blocked?: Cont | null;
  /**
   * A wgmma or bulk store in flight that stays in flight (the question is about its completion,
   * stable-group.ts): a wait_group of its family (of its warpgroup; of its issuer) that needs its
   * group blocks.
   */
  wgHeld?: AsyncOp | null;
  /**
   * A remote arrive that agent `x` issues at `pc` onto barrier `key` with `count` arrivals and whose
   * landing the question holds back with the one it asks about (stable-landing.ts: an arrive alike
   * it, landing-order.ts): true when not signalled.
   */
  held?: ((x: number, op: OpInstr, pc: number, key: number, count: number) => boolean) | null;
}

/**
 * Where a forward run blocked, to resume it there once the condition lifts (stable.ts: a later
 * round of the fixpoint only grows the completions, so the run up to here is the same): its
 * position, locals and counters, and what it waits for.
 */
export interface Cont {
  pc: number;
  f: number[];
  used: Map<number, number>;
  issued: number;
  group: number;
  groupTop: Map<number, number> | null;
  /** Bulk async-groups the agent has committed (its count when the run began, plus the run's commits). */
  bulk: number;
  /** Steps taken so far (the run's budget counts them all). */
  steps: number;
  /** Barrier key whose completions must reach `need` for the run to go on, or -1. */
  bar: number;
  need: number;
  /** Named barrier key whose generation must become completable for the run to go on, or -1. */
  named: number;
}

const CTA_THREADS = new WeakMap<Program, number[]>();
/** Threads of each CTA (the default thread count of `bar.sync`). */
function ctaThreads(p: Program, cta: number): number {
  let t = CTA_THREADS.get(p);
  if (!t) {
    t = new Array<number>(p.ctas).fill(0);
    for (const ag of p.agents) t[ag.cta]! += ag.threads;
    CTA_THREADS.set(p, t);
  }
  return t[cta]!;
}

/** Per barrier key: the completions one forward run has relied on (cleared per run; runs do not overlap). */
const usedScratch = new Map<number, number>();

let frameScratch: number[] = [];
/**
 * A copy of `frame` in one reused array (a forward run writes its locals there, never into the
 * state's frame; runs do not overlap). Entries past `frame.length` are stale and never read: a
 * role's code reads only its own slots.
 */
function frameCopy(frame: readonly number[]): number[] {
  if (frameScratch.length < frame.length) frameScratch = new Array<number>(frame.length).fill(0);
  for (let i = 0; i < frame.length; i++) frameScratch[i] = frame[i]!;
  return frameScratch;
}

/**
 * Runs agent `x` forward from its position without changing `s`, calling `signal` with every
 * barrier key it signals before it certainly blocks, and `pass` with every barrier key whose wait
 * it passes (see the module comment), while agent `a` stays put (`a` < 0: none does). `from`: go
 * on from where an earlier run of `x` in `s` blocked (`run.blocked` of that run; the completions
 * have grown since), instead of from its position. Returns 0, or {@link GIVE_UP}; sets
 * `run.blocked`.
 */
export function runForward(p: Program, code: readonly Instr[], s: MachineState, x: number, a: number, run: Forward, from: Cont | null = null): number {
  const { namedComps, signal, pass, arriveNamed, budget } = run;
  run.blocked = null;
  if (!from) run.begin?.(x);
  const ag = s.agents[x]!;
  const f = from ? from.f : frameCopy(ag.frame);
  const used = from ? from.used : usedScratch;
  if (!from) used.clear();
  const infoX = p.agents[x]!;
  // a < 0: no agent stays put (a question about an operation in flight, stable-landing.ts).
  const infoA = a >= 0 ? p.agents[a]! : null;
  const sameWarpgroup = infoA !== null && infoX.wgLeader === infoA.wgLeader;
  const aGroups = a >= 0 ? s.agents[a]!.wgGroup : 0;
  const aIssued = a >= 0 ? s.agents[a]!.wgIssued : 0;
  let issued = from ? from.issued : ag.wgIssued;
  let group = from ? from.group : ag.wgGroup;
  /** Highest wgmma sequence number in each group committed during the run (made at the first commit). */
  let groupTop: Map<number, number> | null = from ? from.groupTop : null;
  let pc = from ? from.pc : ag.pc;
  let steps = from ? from.steps : 0;
  let bulk = from ? from.bulk : ag.bulkGroup;
  /** Blocked at `pc` (or, for a bar.sync, before `pc`) on barrier `bar` needing `need` completions or on named barrier `named`. */
  const block = (bar: number, need: number, named: number, at: number): number => {
    run.blocked = { pc: at, f: from ? f : f.slice(), used: from ? used : new Map(used), issued, group, groupTop, bulk, steps, bar, need, named };
    return 0;
  };
  if (!from && ag.sub >= 0 && code[pc]!.i === 'op' && (code[pc] as OpInstr).opc === OPC_BAR_SYNC) {
    // Waiting in a bar.sync it already arrived at: it stays while its generation cannot complete.
    const key = infoX.cta * NAMED_PER_CTA + ((code[pc] as OpInstr).ints.id!(f) & (NAMED_PER_CTA - 1));
    if (s.named[key]!.gen <= ag.sub) {
      // It waits for generation ag.sub: ag.sub − gen + 1 completions from now (normally 1).
      const need = ag.sub - s.named[key]!.gen + 1;
      used.set(-1 - key, need);
      if (namedComps[key]! < need) return block(-1, need, key, pc + 1);
    }
    pc++;
  }
  try {
    for (; steps < FORWARD_BUDGET; steps++) {
      if (--budget.left < 0 || run.failed) return GIVE_UP;
      const ins = code[pc]!;
      switch (ins.i) {
        case 'set': f[ins.slot] = ins.e(f); pc++; continue;
        case 'jmp': pc = ins.to; continue;
        case 'jz': pc = ins.e(f) ? pc + 1 : ins.to; continue;
        case 'end': run.ended?.(x); return 0;
        default: break;
      }
      const op = ins as OpInstr;
      if (run.touch && run.touch(x, op, f)) {
        run.failed = true;
        return GIVE_UP;
      }
      switch (op.opc) {
        case 5: { // mbarrier.wait
          const w = op.op as Extract<OpInstr['op'], { op: 'mbarrier.wait' }>;
          if (w.dest !== undefined || w.token !== undefined || !op.ints.parity) return GIVE_UP;
          const key = op.bar!(f);
          if (key < 0) return 0; // faults when executed
          const bk = s.bars[key]!;
          if (bk.status === 'valid') {
            // The completions of this barrier the run has relied on so far: a wait for the parity
            // the barrier will have after them needs one more, within what the others can bring.
            const u = used.get(key) ?? 0;
            let relied = u;
            if (((bk.phase + u) & 1) === (op.ints.parity(f) & 1)) {
              if (u + 1 > run.comps[key]!) return block(key, u + 1, -1, pc); // blocked while A stays
              used.set(key, u + 1);
              relied = u + 1;
            }
            pass(key, relied);
            break;
          }
          pass(key, 0);
          break;
        }
        case 6: // mbarrier.pending_count: a value the run cannot know
          return GIVE_UP;
        case 25: // ld.shared: a value it reads (machine/values.ts) is one the run cannot know
          if (op.dest !== undefined) return GIVE_UP;
          break;
        case OPC_TRY_CANCEL: { // its response brings 16 bytes to its barrier (every CTA's with multicast)
          const key = op.bar!(f);
          if (key < 0) break;
          const off = key % p.barriersPerCta;
          const base = Math.floor(key / p.barriersPerCta);
          const all = (op.op as { multicast?: boolean }).multicast === true;
          const first = all ? base - (base % p.clusterSize) : base;
          for (let c = first; c < (all ? first + p.clusterSize : base + 1); c++) signal(c * p.barriersPerCta + off, 0, true, false, 0, 16);
          break;
        }
        case 0: case 1: case 2: case 3: case 4: case 7: case 12: case 18: { // init, inval, arrive, expect_tx, complete_tx, TMA, commit, cp.async arrive
          const key = op.bar!(f);
          if (key < 0) break;
          const lanes = perThreads(op.per, infoX);
          const count = op.opc === 2 ? (op.ints.count ? op.ints.count(f) : 1) * lanes : op.opc === 12 ? 1 : op.opc === 18 ? infoX.threads : 0;
          // Bytes: any change of the tx-count, an expect_tx's raise included (it begins the phase a
          // passing wait's checks see, stableWait), not only the complete_tx that lowers it.
          const bytes = op.opc === 3 || op.opc === 4 || op.opc === 7 || (op.opc === 2 && !!op.ints.expectTx);
          // The bytes each arrival registers (arrive.expect_tx: the operand, shared by the arrive
          // count), and the bytes credited (a copy's to each destination; complete_tx per thread).
          const raise = op.opc === 2 && op.ints.expectTx ? op.ints.expectTx(f) / (op.ints.count ? op.ints.count(f) : 1) : 0;
          const deliver = op.opc === 7 ? op.ints.bytes!(f) : op.opc === 4 ? op.ints.bytes!(f) * lanes : 0;
          // A multicast copy or commit signals the barrier at the same offset in each CTA its mask
          // selects (machine/cta-mask.ts; offsets relative to the named barrier's rank, as ops/bulk.ts
          // and ops/tcgen05.ts place them); a mask selecting none faults when executed.
          if ((op.opc === 7 || op.opc === 12) && op.ints.multicast) {
            const sel = maskRanks(op.ints.multicast(f), p.clusterSize);
            if (!Array.isArray(sel)) break;
            const from = Math.floor(key / p.barriersPerCta) % p.clusterSize;
            for (const r of sel) signal(key + (r - from) * p.barriersPerCta, count, bytes, false, raise, deliver);
          } else if (!(op.opc === 2 && run.held && run.held(x, op, pc, key, count))) signal(key, count, bytes, op.opc <= 1, raise, deliver);
          break;
        }
        case 14: // wgmma.mma_async
          issued++;
          break;
        case 15: // wgmma.commit_group
          (groupTop ??= new Map()).set(group, issued - 1);
          group++;
          break;
        case OPC_BULK_COMMIT:
          bulk++;
          break;
        case OPC_BULK_WAIT: { // needs the bulk store asked about: blocks
          const h = run.wgHeld;
          if (h && h.kind === 'bulk.store' && h.agent === x && waitGroupNeeds(bulk, op.ints.n!(f), h.group)) return 0;
          break;
        }
        case 16: { // wgmma.wait_group
          const h = run.wgHeld;
          if (h && h.kind === 'wgmma' && infoX.wgLeader === h.agent && waitGroupNeeds(group, op.ints.n!(f), h.group)) return 0; // needs the wgmma asked about
          if (!sameWarpgroup || !infoA) break;
          const limit = group - op.ints.n!(f);
          // A leader that stays put commits no more groups: a warp waiting for a later one blocks.
          if (infoA.wgLeader === a && aGroups < limit) return 0;
          // An MMA of a needed group that A has not issued cannot complete while A stays.
          for (const o of s.inflight) if (o.kind === 'wgmma' && o.agent === infoA.wgLeader && o.group < limit && o.seq >= aIssued) return 0;
          if (groupTop) for (const [g, top] of groupTop) if (g < limit && top >= aIssued) return 0;
          break;
        }
        case 28: // exit
          run.ended?.(x);
          return 0;
        case OPC_BAR_SYNC: case OPC_BAR_ARRIVE: { // named barriers: whole warps arrive (barriers.ts)
          const key = infoX.cta * NAMED_PER_CTA + (op.ints.id!(f) & (NAMED_PER_CTA - 1));
          const count = op.ints.threads ? op.ints.threads(f) : ctaThreads(p, infoX.cta);
          arriveNamed(key, 32 * (op.per === 'one' ? 1 : infoX.warps), count);
          if (op.opc === OPC_BAR_SYNC) {
            // Its j-th bar.sync on the barrier in this run needs j generations completed (`used`
            // keeps them under the key −1 − key, beside the mbarrier completions relied on).
            const need = (used.get(-1 - key) ?? 0) + 1;
            used.set(-1 - key, need);
            if (namedComps[key]! < need) return block(-1, need, key, pc + 1); // arrived, and stays while A stays
          }
          break;
        }
        case OPC_ST_ASYNC: case OPC_DSMEM: { // st.async / red.async, cp.async.bulk.shared::cluster: bytes on their barrier
          const key = op.bar!(f);
          if (key >= 0) signal(key, 0, true, false, 0, op.ints.bytes!(f) * perThreads(op.per, infoX));
          break;
        }
        default:
          // choose, global loads / atomics / spins, launch-control queries: values and waits the run cannot know.
          if (op.opc >= OPC_CHOOSE) return GIVE_UP;
          break;
      }
      pc++;
    }
  } catch {
    return GIVE_UP; // an expression that faults: the machine reports it when the agent gets there
  }
  return GIVE_UP;
}
