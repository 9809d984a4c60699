/**
 * The agent's own memory operations and local steps: `ld.shared` / `st.shared` (generic-proxy
 * accesses, also of another CTA's distributed shared memory, PTX ISA §9.7.9.25.2), the fences
 * (`fence.proxy.async`, §9.7.13.4.18; `fence.mbarrier_init`, §9.7.13.4.17; the thread fences
 * `fence{.sc|.acq_rel|.acquire|.release}.scope`, §9.7.13.4), `work N` (time only)
 * and `exit`.
 */
import { diagnostic } from '../../model/mbarrier.js';
import { DIAG, type DiagCode } from '../../model/diagnostics.js';
import type { OpInstr } from '../program.js';
import type { MachineState, StepOut } from '../state.js';
import { checkLdWaited } from './tmem.js';
import type { OpCtx, OpDef } from './types.js';

/**
 * A point access of the agent to the buffer `ins.buf` names (mode: its op's `access`). Distributed
 * shared memory of a CTA that has exited is gone (PTX ISA §9.7.9.25.2): diagnosed, and still
 * recorded, so what it races with is reported too.
 */
export function execPointAccess(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const p = m.program;
  const info = p.agents[a]!;
  const buf = ins.buf!(s.agents[a]!.frame);
  if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  const rw = ins.op.op === 'st.shared' ? 'w' : 'r';
  if (rw === 'w') checkLdWaited(m, s, a, ins, out, buf); // a store of registers a tcgen05.ld may not have filled yet
  const bc = m.bufCta(buf);
  if (bc !== info.cta && m.ctaAgents[bc]!.every((o) => s.agents[o]!.status === 'done') && p.bufferOf(buf).info.space !== 'gmem') {
    m.diag(s, out, diagnostic(DIAG.exitedCta,
      `${ins.text}: ${rw === 'w' ? 'writes' : 'reads'} ${p.bufferName(buf)}, shared memory of CTA ${bc - info.cluster * p.clusterSize}, after every thread of that CTA has exited`), a, -1, -1, ins.loc, buf);
  }
  { m.emitted(s); if (out.events) out.events.push({ e: 'access', t: s.now, buf, rw, proxy: 'generic', edge: 'point', agent: a, async: -1, loc: ins.loc }); }
  // A value carried by the buffer (machine/values.ts): `R = ld.shared B` reads it, `st.shared B value=E` writes it.
  if (ins.dest !== undefined) s.agents[a]!.frame[ins.dest] = s.mem[buf]!;
  else if (ins.ints.value) s.mem[buf] = ins.ints.value(s.agents[a]!.frame);
  return true;
}

const F = 'smem';
const nothing = (): boolean => true;

/** Shared-memory loads and stores, fences, `work` and `exit`. */
export const SMEM_OPS: readonly OpDef[] = [
  {
    op: 'ld.shared', family: F, por: 'sync', sync: 'access', access: 'r', timing: 'ld.shared', exec: execPointAccess,
    text: (op, t) => `${op.dest !== undefined ? `${op.dest} = ` : ''}ld.shared ${t.ref(op.buf)}${op.bytes ? `, ${t.expr(op.bytes)}` : ''}`,
  } satisfies OpDef<'ld.shared'>,
  {
    op: 'st.shared', family: F, por: 'sync', sync: 'access', access: 'w', timing: 'st.shared', exec: execPointAccess,
    text: (op, t) => `st.shared ${t.ref(op.buf)}${op.bytes ? `, ${t.expr(op.bytes)}` : ''}${op.value ? ` value=${t.expr(op.value)}` : ''}`,
  } satisfies OpDef<'st.shared'>,
  { op: 'fence.proxy.async', family: F, por: 'local', sync: 'fence', timing: 'fence.proxy.async', exec: nothing, text: (op) => op.op } satisfies OpDef<'fence.proxy.async'>,
  { op: 'fence.mbarrier_init', family: F, por: 'local', sync: 'fence', timing: 'fence.mbarrier_init', exec: nothing, text: (op) => op.op } satisfies OpDef<'fence.mbarrier_init'>,
  {
    // A thread fence (PTX ISA §9.7.13.4): no effect on the machine's state; its memory-model role
    // (release / acquire patterns with relaxed arrives and waits) is the checker's (check/hb.ts, check/relaxed.ts).
    op: 'fence', family: F, por: 'local', sync: 'fence', timing: 'fence', exec: nothing,
    text: (op) => `fence.${op.sem}.${op.scope}`,
  } satisfies OpDef<'fence'>,
  {
    // The cycles are evaluated here, in the agent's step: a fault in them (`work 12 / i` at i = 0)
    // is the step's arith diagnostic for every driver, not only for the timing model that costs it.
    op: 'work', family: F, por: 'local', sync: 'local', timing: 'work',
    exec(_m, s, a, ins) {
      ins.ints.cycles?.(s.agents[a]!.frame);
      return true;
    },
    text: (op, t) => `work ${t.expr(op.cycles)}`,
  } satisfies OpDef<'work'>,
  {
    op: 'exit', family: F, por: 'sync', sync: 'release', timing: 'exit',
    exec(m, s, a, ins, out) {
      s.agents[a]!.pc++;
      m.finish(s, a, out, ins.loc);
      return false;
    },
    text: (op) => op.op,
  } satisfies OpDef<'exit'>,
  {
    // A front end's "not modelled yet" (or a rule it checks where the operation runs, `code`),
    // executed: the agent stops with the message (never a guess).
    op: 'trap', family: F, por: 'sync', sync: 'local', timing: 'trap',
    exec(m, s, a, ins, out) {
      const op = ins.op as { message: string; code?: DiagCode };
      m.fault(s, a, out, diagnostic(op.code ?? DIAG.notModelled, op.message), ins.loc, -1);
      return false;
    },
    text: (op) => `trap (${op.message})`,
  } satisfies OpDef<'trap'>,
] as OpDef[];
