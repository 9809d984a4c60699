/**
 * Static checks over solo runs of the agents (solo.ts): each agent's code is run alone, with every
 * operation taken as completing at once (waits pass, nothing blocks), which gives, for programs
 * whose control flow depends only on parameters and loop variables, exactly the operations each
 * agent performs on each barrier. From those counts:
 *
 * - `count-mismatch`: an mbarrier whose arrivals over the whole run are not a multiple of its
 *   count (the last phase can never complete), or that no one ever arrives on while a wait needs a
 *   phase; a named barrier whose participating threads per generation differ from its count.
 *   Also one whose arrivals per round fall short of its count: every arriver arrives as many times
 *   as a waiter waits on it, so each arrives once per round between consecutive waits, and the
 *   arrivals of a round are fewer than the count (whatever the trip count).
 * - `trip-mismatch`: a waiter that waits on a barrier more times than its arrivers can complete
 *   phases (plus one, for the producer-start idiom), or fewer times than phases complete (roles
 *   that disagree about the trip count).
 * - `unused-barrier`: a barrier that is initialized but that no operation ever names (or, where an
 *   operation on its array is never reached with these parameters, none that runs).
 * - `unreachable-arrive`: an arrive site (mbarrier.arrive, tcgen05.commit, cp.async.mbarrier.arrive)
 *   that no agent of its role ever executes.
 *
 * All three are warnings: they are heuristics over a schedule-free abstraction. They are skipped
 * when any agent's control flow depends on a wait result (`try_wait` with a destination,
 * `pending_count`) or when an agent does not finish within a step bound.
 */
import { paramExcluded } from './param-branches.js';
import { Machine } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { RawHazard } from './engine.js';
import type { Governor } from '../machine/governor.js';
import { emptySolo, solo, type Solo } from './solo.js';
import { relaxedRefusal } from './relaxed.js';

/** The most static findings one check reports (each distinct barrier of a CTA may have one). */
export const MAX_STATIC_FINDINGS = 20_000;

/**
 * The static findings of `p`: the check's refusal to judge the memory model of a launch too large
 * for the detector's records (an error, check/relaxed.ts `relaxedRefusal`), whatever the solo runs
 * give, then the static warnings ({@link soloWarnings}).
 */
export function staticChecks(p: Program, gov: Governor): RawHazard[] {
  const refused = relaxedRefusal(p);
  const found = soloWarnings(p, gov);
  return refused ? [refused, ...found] : found;
}

/**
 * The static warnings of `p` (see the file comment), at most {@link MAX_STATIC_FINDINGS} (a
 * launch of 1,056 CTAs would otherwise repeat one finding per CTA, hundreds of thousands of
 * times); empty when the solo runs are not conclusive or `gov` (the check's governor: its time and
 * memory bounds) stopped before they finished.
 */
function soloWarnings(p: Program, gov: Governor): RawHazard[] {
  const m = new Machine(p);
  if (!gov.allow(m.stateBytes())) return [];
  const s0 = m.initial();
  const out = emptySolo();
  const waitsOf: Map<number, number>[] = [];
  const firstOf: Map<number, number>[] = [];
  // The agents that wait on each barrier key (the per-key loops below visit only those).
  const waitersOf = new Map<number, number[]>();
  const ctaThreads = new Map<number, number>();
  for (const ag of p.agents) ctaThreads.set(ag.cta, (ctaThreads.get(ag.cta) ?? 0) + ag.threads);
  for (const ag of p.agents) {
    const w = new Map<number, number>();
    const first = new Map<number, number>();
    const st = s0.agents[ag.id]!;
    // Past a bound the static findings are left out (they are advice; the search reports the bound).
    if (gov.check() !== null) return [];
    if (st.status === 'run' && !solo(p, ag.id, st.frame, st.pc, out, w, first, ctaThreads.get(ag.cta)!, gov)) return [];
    waitsOf.push(w);
    firstOf.push(first);
    for (const k of w.keys()) {
      let l = waitersOf.get(k);
      if (!l) waitersOf.set(k, (l = []));
      l.push(ag.id);
    }
  }
  // Barrier arrays that carry data (tx bytes): every phase of one must be waited for.
  const dataArrays = new Set<string>();
  // The first operation (other than an init) on each barrier array that no solo run executed: a
  // barrier nothing reached may still be named there (after a trap, or behind a branch these
  // parameters never take), so the sketch is not told it has no operation on it.
  const notRunAt = new Map<string, SrcLoc>();
  // (A source line is reached when any of its sites is: a PTX `.func` inlined at each call.)
  const lineOf = (l: SrcLoc) => `${l.file ?? ''}:${l.line}:${l.col}`;
  const ranLines = new Set<string>();
  for (const [r, rc] of p.roles.entries()) for (const [pc, ins] of rc.code.entries()) if (ins.i === 'op' && out.ran.has(`${r}:${pc}`)) ranLines.add(lineOf(ins.loc));
  for (const [r, rc] of p.roles.entries()) for (const [pc, ins] of rc.code.entries()) {
    if (ins.i !== 'op') continue;
    const op = ins.op;
    if ('bar' in op && op.bar && op.op !== 'mbarrier.init' && !out.ran.has(`${r}:${pc}`) && !ranLines.has(lineOf(ins.loc)) && !notRunAt.has(op.bar.name)) notRunAt.set(op.bar.name, ins.loc);
    if (op.op === 'cp.async.bulk' || op.op === 'st.async' || op.op === 'cp.async.bulk.shared::cluster' || op.op === 'mbarrier.expect_tx' || op.op === 'mbarrier.complete_tx' || (op.op === 'mbarrier.arrive' && op.expectTx)) dataArrays.add(op.bar.name);
  }
  // Where the solo runs saw tx bytes on some barriers of an array and not on others, the others
  // are release barriers: a PTX kernel's one shared-memory array holds its full and empty
  // barriers side by side (CUTLASS's SharedStorage; ptxi/mixed.ts).
  const txArrays = new Set([...out.tx].map((k) => p.barrierOf(k).info.name));
  const carriesData = (k: number) => out.tx.has(k) || (dataArrays.has(p.barrierOf(k).info.name) && !txArrays.has(p.barrierOf(k).info.name));
  const hz: RawHazard[] = [];
  const add = (kind: string, subject: string, message: string, locs: (SrcLoc | undefined)[], details: string[] = []) =>
    hz.length < MAX_STATIC_FINDINGS && hz.push({ kind, severity: 'warning', key: `${subject}|${locs[0] ? `${locs[0].line}:${locs[0].col}` : ''}|static`, message, subject, state: 0, extra: [], details, locs: locs.filter((l): l is SrcLoc => !!l) });
  const nKeys = p.ctas * p.barriersPerCta;
  for (let k = 0; k < nKeys; k++) {
    if (gov.tick() !== null) return [];
    if (hz.length >= MAX_STATIC_FINDINGS) break;
    const { info, cta } = p.barrierOf(k);
    const rank = cta % p.clusterSize;
    const auto = info.init === 'auto' && (info.ctaOnly < 0 || info.ctaOnly === rank);
    const init = out.inits.get(k);
    if (!auto && !init) continue;
    const name = p.barrierName(k);
    if (!out.used.has(k)) {
      const at = notRunAt.get(info.name);
      add('unused-barrier', name, at
        ? `${name} is initialized but no operation that runs with these parameters arrives on, waits on or signals it (the operation on ${info.name} at line ${at.line} is never reached)`
        : `${name} is initialized but no operation ever arrives on, waits on or signals it`, [init?.loc ?? info.loc, at]);
      continue;
    }
    if (out.unknown.has(k)) continue;
    const count = init ? init.count : info.count;
    const arrivals = out.arrivals.get(k) ?? 0;
    if (count <= 0) continue;
    if (arrivals === 0) {
      if (out.needs.has(k)) {
        const bytes = dataArrays.has(info.name) ? ' (expect_tx and copies only change its tx-count)' : '';
        // Arrives on other barriers of the same array that run: the site that never names this one.
        const sibling = arriveSiteOn(p, out, info.name);
        const also = sibling ? `; the arrive on ${info.name} at line ${sibling.line} runs but never names ${name} with these parameters (its index, or a branch around it, leaves it out)` : '';
        add('count-mismatch', name, `${name} expects ${count} arrival(s) per phase, but no operation ever arrives on it${bytes}, so a wait for its phase 0 can never pass${also}`, [out.waitLocs.get(k), sibling ?? init?.loc ?? info.loc, ...(sibling ? [init?.loc ?? info.loc] : [])]);
      }
      continue;
    }
    const round = perRound(p, out, waitsOf, waitersOf.get(k) ?? [], k, count);
    if (round) {
      add('count-mismatch', name, round, [init?.loc ?? info.loc, out.arriveLocs.get(k)]);
      continue;
    }
    if (arrivals % count !== 0) {
      add('count-mismatch', name, `${name} expects ${count} arrival(s) per phase, but its arrivers make ${arrivals} arrival(s) over the run, not a multiple of ${count}: the last phase is left with ${arrivals % count} arrival(s) and never completes`, [out.arriveLocs.get(k), init?.loc ?? info.loc]);
      continue;
    }
    const phases = arrivals / count;
    const data = carriesData(k);
    const low = data ? phases : phases - 1;
    // Phases the waits observe: a first wait with parity 1 passes on the fresh barrier (the
    // producer-start idiom) and observes none. A data barrier's phases must all be waited for; a
    // release (empty) barrier's last phase may go unobserved (the final release nobody needs).
    // Instances of one role that share the phases (each takes some, together all: CUTLASS's
    // pingpong math warpgroups on alternate tiles) are not short; there a data barrier's first
    // wait with parity 1 is a consumer whose first tile starts at an odd phase (a vacuous wait is
    // the search's `vacuous-wait`). The search checks what orders the consumers.
    const shared = (a: number) => (waitsOf[a]!.get(k) ?? 0) - (!data && firstOf[a]!.get(k) === 1 ? 1 : 0);
    const waiters = waitersOf.get(k) ?? [];
    for (const a of waiters) {
      const w = waitsOf[a]!.get(k) ?? 0;
      if (w === 0) continue;
      const vacuous = firstOf[a]!.get(k) === 1 ? 1 : 0;
      const observed = w - vacuous;
      if (observed > phases || (observed < low && instancesObserve(p, waiters, shared, k, p.agents[a]!.role) < low)) {
        // Several agents arriving once each per observed phase on a barrier counting fewer: the
        // count is what is wrong, not the trips (each arrival completes a phase of its own).
        const arrivers = [...(out.arrivers.get(k) ?? [])];
        const fit = arrivers.length > 1 && arrivals % (count * arrivers.length) === 0 ? arrivals / (count * arrivers.length) : -1;
        if (fit >= 0 && observed <= fit && observed >= (data ? fit : fit - 1)) {
          const names = arrivers.slice(0, 4).map((x) => p.agents[x]!.name).join(', ') + (arrivers.length > 4 ? ', …' : '');
          add('count-mismatch', name, `${name} expects ${count} arrival(s) per phase, but ${arrivers.length} agents arrive on it (${names}), ${arrivals} arrival(s) over the run for the ${observed} phase(s) ${p.agents[a]!.name} waits for: a phase completes as soon as ${count} of them ${count === 1 ? 'arrives' : 'arrive'}, so the phases run ahead of the waits; the count should be ${fitCount(arrivals, arrivers.length, observed, data) ?? count * arrivers.length}`, [init?.loc ?? info.loc, out.arriveLocs.get(k)]);
          break;
        }
        const past = observed > phases;
        add('trip-mismatch', name, `${p.agents[a]!.name} waits on ${name} ${w} time(s)${vacuous ? ' (the first on the fresh barrier)' : ''}, observing ${observed} phase(s), but the arrivals on it (${arrivals}, count ${count}) complete ${phases} phase(s)${past ? ': the waits past the last phase can never pass' : ': the roles disagree about the number of trips'}`, [out.waitLocs.get(k), out.arriveLocs.get(k)]);
        break;
      }
    }
  }
  // Arrive sites that no agent of their role ever reaches.
  const roles = new Set(p.agents.map((a) => a.role));
  // Source statements (a PTX instruction's CUDA line from -lineinfo, `SrcLoc.origin`; else the
  // site's own line and column) whose arrive on a barrier array some agent executed: an arrive
  // site of the same statement and array that never runs is a compiler's copy of it (nvcc's copy of
  // an unrolled loop body for the leftover trips, a `.func` inlined at another call), not a
  // forgotten arrive, and is not reported.
  const stmtOf = (l: SrcLoc) => l.origin ?? `${l.file ?? ''}:${l.line}:${l.col}`;
  const ranArrive = new Set<string>();
  // Roles (by index) with an arrive site on a barrier array that some agent executed.
  const roleArrives = new Set<string>();
  for (const [r, rc] of p.roles.entries()) {
    rc.code.forEach((ins, pc) => {
      if (ins.i !== 'op' || !out.ran.has(`${r}:${pc}`)) return;
      const o = ins.op;
      if (o.op === 'mbarrier.arrive' || o.op === 'tcgen05.commit' || o.op === 'cp.async.mbarrier.arrive') {
        ranArrive.add(`${o.bar.name}|${stmtOf(ins.loc)}`);
        roleArrives.add(`${r}|${o.bar.name}`);
      }
    });
  }
  const excluded = paramExcluded(p.kernel, p.params);
  for (const r of roles) {
    const rc = p.roles[r]!;
    // One source line may be several sites (a PTX `.func` inlined at each of its calls): the line
    // is reached when any of its sites is.
    const at = (l: SrcLoc) => `${l.file ?? ''}:${l.line}:${l.col}`;
    const ranAt = new Set<string>();
    rc.code.forEach((ins, pc) => {
      if (ins.i === 'op' && out.ran.has(`${r}:${pc}`)) ranAt.add(at(ins.loc));
    });
    rc.code.forEach((ins, pc) => {
      if (ins.i !== 'op' || out.ran.has(`${r}:${pc}`) || ranAt.has(at(ins.loc))) return;
      const o = ins.op;
      if (o.op !== 'mbarrier.arrive' && o.op !== 'tcgen05.commit' && o.op !== 'cp.async.mbarrier.arrive') return;
      if (ranArrive.has(`${o.bar.name}|${stmtOf(ins.loc)}`)) return;
      // A PTX site names its barrier by register arithmetic (`full[(%r110 - 9216) / 8]`): the
      // message names the operation, the array and the CUDA line it was compiled from instead.
      const what = ins.loc.origin ? `${o.op}${o.op === 'mbarrier.arrive' && o.expectTx ? '.expect_tx' : ''} on ${o.bar.name} (${ins.loc.origin})` : ins.text;
      const branch = excluded.get(at(ins.loc));
      // A specialization whose role arrives on the same array in the branch taken is no finding at all.
      if (branch && roleArrives.has(`${r}|${o.bar.name}`)) return;
      const why = branch ? ` (the branch \`if ${branch.cond}\` at line ${branch.loc.line} leaves it out)` : '';
      const pushed = add('unreachable-arrive', o.bar.name, `${what} in ${rc.name} (line ${ins.loc.line}) is never executed with these parameters${why}: its barrier never receives that arrival`, [ins.loc]);
      if (branch && pushed) hz[hz.length - 1]!.specialized = true;
    });
  }
  // Named barriers: threads taking part in each generation vs the count.
  const perKey = new Map<number, { agents: number[]; counts: Set<number>; loc: SrcLoc }>();
  for (const [nk, e] of out.named) {
    const agents = [...new Set([...e.kinds].map((x) => Number(x.split(':')[0])))];
    perKey.set(nk, { agents, counts: e.counts, loc: e.loc });
  }
  for (const [nk, e] of perKey) {
    if (e.counts.size !== 1) continue;
    const count = [...e.counts][0]!;
    const threads = e.agents.reduce((n, a) => n + p.agents[a]!.warps * 32, 0);
    if (threads === count) continue;
    // Role instances that each fill a generation on their own take turns on the id (CUTLASS's
    // pingpong epilogue barrier, one math warpgroup at a time): not a count mismatch.
    const per = new Map<string, number>();
    for (const a of e.agents) per.set(consumerKey(p, a), (per.get(consumerKey(p, a)) ?? 0) + p.agents[a]!.warps * 32);
    if (per.size > 1 && [...per.values()].every((n) => n === count)) continue;
    const id = nk % 16;
    const parts = e.agents.map((a) => `${p.agents[a]!.name} ${p.agents[a]!.warps * 32}`).join(' + ');
    add('count-mismatch', namedBarrierSubject(p, id, Math.floor(nk / 16)), `named barrier ${id} has ${threads} participating threads per use (${parts}) but count ${count}`, [e.loc]);
  }
  return hz;
}

/**
 * The message of a per-round count mismatch on barrier key `k` (expected `count` arrivals per phase),
 * or null: some waiter (among `waiters`, with `waitsOf` per agent) waits on `k` two or more times,
 * each arriver on `k` executes exactly as many arrive operations as it waits (one per round, the
 * round being the span between the waiter's consecutive waits, as in a full/empty ring), and the
 * arrivals of one round (all of them over the waits) are fewer than `count`: a phase then completes
 * only every few rounds, and the waiter's waits outrun the phases (a hang, whatever the trip count;
 * more arrivals than the count are the trip-count rule's). Arrival counts of the solo runs (an
 * `mbarrier.arrive`'s count operand included, PTX ISA §9.7.13.15.13).
 */
function perRound(p: Program, out: Solo, waitsOf: readonly Map<number, number>[], waiters: readonly number[], k: number, count: number): string | null {
  const ops = out.arriveOpsBy.get(k);
  const arrivals = out.arrivals.get(k) ?? 0;
  if (!ops || !ops.size || arrivals === 0) return null;
  for (const a of waiters) {
    const w = waitsOf[a]!.get(k) ?? 0;
    if (w < 2 || arrivals % w !== 0 || [...ops.values()].some((n) => n !== w)) continue;
    const each = arrivals / w;
    // More arrivals than the count per round: the phases run ahead of the waits, which the
    // trip-count rule below reports with the count that fits.
    if (each >= count) return null;
    const arrivers = [...ops.keys()];
    const names = arrivers.slice(0, 4).map((x) => p.agents[x]!.name).join(', ') + (arrivers.length > 4 ? ', …' : '');
    const name = p.barrierName(k);
    return `each round brings ${each} arrival(s) on ${name}; the count is ${count}: ${names} ${arrivers.length === 1 ? 'arrives' : 'arrive'} ${w} time(s), once per round between ${p.agents[a]!.name}'s ${w} waits on it; a phase completes only once ${count} arrive, so the phases fall behind the rounds and ${p.agents[a]!.name}'s waits outrun them: make the count ${each}, or the arrivals per round ${count}`;
  }
  return null;
}

/** The subject of a finding about named barrier `id` of CTA `cta`: `bar.sync ID`, with `@cN` in a cluster. */
export function namedBarrierSubject(p: Program, id: number, cta: number): string {
  return `bar.sync ${id}${p.ctas > 1 ? `@c${cta}` : ''}`;
}

/** The consumer an agent belongs to: its role instance in its CTA (the warps of one instance are one consumer). */
function consumerKey(p: Program, a: number): string {
  const g = p.agents[a]!;
  return `${g.role}:${g.instance}:${g.cta}`;
}

/**
 * Phases of barrier key `k` that the instances of `role` among its `waiters` observe together, when two or more of
 * them wait on it: per instance the most any of its agents observes (`observedBy`), summed; 0
 * when fewer than two instances wait on `k` (one consumer alone must observe the phases itself).
 */
function instancesObserve(p: Program, waiters: readonly number[], observedBy: (a: number) => number, k: number, role: number): number {
  const per = new Map<string, number>();
  for (const a of waiters) {
    if (p.agents[a]!.role !== role) continue;
    const c = consumerKey(p, a);
    per.set(c, Math.max(per.get(c) ?? 0, observedBy(a)));
  }
  if (per.size < 2) return 0;
  let n = 0;
  for (const v of per.values()) n += v;
  return n;
}

/**
 * The count under which `arrivals` by `arrivers` agents complete the phases the waits need — all
 * `observed` of a data barrier; of a release barrier also the final one nobody waits for (tried
 * first) — with every arriver arriving equally often per phase; undefined when none fits.
 */
function fitCount(arrivals: number, arrivers: number, observed: number, data: boolean): number | undefined {
  for (const phases of data ? [observed] : [observed + 1, observed]) {
    if (phases > 0 && arrivals % phases === 0 && (arrivals / phases) % arrivers === 0) return arrivals / phases;
  }
  return undefined;
}

/**
 * Where an arrive on another barrier of array `array` ran in the solo runs (its first such site),
 * or undefined: the site whose index skips a barrier of the array that nothing arrives on.
 */
function arriveSiteOn(p: Program, out: Solo, array: string): SrcLoc | undefined {
  for (const [k, loc] of out.arriveLocs) if (p.barrierOf(k).info.name === array) return loc;
  return undefined;
}
