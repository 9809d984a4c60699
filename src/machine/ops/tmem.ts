/**
 * Tensor Memory management and the tcgen05 thread-synchronization fences (PTX ISA §9.7.16.7.1,
 * §9.7.16.11.1):
 *
 * - `tcgen05.alloc` allocates the columns declared for a TMEM buffer (`tmem NAME cols=N`, a power
 *   of two, 32 … 512) out of its CTA's 512 and blocks while fewer are free; the allocating warp
 *   holds them until its `tcgen05.dealloc`. Every column must be freed before the CTA exits.
 * - `tcgen05.relinquish_alloc_permit`: the CTA may not allocate any more.
 * - `.cta_group::2` (alloc, dealloc, relinquish): the CTA pair (ranks 2p, 2p + 1 of a cluster)
 *   allocates together: one warp of each CTA issues the instruction and the columns are allocated
 *   (freed) in both CTAs' Tensor Memory. A warp at a pair operation takes three steps, each
 *   changing only its own record: it joins (`sub` = {@link PAIR_JOINED}); once the peer CTA's warp
 *   is at the same operation on the same element, it does its own CTA's half (`sub` =
 *   {@link PAIR_DONE}; the first of the two checks the free columns of the pair); once the peer has
 *   done its half too, it moves on. A pair alloc's columns count as used in both CTAs from the
 *   first half on (`Program.tmemPair`: every allocation of such a kernel is a pair's). A warp
 *   whose peer never comes is a hang, explained by {@link explainPair}.
 * - `tcgen05.fence::before_thread_sync` / `::after_thread_sync` change no state: what they order
 *   is a checker rule (docs/CHECK.md, "tcgen05 fences").
 *
 * Allocation state lives in the agents' records (`tmemHeld`, `tmemFreed`, `tmemRelinquished`), so
 * a step changes only its actor's record. tcgen05 has no hardware here: these rules come from the
 * PTX ISA alone.
 */
import { diagnostic } from '../../model/mbarrier.js';
import { DIAG } from '../../model/diagnostics.js';
import { TMEM_COLUMNS, type OpInstr, type Program } from '../program.js';
import type { MachineState, StepOut } from '../state.js';
import type { OpCtx, OpDef, OpK } from './types.js';

/** Allocation slot (bit of `AgentState.tmemHeld`) of buffer key `buf`, or -1 when it is not managed TMEM (no `cols=`). */
export function tmemSlot(p: Program, buf: number): number {
  const { info, index } = p.bufferOf(buf);
  return info.tmemSlot === undefined ? -1 : info.tmemSlot + index;
}

/** `AgentState.sub` of a warp that joined a pair operation (`.cta_group::2`) and waits for the peer CTA's warp. */
export const PAIR_JOINED = 0;
/** `AgentState.sub` of a warp that did its CTA's half of a pair operation and waits for the peer's half. */
export const PAIR_DONE = 1;

/** Slots held by the agents of CTA `cta` (a mask over `Program.tmemCols`). */
function heldMask(m: OpCtx, s: MachineState, cta: number): number {
  let h = 0;
  for (const o of m.ctaAgents[cta]!) h |= s.agents[o]!.tmemHeld;
  return h;
}

/**
 * Columns of CTA `cta` allocated in `s` (sum over its agents' held slots; in a kernel whose
 * allocations are a CTA pair's, the slots held in either CTA of the pair).
 */
export function tmemInUse(m: OpCtx, s: MachineState, cta: number): number {
  let n = 0;
  const cols = m.program.tmemCols;
  const h = heldMask(m, s, cta) | (m.program.tmemPair ? heldMask(m, s, cta ^ 1) : 0);
  if (h) for (let i = 0; i < cols.length; i++) if (h & (1 << i)) n += cols[i]!;
  return n;
}

/** The agent of CTA `cta` holding slot `slot`, or -1. */
export function tmemHolder(m: OpCtx, s: MachineState, cta: number, slot: number): number {
  for (const o of m.ctaAgents[cta]!) if (s.agents[o]!.tmemHeld & (1 << slot)) return o;
  return -1;
}

/**
 * Reports an access of agent `a` (operation `ins`) to TMEM buffer `buf` that is not allocated now
 * (managed buffers only): before any alloc, or after its dealloc. Returns nothing; the access goes on.
 */
export function checkTmemUse(m: OpCtx, s: MachineState, a: number, ins: OpInstr, buf: number, out: StepOut): void {
  const p = m.program;
  if (p.bufferOf(buf).info.space !== 'tmem') return;
  const slot = tmemSlot(p, buf);
  if (slot < 0) return;
  const cta = m.bufCta(buf);
  if (tmemHolder(m, s, cta, slot) >= 0) return;
  let freed = false;
  for (const o of m.ctaAgents[cta]!) if (s.agents[o]!.tmemFreed & (1 << slot)) freed = true;
  const when = freed ? 'after its tcgen05.dealloc' : 'before any tcgen05.alloc of it';
  m.diag(s, out, diagnostic(DIAG.tmemUnallocated, `${ins.text}: ${p.bufferName(buf)} is Tensor Memory that is not allocated now (${when})`), a, -1, -1, ins.loc, buf);
}

/**
 * Registers an asynchronous `tcgen05.ld` of agent `a` loaded are used by `ins` (a store of them)
 * before its `tcgen05.wait::ld`: reported (`tmem-ld-unwaited`).
 */
export function checkLdWaited(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, buf: number): void {
  const n = s.agents[a]!.tcLdUnwaited;
  if (!n) return;
  m.diag(s, out, diagnostic(DIAG.tmemLdUnwaited, `${ins.text}: stores registers while ${n} tcgen05.ld of ${m.program.agents[a]!.name} ha${n === 1 ? 's' : 've'} not been waited for (tcgen05.wait::ld): the loaded registers are not valid yet`), a, -1, -1, ins.loc, buf);
}

/** `tcgen05.alloc`: enabled while the CTA has the buffer's columns free. */
function allocEnabled(m: OpCtx, s: MachineState, a: number, ins: OpInstr): boolean {
  const buf = ins.buf!(s.agents[a]!.frame);
  if (buf < 0) return true; // the step reports the bad reference
  const slot = tmemSlot(m.program, buf);
  if (slot < 0) return true;
  const cta = m.bufCta(buf);
  if (tmemHolder(m, s, cta, slot) >= 0) return true; // a double alloc: reported, not blocked
  return tmemInUse(m, s, cta) + m.program.tmemCols[slot]! <= TMEM_COLUMNS;
}

function execAlloc(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const p = m.program;
  const ag = s.agents[a]!;
  const buf = ins.buf!(ag.frame);
  if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  const slot = tmemSlot(p, buf);
  const cta = m.bufCta(buf);
  const pair = (ins.op as OpK<'tcgen05.alloc'>).pair === true;
  if (relinquished(m, s, cta, pair)) {
    const who = pair ? 'a warp of this CTA pair' : 'a warp of this CTA';
    m.diag(s, out, diagnostic(DIAG.tmemAllocRelinquished, `${ins.text}: ${who} has executed tcgen05.relinquish_alloc_permit; the CTA${pair ? ' pair' : ''} may not allocate Tensor Memory any more`), a, -1, -1, ins.loc, buf);
  }
  const holder = tmemHolder(m, s, cta, slot);
  if (holder >= 0) {
    m.diag(s, out, diagnostic(DIAG.tmemAllocState, `${ins.text}: ${p.bufferName(buf)} is already allocated (by ${p.agents[holder]!.name}) and not deallocated`), a, -1, -1, ins.loc, buf);
    return true;
  }
  ag.tmemHeld |= 1 << slot;
  ag.tmemFreed &= ~(1 << slot);
  return true;
}

/** Whether any warp of CTA `cta` (and, for a pair operation, of its peer) has relinquished the allocation permit. */
function relinquished(m: OpCtx, s: MachineState, cta: number, pair: boolean): boolean {
  if (m.ctaAgents[cta]!.some((o) => s.agents[o]!.tmemRelinquished)) return true;
  return pair && m.ctaAgents[cta ^ 1]!.some((o) => s.agents[o]!.tmemRelinquished);
}

function execDealloc(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const p = m.program;
  const ag = s.agents[a]!;
  const buf = ins.buf!(ag.frame);
  if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  const slot = tmemSlot(p, buf);
  const cta = m.bufCta(buf);
  const holder = tmemHolder(m, s, cta, slot);
  if (holder !== a) {
    const why = holder >= 0 ? `it is held by ${p.agents[holder]!.name}, the warp that allocated it (mbsim lets that warp free it)` : 'it is not allocated';
    m.diag(s, out, diagnostic(DIAG.tmemAllocState, `${ins.text}: ${why}`), a, -1, -1, ins.loc, buf);
    return true;
  }
  for (const o of s.inflight) {
    if (o.buf !== buf && !(o.reads && o.reads.includes(buf))) continue;
    m.diag(s, out, diagnostic(DIAG.tmemDeallocInflight, `${ins.text}: frees ${p.bufferName(buf)} while the ${o.kind.replace('tc.', 'tcgen05.')} issued by ${p.agents[o.agent]!.name} (line ${o.loc.line}) still accesses it`), a, -1, -1, ins.loc, buf);
  }
  ag.tmemHeld &= ~(1 << slot);
  ag.tmemFreed |= 1 << slot;
  out.other = true; // an alloc blocked on the columns may proceed
  return true;
}

/**
 * The warp of the peer CTA resting at the pair operation `ins` (same op, `.cta_group::2`, the same
 * allocation slot) with `sub` at least `minSub`, or -1.
 */
function peerAt(m: OpCtx, s: MachineState, a: number, ins: OpInstr, slot: number, minSub: number, maxSub = PAIR_DONE): number {
  const p = m.program;
  for (const o of m.ctaAgents[p.agents[a]!.cta ^ 1]!) {
    const og = s.agents[o]!;
    if (og.status !== 'run' || og.sub < minSub || og.sub > maxSub) continue;
    const oi = p.roles[p.agents[o]!.role]!.code[og.pc];
    if (!oi || oi.i !== 'op' || oi.opc !== ins.opc || !(oi.op as { pair?: boolean }).pair) continue;
    const b = oi.buf!(og.frame);
    if (b >= 0 && tmemSlot(p, b) === slot) return o;
  }
  return -1;
}

/** Slot of the pair operation `ins` of agent `a`, or -1 when its buffer reference is bad (the step reports it). */
function pairSlot(m: OpCtx, s: MachineState, a: number, ins: OpInstr): number {
  const buf = ins.buf!(s.agents[a]!.frame);
  return buf < 0 ? -1 : tmemSlot(m.program, buf);
}

/** A pair alloc / dealloc (`.cta_group::2`): whether agent `a` may take its next step (join, its half, leave). */
function pairEnabled(m: OpCtx, s: MachineState, a: number, ins: OpInstr, ag: { sub: number }): boolean {
  if (ag.sub < PAIR_JOINED) return true;
  const slot = pairSlot(m, s, a, ins);
  if (slot < 0) return true;
  if (ag.sub === PAIR_DONE) {
    // Leaves once the peer's warp has done its half (it no longer rests joined at this operation).
    return peerAt(m, s, a, ins, slot, PAIR_JOINED, PAIR_JOINED) < 0;
  }
  if (peerAt(m, s, a, ins, slot, PAIR_DONE) >= 0) return true; // the peer did its half first
  if (peerAt(m, s, a, ins, slot, PAIR_JOINED) < 0) return false;
  if (ins.op.op !== 'tcgen05.alloc') return true;
  const cta = m.program.agents[a]!.cta;
  if (tmemHolder(m, s, cta, slot) >= 0) return true; // a double alloc: reported, not blocked
  // The first half of the pair checks the columns of both CTAs (they are used alike).
  return tmemInUse(m, s, cta) + m.program.tmemCols[slot]! <= TMEM_COLUMNS;
}

/** A pair alloc / dealloc: join, then this CTA's half, then move on (three steps; see the module comment). */
function execPair(half: (m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut) => boolean) {
  return (m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean => {
    const ag = s.agents[a]!;
    out.other = true; // the peer's warp may take its next step
    if (ag.sub < PAIR_JOINED) {
      if (ins.buf!(ag.frame) < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
      ag.sub = PAIR_JOINED;
      return false;
    }
    if (ag.sub === PAIR_JOINED) {
      if (!half(m, s, a, ins, out) || ag.status !== 'run') return false;
      ag.sub = PAIR_DONE;
      return false;
    }
    ag.sub = -1;
    return true;
  };
}

/**
 * Why agent `a`, blocked in the pair alloc / dealloc `ins`, cannot go on: its peer CTA's warp has
 * not issued the same operation (which warps of the peer CTA could still), or too few columns.
 */
export function explainPair(m: OpCtx, s: MachineState, a: number, ins: OpInstr): { reasons: string[]; holders: number[] } {
  const p = m.program;
  const ag = s.agents[a]!;
  const slot = pairSlot(m, s, a, ins);
  const cta = p.agents[a]!.cta;
  const peerCta = cta ^ 1;
  const ctaName = (c: number) => `CTA ${p.agents[m.ctaAgents[c]![0]!]!.rank}`;
  if (ag.sub === PAIR_DONE) {
    const o = peerAt(m, s, a, ins, slot, PAIR_JOINED, PAIR_JOINED);
    return { reasons: [`${ins.text}: ${p.agents[a]!.name} did its CTA's half and waits for ${o >= 0 ? p.agents[o]!.name : `the warp of ${ctaName(peerCta)}`} to do the other`], holders: o >= 0 ? [o] : [] };
  }
  const peer = peerAt(m, s, a, ins, slot, PAIR_JOINED);
  if (peer >= 0 && ins.op.op === 'tcgen05.alloc') return explainAlloc(m, s, a, ins);
  const code = (o: number) => p.roles[p.agents[o]!.role]!.code;
  const issues = (o: number) => code(o).some((i) => i.i === 'op' && i.opc === ins.opc && (i.op as { pair?: boolean }).pair === true);
  const can = m.ctaAgents[peerCta]!.filter((o) => s.agents[o]!.status === 'run' && issues(o));
  const where = m.ctaAgents[peerCta]!.map((o) => {
    const og = s.agents[o]!;
    if (og.status !== 'run') return `${p.agents[o]!.name} ${og.status === 'done' ? 'has exited' : 'has stopped'}`;
    const oi = code(o)[og.pc];
    return oi && oi.i === 'op' ? `${p.agents[o]!.name} is at ${oi.text} (line ${oi.loc.line})` : `${p.agents[o]!.name} is running`;
  });
  const target = slot >= 0 ? p.bufferName(ins.buf!(ag.frame)).replace(/@c\d+$/, '') : 'the same buffer';
  const reasons = [
    `${p.agents[a]!.name} of ${ctaName(cta)} waits for a warp of ${ctaName(peerCta)}, the other CTA of the pair, to issue ${ins.op.op}.cta_group::2 ${target} too: one warp of each CTA of the pair must issue it (PTX ISA §9.7.16.7.1) (${where.join('; ') || 'no warps'})`,
  ];
  if (!can.length) reasons.push(`no running warp of ${ctaName(peerCta)} can still issue ${ins.op.op}.cta_group::2: the pair's ${ins.op.op === 'tcgen05.alloc' ? 'allocation' : 'deallocation'} can never complete`);
  return { reasons, holders: can };
}

/**
 * Called when agent `a` finishes: once every agent of its CTA has, any TMEM column still allocated
 * is reported (`tmem-leak`).
 */
export function tmemAtExit(m: OpCtx, s: MachineState, a: number, out: StepOut): void {
  const p = m.program;
  if (!p.tmemCols.length) return;
  const cta = p.agents[a]!.cta;
  const mine = m.ctaAgents[cta]!;
  if (mine.some((o) => s.agents[o]!.status === 'run')) return;
  const held: string[] = [];
  let first = -1;
  for (const o of mine) {
    const h = s.agents[o]!.tmemHeld;
    if (!h) continue;
    for (const info of p.buffers) {
      if (info.tmemSlot === undefined) continue;
      for (let i = 0; i < info.length; i++) {
        if (!(h & (1 << (info.tmemSlot + i)))) continue;
        const key = cta * p.buffersPerCta + info.offset + i;
        if (first < 0) first = key;
        held.push(`${p.bufferName(key)} (${info.cols} columns, allocated by ${p.agents[o]!.name})`);
      }
    }
  }
  if (!held.length) return;
  m.diag(s, out, diagnostic(DIAG.tmemLeak, `every thread of CTA ${p.agents[a]!.rank} has exited with Tensor Memory still allocated: ${held.join(', ')}; tcgen05.dealloc it before the exit`), a, -1, -1, undefined, first);
}

/** Why agent `a`, blocked in the `tcgen05.alloc` `ins`, cannot allocate: for hang reports. */
export function explainAlloc(m: OpCtx, s: MachineState, a: number, ins: OpInstr): { reasons: string[]; holders: number[] } {
  const p = m.program;
  const buf = ins.buf!(s.agents[a]!.frame);
  const slot = tmemSlot(p, buf);
  const cta = m.bufCta(buf);
  const want = p.tmemCols[slot]!;
  const used = tmemInUse(m, s, cta);
  const holders = m.ctaAgents[cta]!.filter((o) => s.agents[o]!.tmemHeld);
  const who = holders.map((o) => {
    const h = s.agents[o]!.tmemHeld;
    const cols = p.tmemCols.reduce((n, c, i) => n + (h & (1 << i) ? c : 0), 0);
    return `${p.agents[o]!.name} holds ${cols}${s.agents[o]!.status === 'done' ? ' (exited without tcgen05.dealloc)' : ''}`;
  });
  const reasons = [`tcgen05.alloc of ${p.bufferName(buf)} needs ${want} Tensor Memory columns; the CTA has ${TMEM_COLUMNS - used} of ${TMEM_COLUMNS} free (${who.join(', ') || 'none held'})`];
  if (want > TMEM_COLUMNS - used && holders.every((o) => s.agents[o]!.status !== 'run')) reasons.push('no running warp holds columns it could still free: the allocation can never be satisfied');
  return { reasons, holders: holders.filter((o) => s.agents[o]!.status === 'run' && o !== a) };
}

const pairAlloc = execPair(execAlloc);
const pairDealloc = execPair(execDealloc);

const F = 'tcgen05';
const nothing = (): boolean => true;

/** Tensor Memory allocation and the tcgen05 fences. */
export const TMEM_OPS: readonly OpDef[] = [
  {
    // `.cta_group::2`: three steps (join, this CTA's half, leave); the op event comes with the first.
    op: 'tcgen05.alloc', family: F, por: 'sync', sync: 'local', timing: 'tcgen05.alloc', opEvent: 'first',
    enabled: (m, s, a, ins, ag) => ((ins.op as OpK<'tcgen05.alloc'>).pair ? pairEnabled(m, s, a, ins, ag) : allocEnabled(m, s, a, ins)),
    exec: (m, s, a, ins, out) => ((ins.op as OpK<'tcgen05.alloc'>).pair ? pairAlloc(m, s, a, ins, out) : execAlloc(m, s, a, ins, out)),
    text: (op, t) => `tcgen05.alloc${op.pair ? '.cta_group::2' : ''} ${t.ref(op.buf)}`,
  } satisfies OpDef<'tcgen05.alloc'>,
  {
    op: 'tcgen05.dealloc', family: F, por: 'sync', sync: 'local', timing: 'tcgen05.dealloc', opEvent: 'first',
    enabled: (m, s, a, ins, ag) => !(ins.op as OpK<'tcgen05.dealloc'>).pair || pairEnabled(m, s, a, ins, ag),
    exec: (m, s, a, ins, out) => ((ins.op as OpK<'tcgen05.dealloc'>).pair ? pairDealloc(m, s, a, ins, out) : execDealloc(m, s, a, ins, out)),
    text: (op, t) => `tcgen05.dealloc${op.pair ? '.cta_group::2' : ''} ${t.ref(op.buf)}`,
  } satisfies OpDef<'tcgen05.dealloc'>,
  {
    // `.cta_group::2`: the pair's allocations (an alloc of either CTA after it is reported); each
    // CTA's warp issues its own, the model does not wait for the peer's.
    op: 'tcgen05.relinquish_alloc_permit', family: F, por: 'sync', sync: 'local', timing: 'tcgen05.relinquish_alloc_permit',
    exec: (_m, s, a) => ((s.agents[a]!.tmemRelinquished = 1), true),
    text: (op) => `${op.op}${op.pair ? '.cta_group::2' : ''}`,
  } satisfies OpDef<'tcgen05.relinquish_alloc_permit'>,
  { op: 'tcgen05.fence::before_thread_sync', family: F, por: 'local', sync: 'fence', timing: 'tcgen05.fence::before_thread_sync', exec: nothing, text: (op) => op.op } satisfies OpDef<'tcgen05.fence::before_thread_sync'>,
  { op: 'tcgen05.fence::after_thread_sync', family: F, por: 'local', sync: 'fence', timing: 'tcgen05.fence::after_thread_sync', exec: nothing, text: (op) => op.op } satisfies OpDef<'tcgen05.fence::after_thread_sync'>,
] as OpDef[];
