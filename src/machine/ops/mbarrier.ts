/**
 * The mbarrier family (PTX ISA §9.7.13.15): `mbarrier.init` / `inval`, the arrive family (arrive,
 * arrive_drop, `.expect_tx`, `.noComplete`), `expect_tx`, `complete_tx`, the waits (`test_wait`,
 * `try_wait`, parity or token) and `pending_count`; and the remote (shared::cluster) signal in
 * flight into another CTA's barrier (§9.7.13.15.8). The barrier's own rules come from
 * `model/mbarrier.ts`; this module sequences them: multiplicity, tokens, remote signals, and the
 * H200's behaviour on a never-initialized barrier (docs/HARDWARE.md).
 */
import {
  arriveEach, completeTx, diagnostic, expectTx, init, inval, pendingCount, testParity, testToken, TRAP, type Token,
} from '../../model/mbarrier.js';
import { DIAG, type Diagnostic } from '../../model/diagnostics.js';
import type { SrcLoc } from '../../kernel/ir.js';
import type { OpInstr } from '../program.js';
import { UNINIT_WAIT_BLOCKED, uninitWaitPasses, type AsyncOp, type MachineState, type StepOut } from '../state.js';
import type { AsyncDef, OpCtx, OpDef, OpK, SignalKind } from './types.js';

/** Options of a plain arrive (shared: the model never keeps or changes them). */
const PLAIN_ARRIVE = Object.freeze({ drop: false, noComplete: false });

/**
 * Applies a local arrive-family signal (`n` times, each with `count` arrivals or `bytes` of tx) to
 * barrier `bar`, emitting its event and any completed phases; returns false if the kernel trapped.
 * `token`, when given, receives the phase the arrive observed. Every signal of every family (local
 * arrives, TMA credits, commits, cp.async arrives, remote signals landing) goes through here.
 */
export function signal(
  m: OpCtx, s: MachineState, out: StepOut, bar: number, kind: SignalKind, n: number, count: number, bytes: number,
  agent: number, asyncId: number, loc: SrcLoc | undefined, token: Token | undefined, noComplete = false,
): boolean {
  const b = s.bars[bar]!;
  // A scratch array: the model pushes only when something is undefined (rare).
  const diags = m.scratchDiags;
  if (diags.length) diags.length = 0;
  let r: number;
  const phase = b.phase;
  if (kind === 'expect_tx' || kind === 'complete_tx') {
    r = 0;
    for (let j = 0; j < n && r !== TRAP; j++) {
      const x = kind === 'expect_tx' ? expectTx(b, bytes, diags) : completeTx(b, bytes, diags);
      r = x === TRAP ? TRAP : r + x;
    }
    const total = bytes * n;
    { m.emitted(s); if (out.events && !out.sparse) out.events.push(loc ? { e: kind, t: s.now, bar, bytes: total, phase, tx: b.tx, agent, async: asyncId, loc } : { e: kind, t: s.now, bar, bytes: total, phase, tx: b.tx, agent, async: asyncId }); }
  } else {
    if (token) {
      token.barrier = bar;
      token.phase = b.phase;
      token.pendingBefore = b.pending;
      token.txBefore = b.tx;
      token.noComplete = noComplete;
    }
    const opts = kind === 'arrive' && !noComplete ? PLAIN_ARRIVE
      : kind === 'arrive.expect_tx' ? { drop: false, noComplete, expectTx: bytes } : { drop: kind === 'arrive_drop', noComplete };
    r = arriveEach(b, n, count, opts, diags);
    const et = kind === 'arrive.expect_tx' ? bytes * n : 0;
    { m.emitted(s); if (out.events && !out.sparse) out.events.push(loc
        ? { e: 'arrive', t: s.now, bar, count: n * count, expectTx: et, drop: opts.drop, phase, pending: b.pending, tx: b.tx, agent, async: asyncId, loc }
        : { e: 'arrive', t: s.now, bar, count: n * count, expectTx: et, drop: opts.drop, phase, pending: b.pending, tx: b.tx, agent, async: asyncId }); }
  }
  if (diags.length && m.flush(s, out, diags.splice(0), agent, asyncId, bar, loc)) return false;
  if (r > 0) m.phaseDone(s, out, bar, r, agent, asyncId);
  return true;
}

/** `mbarrier.init` / `mbarrier.inval` on a barrier of the agent's own CTA (at most two threads' effects: the rest repeat them). */
function execInitInval(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number): boolean {
  const p = m.program;
  const f = s.agents[a]!.frame;
  const op = ins.op;
  const loc = ins.loc;
  const key = ins.bar!(f);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  if (m.barCta(key) !== p.agents[a]!.cta) {
    return m.fault(s, a, out, diagnostic(DIAG.remoteWait, `${op.op} on ${p.barrierName(key)}, a barrier of another CTA`, s.bars[key]), loc, key), false;
  }
  const b = s.bars[key]!;
  const diags: Diagnostic[] = [];
  if (op.op === 'mbarrier.init') {
    const count = ins.ints.count ? ins.ints.count(f) : p.barrierOf(key).info.count;
    for (let j = 0; j < Math.min(n, 2); j++) init(b, count, diags);
  } else {
    for (let j = 0; j < Math.min(n, 2); j++) if (inval(b, diags) === TRAP) break;
  }
  if (diags.length && m.flush(s, out, diags, a, -1, key, loc)) return false;
  return true;
}

/** The arrive family, `expect_tx` and `complete_tx` (opc 2, 3, 4): local, or a remote signal in flight. */
function execSignal(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number): boolean {
  const info = m.program.agents[a]!;
  const ag = s.agents[a]!;
  const f = ag.frame;
  const opc = ins.opc;
  const loc = ins.loc;
  const key = ins.bar!(f);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  const ao = ins.op as OpK<'mbarrier.arrive'>;
  const kind: SignalKind = opc === 3 ? 'expect_tx' : opc === 4 ? 'complete_tx'
    : ao.drop ? 'arrive_drop' : ao.expectTx ? 'arrive.expect_tx' : 'arrive';
  const count = ins.ints.count ? ins.ints.count(f) : 1;
  const bytes = ins.ints.bytes ? ins.ints.bytes(f) : ins.ints.expectTx ? ins.ints.expectTx(f) : 0;
  const cta = m.barCta(key);
  if (cta !== info.cta) {
    // shared::cluster signal into another CTA: in flight until it lands (PTX ISA §9.7.13.15.8).
    m.newAsync(s, out, 'remote', a, cta, key, -1, null, bytes, 0, 0, -1, n * count, kind, null, loc);
    return true;
  }
  let token: Token | undefined;
  if (opc === 2 && ins.token !== undefined) {
    token = { barrier: key, phase: 0, pendingBefore: 0, txBefore: 0, noComplete: false };
  }
  const noComplete = opc === 2 && !!ao.noComplete;
  const isArrive = kind === 'arrive' || kind === 'arrive_drop' || kind === 'arrive.expect_tx';
  const k = isArrive ? m.arriveInstrs(ins, info) : n;
  const lanes = isArrive ? m.arriveLanes(ins, info) : 1;
  m.laneNote = lanes > 1 ? lanes : 0;
  const ok = signal(m, s, out, key, kind, k, count * lanes, bytes * (kind === 'arrive.expect_tx' ? lanes : 1), a, -1, loc, token, noComplete);
  m.laneNote = 0;
  if (!ok) return false;
  if (token && ins.token !== undefined) {
    ag.tokens = { ...(ag.tokens ?? {}), [ins.token]: token };
    f[ins.token] = token.phase;
  }
  return true;
}

/** Whether a blocking wait may step: its phase completed (or it will fault, or be diagnosed, when executed). */
function waitEnabled(m: OpCtx, s: MachineState, a: number, ins: OpInstr): boolean {
  const ag = s.agents[a]!;
  const op = ins.op as OpK<'mbarrier.wait'>;
  if (op.dest !== undefined) return true;
  const key = ins.bar!(ag.frame);
  if (key < 0) return true; // faults when executed
  if (Math.floor(key / m.program.barriersPerCta) !== m.program.agents[a]!.cta) return true;
  const b = s.bars[key]!;
  if (b.status === 'uninit') {
    // Diagnosed when executed (once); then it passes or blocks as the H200's zero word does.
    if (ag.sub !== UNINIT_WAIT_BLOCKED) return true;
    const t = op.token !== undefined ? ag.tokens?.[ins.token!] : undefined;
    return uninitWaitPasses(op.token !== undefined ? (t ? t.phase : 0) : ins.ints.parity!(ag.frame));
  }
  if (b.status !== 'valid') return true; // diagnosed when executed
  if (op.token !== undefined) {
    const t = ag.tokens?.[ins.token!];
    return t ? (b.phase & 1) !== (t.phase & 1) : true;
  }
  const par = ins.ints.parity!(ag.frame);
  m.waitS = s;
  m.waitA = a;
  m.waitKey = key;
  m.waitPar = par;
  return testParity(b, par);
}

/** A wait on a never-initialized barrier: diagnosed once, then it passes or blocks as the H200's zero word does (docs/HARDWARE.md). */
function waitUninit(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, key: number): boolean {
  const ag = s.agents[a]!;
  const f = ag.frame;
  const op = ins.op as OpK<'mbarrier.wait'>;
  const b = s.bars[key]!;
  const t = op.token !== undefined ? ag.tokens?.[ins.token!] : undefined;
  const par = (op.token !== undefined ? (t ? t.phase : 0) : ins.ints.parity!(f)) & 1;
  const pass = uninitWaitPasses(par);
  let advance = true;
  if (ag.sub !== UNINIT_WAIT_BLOCKED) {
    const res = op.dest !== undefined ? `returns ${pass ? 1 : 0}` : pass ? 'passes' : 'blocks';
    const d = diagnostic(DIAG.uninitializedWait, `mbarrier.${op.form} on ${m.program.barrierName(key)}, which was never initialized: on a zero word it ${res} (parity ${par}, as on phase 0)`, b);
    m.flush(s, out, [d], a, -1, key, ins.loc);
  }
  { m.emitted(s); if (out.events) out.events.push({ e: 'wait', t: s.now, agent: a, bar: key, parity: par, phase: 0, pass, token: op.token !== undefined, loc: ins.loc }); }
  if (op.dest !== undefined) f[ins.dest!] = pass ? 1 : 0;
  else if (!pass) {
    ag.sub = UNINIT_WAIT_BLOCKED;
    advance = false;
  }
  if (advance) ag.sub = -1;
  return advance;
}

/** `mbarrier.test_wait` / `try_wait` (parity or token; blocking, or into a predicate). */
function execWait(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, _n: number, cached: boolean): boolean {
  const p = m.program;
  const ag = s.agents[a]!;
  const f = ag.frame;
  const loc = ins.loc;
  const op = ins.op as OpK<'mbarrier.wait'>;
  const key = cached ? m.waitKey : ins.bar!(f);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  if (m.barCta(key) !== p.agents[a]!.cta) {
    return m.fault(s, a, out, diagnostic(DIAG.remoteWait, `mbarrier.${op.form} on ${p.barrierName(key)}, a barrier of another CTA`, s.bars[key]), loc, key), false;
  }
  const b = s.bars[key]!;
  if (b.status === 'uninit') return waitUninit(m, s, a, ins, out, key);
  if (b.status !== 'valid') {
    const d = diagnostic(DIAG.invalidated, `mbarrier.${op.form} on ${p.barrierName(key)}, which is invalidated`, b);
    return m.fault(s, a, out, d, loc, key), false;
  }
  ag.sub = -1;
  let pass: boolean;
  let par: number;
  let diags: Diagnostic[] | null = null;
  if (op.token !== undefined) {
    const t = ag.tokens?.[ins.token!];
    if (!t) return m.fault(s, a, out, diagnostic(DIAG.foreignToken, `${op.token} holds no token from an arrive`), loc, key), false;
    diags = [];
    pass = testToken(b, key, t, diags);
    par = t.phase & 1;
  } else {
    par = cached ? m.waitPar : ins.ints.parity!(f);
    if (par !== 0 && par !== 1) diags = [diagnostic(DIAG.parityOperand, `phase parity operand ${par} is neither 0 nor 1`, b)];
    pass = testParity(b, par);
  }
  if (diags && diags.length && m.flush(s, out, diags, a, -1, key, loc)) return false;
  const isToken = op.token !== undefined;
  const phase = b.phase;
  { m.emitted(s); if (out.events) out.events.push({ e: 'wait', t: s.now, agent: a, bar: key, parity: par & 1, phase, pass, token: isToken, loc }); }
  if (op.dest !== undefined) f[ins.dest!] = pass ? 1 : 0;
  return true;
}

/** `mbarrier.pending_count` of a token (PTX ISA §9.7.13.15.17). */
function execPendingCount(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const ag = s.agents[a]!;
  const t = ag.tokens?.[ins.token!];
  if (!t) return m.fault(s, a, out, diagnostic(DIAG.pendingCountToken, `${(ins.op as OpK<'mbarrier.pending_count'>).token} holds no token from an arrive`), ins.loc, -1), false;
  const diags: Diagnostic[] = [];
  ag.frame[ins.dest!] = pendingCount(t, diags);
  if (diags.length) m.flush(s, out, diags, a, -1, t.barrier, ins.loc);
  return true;
}

const F = 'mbarrier';

/** The operations of the mbarrier family. */
export const MBARRIER_OPS: readonly OpDef[] = [
  {
    op: 'mbarrier.init', family: F, por: 'sync', sync: 'release', touchesBar: true, timing: 'mbarrier.init', exec: execInitInval,
    text: (op, t) => `mbarrier.init ${t.ref(op.bar)}${op.count ? `, ${t.expr(op.count)}` : ''}`,
  } satisfies OpDef<'mbarrier.init'>,
  {
    op: 'mbarrier.inval', family: F, por: 'sync', sync: 'release', touchesBar: true, timing: 'mbarrier.inval', exec: execInitInval,
    text: (op, t) => `mbarrier.inval ${t.ref(op.bar)}`,
  } satisfies OpDef<'mbarrier.inval'>,
  {
    op: 'mbarrier.arrive', family: F, por: 'sync', sync: 'release', touchesBar: true, issues: ['remote'], timing: 'mbarrier.arrive', exec: execSignal,
    text: (op, t) => {
      const name = op.drop ? 'mbarrier.arrive_drop' : 'mbarrier.arrive';
      const sfx = (op.expectTx ? '.expect_tx' : '') + (op.noComplete ? '.noComplete' : '') + (op.sem === 'relaxed' ? '.relaxed' : op.scope ? '.release' : '') + (op.scope ? `.${op.scope}` : '');
      const args = [t.ref(op.bar)];
      if (op.expectTx) args.push(t.expr(op.expectTx));
      if (op.count) args.push(t.expr(op.count));
      return `${name}${sfx} ${args.join(', ')}`;
    },
  } satisfies OpDef<'mbarrier.arrive'>,
  {
    op: 'mbarrier.expect_tx', family: F, por: 'sync', sync: 'release', touchesBar: true, issues: ['remote'], timing: 'mbarrier.expect_tx', exec: execSignal,
    text: (op, t) => `mbarrier.expect_tx ${t.ref(op.bar)}, ${t.expr(op.bytes)}`,
  } satisfies OpDef<'mbarrier.expect_tx'>,
  {
    op: 'mbarrier.complete_tx', family: F, por: 'sync', sync: 'release', touchesBar: true, issues: ['remote'], timing: 'mbarrier.complete_tx', exec: execSignal,
    text: (op, t) => `mbarrier.complete_tx ${t.ref(op.bar)}, ${t.expr(op.bytes)}`,
  } satisfies OpDef<'mbarrier.complete_tx'>,
  {
    op: 'mbarrier.wait', family: F, por: 'sync', sync: 'acquire', timing: 'mbarrier.wait', enabled: waitEnabled, exec: execWait, opEvent: 'never',
    text: (op, t) => `mbarrier.${op.form}${op.token ? '' : '.parity'}${op.sem ? `.${op.sem}` : op.scope ? '.acquire' : ''}${op.scope ? `.${op.scope}` : ''} ${t.ref(op.bar)}, ${op.token ?? t.expr(op.parity!)}`,
  } satisfies OpDef<'mbarrier.wait'>,
  {
    op: 'mbarrier.pending_count', family: F, por: 'sync', sync: 'local', timing: 'mbarrier.pending_count', exec: execPendingCount,
    text: (op) => `mbarrier.pending_count ${op.dest}, ${op.token}`,
  } satisfies OpDef<'mbarrier.pending_count'>,
] as OpDef[];

/** A remote (shared::cluster) signal in flight: it lands on the other CTA's barrier in one step. */
export const REMOTE_ASYNC: AsyncDef = {
  kind: 'remote', family: F, label: 'remote signal', stream: null, bufAccess: null,
  progress(m, s, o, out) {
    if (!signal(m, s, out, o.bar, o.remote!, 1, o.remote === 'expect_tx' || o.remote === 'complete_tx' ? 1 : o.count, o.bytes, -1, o.id, o.loc, undefined)) return 'trap';
    out.other = true; // a barrier.cluster.arrive may wait for it
    return 'done';
  },
  touched: (o: AsyncOp) => o.bar,
};
