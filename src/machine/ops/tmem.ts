/**
 * Tensor Memory management and the tcgen05 thread-synchronization fences (PTX ISA §9.7.16.7.1,
 * §9.7.16.11.1):
 *
 * - `tcgen05.alloc` allocates the columns declared for a TMEM buffer (`tmem NAME cols=N`, a power
 *   of two, 32 … 512) out of its CTA's 512 and blocks while fewer are free; the allocating warp
 *   holds them until its `tcgen05.dealloc`. Every column must be freed before the CTA exits.
 * - `tcgen05.relinquish_alloc_permit`: the CTA may not allocate any more.
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
import type { OpCtx, OpDef } from './types.js';

/** Allocation slot (bit of `AgentState.tmemHeld`) of buffer key `buf`, or -1 when it is not managed TMEM (no `cols=`). */
export function tmemSlot(p: Program, buf: number): number {
  const { info, index } = p.bufferOf(buf);
  return info.tmemSlot === undefined ? -1 : info.tmemSlot + index;
}

/** Columns of CTA `cta` allocated in `s` (sum over its agents' held slots). */
export function tmemInUse(m: OpCtx, s: MachineState, cta: number): number {
  let n = 0;
  const cols = m.program.tmemCols;
  for (const o of m.ctaAgents[cta]!) {
    const h = s.agents[o]!.tmemHeld;
    if (h) for (let i = 0; i < cols.length; i++) if (h & (1 << i)) n += cols[i]!;
  }
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
  if (m.ctaAgents[cta]!.some((o) => s.agents[o]!.tmemRelinquished)) {
    m.diag(s, out, diagnostic(DIAG.tmemAllocRelinquished, `${ins.text}: a warp of this CTA has executed tcgen05.relinquish_alloc_permit; the CTA may not allocate Tensor Memory any more`), a, -1, -1, ins.loc, buf);
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
  return true;
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

const F = 'tcgen05';
const nothing = (): boolean => true;

/** Tensor Memory allocation and the tcgen05 fences. */
export const TMEM_OPS: readonly OpDef[] = [
  {
    op: 'tcgen05.alloc', family: F, por: 'sync', sync: 'local', timing: 'tcgen05.alloc', enabled: allocEnabled, exec: execAlloc,
    text: (op, t) => `tcgen05.alloc ${t.ref(op.buf)}`,
  } satisfies OpDef<'tcgen05.alloc'>,
  {
    op: 'tcgen05.dealloc', family: F, por: 'sync', sync: 'local', timing: 'tcgen05.dealloc', exec: execDealloc,
    text: (op, t) => `tcgen05.dealloc ${t.ref(op.buf)}`,
  } satisfies OpDef<'tcgen05.dealloc'>,
  {
    op: 'tcgen05.relinquish_alloc_permit', family: F, por: 'sync', sync: 'local', timing: 'tcgen05.relinquish_alloc_permit',
    exec: (_m, s, a) => ((s.agents[a]!.tmemRelinquished = 1), true),
    text: (op) => op.op,
  } satisfies OpDef<'tcgen05.relinquish_alloc_permit'>,
  { op: 'tcgen05.fence::before_thread_sync', family: F, por: 'local', sync: 'fence', timing: 'tcgen05.fence::before_thread_sync', exec: nothing, text: (op) => op.op } satisfies OpDef<'tcgen05.fence::before_thread_sync'>,
  { op: 'tcgen05.fence::after_thread_sync', family: F, por: 'local', sync: 'fence', timing: 'tcgen05.fence::after_thread_sync', exec: nothing, text: (op) => op.op } satisfies OpDef<'tcgen05.fence::after_thread_sync'>,
] as OpDef[];
