/**
 * Hazard detector on transitions: buffer accesses begun by a step (an agent's, or an asynchronous
 * operation's) against what nothing has ordered them after (`race`, `missing-wait`):
 *
 * - TMA landings the reduction took early whose phase is still open (`tghosts`);
 * - finished tcgen05.mma whose commit has not signalled (`ghosts`), or whose commit landed on a
 *   phase still open (`cghosts`);
 * - the accesses of the role's other warps after a wait of its elected thread alone (B18);
 * - every operation still in flight.
 */
import type { AsyncOp, MachineState } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import { laneSiblings, sliceSharedAt, type OpInstr } from '../machine/program.js';
import { PER_THREAD_ASYNC } from '../machine/roles.js';
import type { SrcLoc } from '../kernel/ir.js';
import { asyncDef, OPC, sameStreamOrdered } from '../machine/ops/index.js';
import { EG, EG_ACC, EG_ELECT, EG_MB, EG_WG, kindLabel, opAccesses } from './ghosts.js';
import type { ExtraDraft, SearchCtx } from './search-ctx.js';
import { locKey } from './search-facts.js';
import { LAZY } from './search-hazards.js';

/** An access event's start. */
type AccessEvent = Extract<MachineEvent, { e: 'access' }>;

/** The access detector of one search: `landed` runs first over the step's events, then `access` on each access start. */
export interface AccessDetector {
  /** Accesses of the step against TMA landings whose phase is still open (`d.tghosts`). */
  landed(events: readonly MachineEvent[], d: ExtraDraft, stateId: number): void;
  /** One access start `e` of the step from `s` against ghosts and operations in flight. */
  access(e: AccessEvent, s: MachineState, d: ExtraDraft, stateId: number): void;
}

/** The access detector of search `ctx`. */
export function accessDetector(ctx: SearchCtx): AccessDetector {
  const { out } = ctx;
  const { conf, agentName, ov, anyMultiWarp } = ctx.f;
  /** The operation issued by the last step with id `id`, or undefined. */
  const issuedOp = (id: number): AsyncOp | undefined => {
    if (id < 0) return undefined;
    const l = out.issued;
    for (let i = 0; i < l.length; i++) if (l[i]!.id === id) return l[i];
    return undefined;
  };
  /** Who performs access `e`: its agent, or the asynchronous operation `newOp` of the step. */
  const whoOf = (e: AccessEvent, newOp: AsyncOp | undefined) =>
    (e.agent >= 0 ? agentName(e.agent) : newOp ? `${kindLabel(newOp.kind)} issued by ${agentName(newOp.agent)}` : 'an async unit');
  const landed = landedRaces(ctx, issuedOp, whoOf);
  const ghostRace = mmaGhostRace(ctx, whoOf);
  const elected = electedRaces(ctx);
  const inflight = inflightRaces(ctx, whoOf);

  const access = (e: AccessEvent, s: MachineState, d: ExtraDraft, stateId: number) => {
    const newOp = issuedOp(e.async);
    const { ghosts, cghosts } = d;
    // Ghost entries conflict when they name this buffer and one of the two accesses writes
    // (ghostRace's own test, inlined: most entries name other buffers).
    const eb2 = e.buf * 2;
    const eRead = e.rw === 'r';
    for (let g = 0; g < ghosts.length; g++) {
      const gl = ghosts[g];
      if (!gl) continue;
      if (newOp && newOp.agent === g && asyncDef(newOp.kind).stream === 'tc') continue; // ordered after its issuer's earlier tcgen05 ops
      for (let i = 0; i < gl.length; i++) {
        const gx = gl[i]!;
        if (gx & EG || ((gx & ~1) !== eb2 && (ov === null || !conf(gx >> 1, e.buf))) || ((gx & 1) === 0 && eRead)) continue;
        ghostRace(e, newOp, g, gx, -1, stateId);
      }
    }
    // The role's other warps after a wait_group of the elected thread alone (B18).
    if (anyMultiWarp && e.agent >= 0 && ghosts[e.agent]) elected(e, s, ghosts[e.agent]!, stateId);
    for (let g = 0; g < cghosts.length; g++) {
      const cl = cghosts[g];
      if (!cl) continue;
      if (newOp && newOp.agent === g && asyncDef(newOp.kind).stream === 'tc') continue; // ordered after its issuer's earlier tcgen05 ops
      for (let i = 0; i < cl.length; i += 2) {
        const gx = cl[i + 1]!;
        if (((gx & ~1) !== eb2 && (ov === null || !conf(gx >> 1, e.buf))) || ((gx & 1) === 0 && eRead)) continue;
        ghostRace(e, newOp, g, gx, cl[i]!, stateId);
      }
    }
    inflight(e, s, newOp, stateId);
  };
  return { landed, access };
}

/** Accesses of the step (`events`) against TMA landings whose phase is still open (`d.tghosts`). */
function landedRaces(ctx: SearchCtx, issuedOp: (id: number) => AsyncOp | undefined, whoOf: (e: AccessEvent, newOp: AsyncOp | undefined) => string): AccessDetector['landed'] {
  const { p, an, sink } = ctx;
  const { conf, raceBuf, barCta, agentName } = ctx.f;
  return (events, d, stateId) => {
    const tghosts = d.tghosts!;
    // Landed copies whose phase has not completed: nothing orders an access after them yet.
    for (const e of events) {
      if (e.e !== 'access' || e.edge === 'end') continue;
      for (let i = 0; i < tghosts.length; i += 2) {
        if (!conf(tghosts[i + 1]!, e.buf)) continue;
        const newOp = issuedOp(e.async);
        const who = whoOf(e, newOp);
        const rb = raceBuf(e.buf, tghosts[i + 1]!);
        const bufName = p.bufferName(rb);
        const bname = p.barrierName(tghosts[i]!);
        sink.error({
          kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(e.loc)}|tma`,
          message: `${who} ${e.rw === 'w' ? 'writes' : 'reads'} ${bufName} after a TMA copy wrote it but before the phase of ${bname} that copy credits has completed: nothing orders this access after the copy`,
          subject: bufName, state: stateId, extra: LAZY, details: [], locs: e.loc ? [e.loc] : [],
        });
        // As for the copy still in flight (below): a reader that never waits on that barrier.
        const gb = tghosts[i]!;
        if (e.agent >= 0 && barCta(gb) === p.agents[e.agent]!.cta && an.waitSlots[e.agent]!.get(gb) === undefined) {
          sink.report({
            kind: 'missing-wait', severity: 'error', key: `${bname}|${e.agent}`,
            message: `${agentName(e.agent)} ${e.rw === 'w' ? 'writes' : 'reads'} ${bufName}, which a TMA copy fills with its completion on ${bname}, but ${agentName(e.agent)} never waits on ${bname}: nothing orders its access after the copy`,
            subject: bname, state: stateId, extra: LAZY, details: ['compute-sanitizer synccheck reports this as "missing wait".'], locs: e.loc ? [e.loc] : [],
          });
        }
      }
    }
  };
}

/**
 * Reports an access (event `e`, of the step that issued `newOp` if any) to a buffer that the
 * finished-but-unsignalled MMA of agent `g` touched (`gx`: buffer·2 + write). `bar`: -1 when no
 * commit of that MMA has arrived yet, else the barrier its commit arrived on.
 */
function mmaGhostRace(ctx: SearchCtx, whoOf: (e: AccessEvent, newOp: AsyncOp | undefined) => string) {
  const { p, sink } = ctx;
  const { conf, raceBuf, agentName } = ctx.f;
  /** Where agent `g`'s tcgen05.mma instructions touching the array of buffer `buf`, and its commits, are (related locations of a ghost race). */
  const mmaSiteCache = new Map<string, SrcLoc[]>();
  const mmaSites = (g: number, buf: number): SrcLoc[] => {
    const name = p.bufferOf(buf).info.name;
    const key = `${p.agents[g]!.role}|${name}`;
    let l = mmaSiteCache.get(key);
    if (!l) {
      l = [];
      for (const ins of p.roles[p.agents[g]!.role]!.code) {
        if (ins.i !== 'op') continue;
        const op = ins.op;
        if (op.op === 'tcgen05.mma' && (op.acc.name === name || op.reads.some((r) => r.name === name))) l.push(ins.loc);
        else if (op.op === 'tcgen05.commit') l.push(ins.loc);
      }
      mmaSiteCache.set(key, l);
    }
    return l;
  };
  return (e: AccessEvent, newOp: AsyncOp | undefined, g: number, gx: number, bar: number, stateId: number): void => {
    if (!conf(gx >> 1, e.buf) || ((gx & 1) === 0 && e.rw === 'r')) return;
    const why = bar < 0 ? 'that MMA has finished, but no tcgen05.commit after it has signalled a barrier yet' : `its tcgen05.commit has arrived on ${p.barrierName(bar)}, but that phase has not completed`;
    const who = whoOf(e, newOp);
    const rb = raceBuf(e.buf, gx >> 1);
    const bufName = p.bufferName(rb);
    sink.error({
      kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(e.loc)}|ghost${g}`,
      message: `${who} ${e.rw === 'w' ? 'writes' : 'reads'} ${bufName}, which a tcgen05.mma issued by ${agentName(g)} was ${(gx & 1) ? 'writing' : 'reading'}; ${why}, so nothing orders this access after the MMA`,
      subject: bufName, state: stateId, extra: LAZY, details: [], locs: [...(e.loc ? [e.loc] : []), ...mmaSites(g, e.buf)],
    });
  };
}

/**
 * The accesses of the threads of `e.agent` other than the elected one after a wait (mbarrier wait
 * or wait_group) of the elected thread alone (`gl`: the agent's ghosts), B18.
 */
function electedRaces(ctx: SearchCtx): (e: AccessEvent, s: MachineState, gl: readonly number[], stateId: number) => void {
  const { p, m, sink } = ctx;
  const { conf, raceBuf, agentName } = ctx.f;
  /** Whether a TMA copy completing on barrier `b` fills bytes of buffer `buf`. */
  const fedHas = (buf: number, b: number): boolean => {
    if (ctx.fedBy.get(buf)?.has(b)) return true;
    if (ctx.f.ov === null) return false;
    for (const [k, f] of ctx.fedBy) if (f.has(b) && conf(k, buf)) return true;
    return false;
  };
  /** Where agent `a`'s waits of the elected thread alone are (related locations of an elected-thread race): wait_group or mbarrier waits (op codes `opcs`) on barrier array `bar`. */
  const electSiteCache = new Map<string, SrcLoc[]>();
  const electWaitSites = (a: number, opcs: number[], barName: string | null): SrcLoc[] => {
    const key = `${p.agents[a]!.role}|${opcs.join(',')}|${barName ?? ''}`;
    let l = electSiteCache.get(key);
    if (l) return l;
    l = [];
    for (const ins of p.roles[p.agents[a]!.role]!.code) {
      if (ins.i !== 'op' || ins.per !== 'one' || !opcs.includes(ins.opc)) continue;
      if (barName !== null && !('bar' in ins.op && ins.op.bar.name === barName)) continue;
      l.push(ins.loc);
    }
    electSiteCache.set(key, l);
    return l;
  };
  const waitRace = (e: AccessEvent, ins: OpInstr, b: number, stateId: number) => {
    const bufName = p.bufferName(e.buf);
    const bname = p.barrierName(b);
    sink.error({
      kind: 'race', severity: 'error', key: `${p.bufferOf(e.buf).info.name}|${locKey(e.loc)}|electwait`,
      message: `the threads of ${agentName(e.agent)} other than the elected one ${e.rw === 'w' ? 'write' : 'read'} ${bufName} (${ins.text}), which TMA copies completing on ${bname} fill, but only the elected thread waited on ${bname} (inside elect: or per=one): no bar.sync over the role's threads, and no wait of their own, orders them after the copy`,
      subject: bufName, state: stateId, extra: LAZY,
      details: ['Every thread that reads the data must be ordered after the phase: let all threads wait (as CUTLASS consumer_wait does), or follow the elected wait with a bar.sync of the role.'],
      locs: [...(e.loc ? [e.loc] : []), ...electWaitSites(e.agent, [OPC['mbarrier.wait']], p.barrierOf(b).info.name)],
    });
  };
  const groupRace = (e: AccessEvent, ins: OpInstr, gx: number, stateId: number) => {
    const acc = gx & EG_ACC;
    if (!conf(acc >> 1, e.buf) || ((acc & 1) === 0 && e.rw === 'r')) return;
    const rb = raceBuf(e.buf, acc >> 1);
    const bufName = p.bufferName(rb);
    const unit = gx & EG_WG ? 'wgmma' : 'bulk store';
    sink.error({
      kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(e.loc)}|elect`,
      message: `the threads of ${agentName(e.agent)} other than the elected one ${e.rw === 'w' ? 'write' : 'read'} ${bufName} (${ins.text}) while a ${unit} issued by ${agentName(e.agent)} may still be ${(acc & 1) ? 'writing' : 'reading'} it: only the elected thread waited for it (${unit === 'wgmma' ? 'wgmma' : 'cp.async.bulk'}.wait_group inside elect: or per=one), and no bar.sync over the role's threads orders the other warps after that wait`,
      subject: bufName, state: stateId, extra: LAZY,
      details: ['TileOPs, https://github.com/tile-ai/TileOPs/pull/1550: a warp-scoped or warpgroup-scoped bar.sync after the wait_group (before the buffer is refilled) orders every thread after the store.'],
      locs: [...(e.loc ? [e.loc] : []), ...electWaitSites(e.agent, [gx & EG_WG ? OPC['wgmma.wait_group'] : OPC['cp.async.bulk.wait_group']], null)],
    });
  };
  return (e, s, gl, stateId) => {
    const ins = m.nextOp(s, e.agent);
    if (!ins || ins.per === 'one') return;
    for (const gx of gl) {
      if (!(gx & EG) || !(gx & EG_ELECT)) continue;
      if (gx & EG_MB) {
        const b = gx & EG_ACC;
        if (fedHas(e.buf, b)) waitRace(e, ins, b, stateId);
        continue;
      }
      groupRace(e, ins, gx, stateId);
    }
  };
}

/** An access start `e` (of the step that issued `newOp`, if any) against the operations in flight in `s`. */
function inflightRaces(ctx: SearchCtx, whoOf: (e: AccessEvent, newOp: AsyncOp | undefined) => string) {
  const { p, an, sink } = ctx;
  const { conf, raceBuf, barCta, agentName, ov } = ctx.f;
  return (e: AccessEvent, s: MachineState, newOp: AsyncOp | undefined, stateId: number): void => {
    const fl = s.inflight;
    for (let j = 0; j < fl.length; j++) {
      const o = fl[j]!;
      if (o.id === e.async) continue;
      if (o.buf !== e.buf && (ov === null || !conf(o.buf, e.buf))) {
        const rd = o.reads;
        if (!rd) continue;
        let hit = false;
        for (let r = 0; r < rd.length; r++) if (conf(rd[r]!, e.buf)) hit = true;
        if (!hit) continue;
      }
      for (const x of opAccesses(o)) {
        if (!conf(x.buf, e.buf) || (x.rw === 'r' && e.rw === 'r')) continue;
        if (newOp && newOp.agent === o.agent && sameStreamOrdered(newOp.kind, o.kind)) continue;
        // cp.async / st.async of two warps at one instruction: each warp's own slice (roles.ts PER_THREAD_ASYNC).
        if (newOp && newOp.kind === o.kind && PER_THREAD_ASYNC.has(o.kind) && newOp.loc.line === o.loc.line && newOp.loc.col === o.loc.col
          && newOp.loc.file === o.loc.file && sliceSharedAt(p, newOp.agent, o.agent, o.loc)) continue;
        // tcgen05.ld / st of two warps of one role instance: each warp reaches only its own 32 TMEM lanes.
        if ((o.kind === 'tc.ld' || o.kind === 'tc.st') && (newOp ? newOp.kind === 'tc.ld' || newOp.kind === 'tc.st' : e.agent >= 0 && p.bufferOf(e.buf).info.space === 'tmem')
          && laneSiblings(p, newOp ? newOp.agent : e.agent, o.agent)) continue;
        const who = whoOf(e, newOp);
        const what = e.rw === 'w' ? 'writes' : 'reads';
        const other = `${kindLabel(o.kind)} issued by ${agentName(o.agent)} (line ${o.loc.line})`;
        const otherWhat = x.rw === 'w' ? 'writing' : 'reading';
        const rb = raceBuf(e.buf, x.buf);
        const bufName = p.bufferName(rb);
        const sig = o.bar >= 0 ? `; its completion signals ${p.barrierName(o.bar)}, and nothing orders this access after that signal` : o.targets ? `; its completion signals ${o.targets.map((k) => p.barrierName(k)).join(', ')}` : '';
        sink.error({
          kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(e.loc)}|${locKey(o.loc)}`,
          message: `${who} ${what} ${p.bufferName(e.buf)} while the ${other} is still ${otherWhat} ${x.buf === e.buf ? 'it' : `${p.bufferName(x.buf)}, whose bytes overlap it`}${sig}`,
          subject: bufName, state: stateId, extra: LAZY, details: [], locs: [...(e.loc ? [e.loc] : []), o.loc],
        });
        if (e.agent >= 0 && o.kind === 'tma' && o.bar >= 0 && barCta(o.bar) === p.agents[e.agent]!.cta && an.waitSlots[e.agent]!.get(o.bar) === undefined) {
          const bname = p.barrierName(o.bar);
          sink.report({
            kind: 'missing-wait', severity: 'error', key: `${bname}|${e.agent}`,
            message: `${agentName(e.agent)} ${what} ${bufName}, which the TMA copy at line ${o.loc.line} fills with its completion on ${bname}, but ${agentName(e.agent)} never waits on ${bname}: nothing orders its access after the copy`,
            subject: bname, state: stateId, extra: LAZY, details: ['compute-sanitizer synccheck reports this as "missing wait".'], locs: [...(e.loc ? [e.loc] : []), o.loc],
          });
        }
      }
    }
  };
}
