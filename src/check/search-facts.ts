/**
 * What the search knows of a program before it starts: static tables computed once per search
 * from the program and its analysis, read by the hazard detectors and the reductions (which CTA a
 * key is in, which keys overlap, which barriers are waited on, per-agent role code and reduction
 * classes, the flat table of history slots, and the names reports use).
 */
import type { Instr, OpInstr, Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import { pointAccess } from '../machine/ops/index.js';
import { keysOverlap } from '../machine/views.js';
import type { Analysis, PorClass } from './analysis.js';

/** A source location as a hazard key part (`file:line:col`, `-` without one). */
export const locKey = (l?: SrcLoc): string => (l ? `${l.file ?? ''}:${l.line}:${l.col}` : '-');

/** The search's static tables of one program (see {@link searchFacts}). */
export interface SearchFacts {
  /** The CTA of barrier key `k` / buffer key `k`. */
  barCta(k: number): number;
  bufCta(k: number): number;
  /** Byte ranges of the buffers (`bufferSpace.overlap`), or null when only equal keys conflict. */
  ov: Program['bufferSpace']['overlap'];
  /** Whether buffer keys `a` and `b` conflict: equal, or their bytes overlap. */
  conf(a: number, b: number): boolean;
  /**
   * The subject of a race between accesses to buffer keys `a` and `b`: with byte ranges the two may
   * differ, and the report must not depend on which came first (the lower key names it).
   */
  raceBuf(a: number, b: number): number;
  /** The agents of each CTA. */
  ctaAgents: number[][];
  /** Barrier keys some agent may wait on (1): a data barrier instance outside it is a `missing-wait`. */
  waitedKey: Uint8Array;
  /** Agents of more than one warp: a wait_group of their elected thread alone orders only it (B18). */
  multiWarp: boolean[];
  anyMultiWarp: boolean;
  /** Whether any arrive names another CTA's barrier (the `scope` checks run only then). */
  remoteArrives: boolean;
  /** Roles whose threads other than the elected one access shared memory (EG_MB entries matter only there). */
  allThreadAccess: boolean[];
  /** Each agent's role code, and its role's reduction class per pc (`an.por`). */
  agentCode: Instr[][];
  agentPor: PorClass[][];
  /** A CTA as reports name it: `the CTA`, `CTA 1`, or `CTA 1 of cluster 3`. */
  ctaLabel(cta: number): string;
  /** The instruction at `pc` of agent `a` (for phase-alias reports). */
  insAt(a: number, pc: number): Instr | undefined;
  /** Barrier keys of the launch. */
  nBars: number;
  /** Whether some role executes barrier.cluster.arrive (else cluster rounds never change). */
  usesCluster: boolean;
  /** History slot of (agent, barrier key), or -1 (see {@link flatWaitSlots}). */
  slotOf(a: number, k: number): number;
  /** Per barrier key: 1 when its array receives direct expect_tx / complete_tx (the analysis's `directTx`). */
  directTxKey: Uint8Array;
  /** Per barrier key: 1 when its array is commit-only (the analysis's `commitOnly`). */
  commitOnlyKey: Uint8Array;
  /** Per barrier key: 1 when some cp.async.mbarrier.arrive names its array (landings on it are never postponed). */
  cpaKey: Uint8Array;
  /** The name of agent `a`. */
  agentName(a: number): string;
  /** `write of B` / `read of B` for an access code (buffer key·2 + write). */
  accessText(v: number): string;
}

/** The static tables of program `p` with analysis `an`. */
export function searchFacts(p: Program, an: Analysis): SearchFacts {
  // Byte ranges: keys conflict when their bytes overlap; without ranges or aliases (ov null) only equal keys do.
  const ov = p.bufferSpace.overlap;
  const L = p.buffersPerCta;
  const ctaAgents: number[][] = Array.from({ length: p.ctas }, () => []);
  for (const a of p.agents) ctaAgents[a.cta]!.push(a.id);
  const nBars = p.ctas * p.barriersPerCta;
  const waitedKey = new Uint8Array(nBars);
  for (const ws of an.waitSlots) for (const k of ws.keys()) waitedKey[k] = 1;
  const multiWarp = p.agents.map((a) => a.warps > 1);
  const hasOp = (name: string, also: (ins: OpInstr) => boolean = () => true) =>
    p.roles.some((rc) => rc.code.some((ins) => ins.i === 'op' && ins.op.op === name && also(ins)));
  return {
    barCta: (k) => Math.floor(k / p.barriersPerCta),
    bufCta: (k) => Math.floor(k / p.buffersPerCta),
    ov,
    conf: (a, b) => a === b || (ov !== null && keysOverlap(ov, L, a, b)),
    raceBuf: (a, b) => (a === b || b < 0 ? a : a < 0 ? b : Math.min(a, b)),
    ctaAgents,
    waitedKey,
    multiWarp,
    anyMultiWarp: multiWarp.some(Boolean),
    remoteArrives: hasOp('mbarrier.arrive', (ins) => ins.op.op === 'mbarrier.arrive' && ins.op.bar.cta !== undefined),
    allThreadAccess: p.roles.map((rc) => rc.code.some((ins) => ins.i === 'op' && ins.per !== 'one' && pointAccess(ins.opc) !== undefined)),
    agentCode: p.agents.map((ag) => p.roles[ag.role]!.code),
    agentPor: p.agents.map((ag) => an.por[ag.role]!),
    ctaLabel: (cta) => (p.ctas > 1 ? `CTA ${cta % p.clusterSize}${p.grid > 1 ? ` of cluster ${Math.floor(cta / p.clusterSize)}` : ''}` : 'the CTA'),
    insAt: (a, pc) => p.roles[p.agents[a]!.role]!.code[pc],
    nBars,
    usesCluster: hasOp('barrier.cluster.arrive'),
    // A launch of 33,792 agents and 262,144 barriers would need 35 GB flat.
    slotOf: flatWaitSlots(an.waitSlots, p.agents.length, nBars),
    ...barrierKeyFlags(p, an, nBars),
    agentName: (a) => p.agents[a]!.name,
    accessText: (v) => `${v & 1 ? 'write' : 'read'} of ${p.bufferName(v >> 1)}`,
  };
}

/** Per barrier key: the flags of its array (`directTxKey`, `commitOnlyKey`, `cpaKey` of {@link SearchFacts}). */
function barrierKeyFlags(p: Program, an: Analysis, nBars: number): Pick<SearchFacts, 'directTxKey' | 'commitOnlyKey' | 'cpaKey'> {
  const directTxKey = new Uint8Array(nBars);
  const commitOnlyKey = new Uint8Array(nBars);
  const cpaKey = new Uint8Array(nBars);
  const cpaArrays = new Set<string>();
  for (const rc of p.roles) for (const ins of rc.code) if (ins.i === 'op' && ins.op.op === 'cp.async.mbarrier.arrive') cpaArrays.add(ins.op.bar.name);
  for (let k = 0; k < nBars; k++) {
    const name = p.barrierOf(k).info.name;
    cpaKey[k] = cpaArrays.has(name) ? 1 : 0;
    directTxKey[k] = an.directTx.has(name) ? 1 : 0;
    commitOnlyKey[k] = an.commitOnly?.has(name) ? 1 : 0;
  }
  return { directTxKey, commitOnlyKey, cpaKey };
}

/** Cells of the flat (agent, barrier key) table of history slots at most (16 MiB of Int32). */
const FLAT_WAIT_SLOTS = 1 << 22;

/**
 * The history slot of (agent `a`, barrier key `k`) from per-agent maps `waitSlots`, or -1: a flat
 * Int32 table when `agents × nBars` is at most {@link FLAT_WAIT_SLOTS}, else the maps themselves.
 */
export function flatWaitSlots(waitSlots: readonly Map<number, number>[], agents: number, nBars: number): (a: number, k: number) => number {
  if (agents * nBars > FLAT_WAIT_SLOTS) return (a, k) => waitSlots[a]?.get(k) ?? -1;
  const t = new Int32Array(agents * nBars).fill(-1);
  waitSlots.forEach((ws, a) => ws.forEach((slot, k) => {
    if (k >= 0 && k < nBars) t[a * nBars + k] = slot;
  }));
  return (a, k) => t[a * nBars + k]!;
}
