// The facts the checker's cause rules read are structured fields, never the report's text: a hang's
// producer-start parity (machine/hang.ts decides it, the raw hazard carries it, also out of a
// parallel search's workers) and a race fix's family (check/cause.ts `fixKind`).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/check.js';
import { checkResultOf } from '../src/check/check.js';
import { explore } from '../src/check/explore.js';
import { explainRace, type RaceBars } from '../src/check/race-report.js';
import { staticChecks } from '../src/check/static.js';
import { parseSketch } from '../src/lang/index.js';
import { Governor } from '../src/machine/governor.js';
import { instantiate, type Program } from '../src/machine/program.js';
import { replay } from '../src/check/replay.js';
import type { Hazard } from '../src/check/check-types.js';

function program(src: string, params: Record<string, number> = {}): Program {
  const parsed = parseSketch(src, 't.mbk');
  expect(parsed.diagnostics).toEqual([]);
  return instantiate(parsed.kernel!, params);
}

/**
 * The producer-start bug: the producer's first wait on the fresh empty barrier uses parity 0 (line
 * 9). A handshake on `go` first: the hang is no initial state, so a parallel search finds it in a
 * worker (the initial state's hazards are the main thread's).
 */
const START = `kernel start arch=sm_90a
smem X[1] bytes=1024
barrier full[1] count=1
barrier empty[1] count=1
barrier go[1] count=1
role producer warps=1 per=one:
    mbarrier.try_wait.parity go[0], 0
    for i in range(0, 2):
        mbarrier.try_wait.parity empty[0], i & 1
        mbarrier.arrive.expect_tx full[0], 1024
        cp.async.bulk.tensor X[0], 1024, full[0]
role consumer warps=1 per=one:
    mbarrier.arrive go[0]
    for i in range(0, 2):
        mbarrier.try_wait.parity full[0], i & 1
        ld.shared X[0]
        mbarrier.arrive empty[0]
`;

const CAUSE = `producer waits on empty[0] with parity 0 while the barrier is still in its phase 0, so it waits for the barrier's first completion, which the agents it waits for cannot give before it passes; a wait meaning "the buffer is free" at the start (a producer on an empty barrier) uses parity 1, which passes on a fresh barrier (start the producer's phase bit at 1)`;

describe('the producer-start parity travels as a field of the raw hang', () => {
  it('the hang detector sets it: waiter, barrier and the wait\'s line', () => {
    const r = explore(program(START));
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.startParity).toEqual({ waiter: 'producer', barrier: 'empty[0]', loc: expect.objectContaining({ file: 't.mbk', line: 9, col: 9 }) });
    // The wait-for cycle is not a hang: no fact of its own (it takes the hang's cause).
    expect(r.hazards.find((h) => h.kind === 'cycle')?.startParity).toBeUndefined();
  });
  it('with two workers the raw hazard carries the same fact out of a worker, and the check names the same cause', () => {
    const p = program(START);
    const seq = explore(p).hazards.find((h) => h.kind === 'hang')!;
    // Bounds for a loaded machine: starting two worker threads may take longer than the default minute.
    const pr = explore(p, { workers: 2, timeoutMs: 600_000 });
    expect(pr.complete).toBe(true);
    const par = pr.hazards.find((h) => h.kind === 'hang')!;
    // Found past the initial state (id 0): by a worker, whose hazards are posted to the main thread.
    expect(par.state).toBeGreaterThan(0);
    expect(par.startParity).toEqual(seq.startParity);
    for (const workers of [1, 2]) {
      const r = check(p, workers > 1 ? { workers, timeout: 600_000 } : {});
      const hang = r.hazards.find((h) => h.kind === 'hang')!;
      expect(hang.cause).toEqual({ kind: 'start-parity', message: CAUSE, locations: [expect.objectContaining({ line: 9, col: 9 })] });
      expect(r.hazards.find((h) => h.kind === 'cycle')!.cause?.kind).toBe('start-parity');
    }
  }, 600_000);
  it('the cause comes from the field: reworded details keep it, the field alone removed loses it', () => {
    const p = program(START);
    const r = explore(p);
    const gov = () => new Governor({ maxMemory: 1 << 30, deadline: Date.now() + 60_000 });
    const reworded = { ...r, hazards: r.hazards.map((h) => ({ ...h, details: h.details.map((d) => d.replace(/hint: .*$/, 'a reworded hint').replace(' blocked in ', ' stuck in ')) })) };
    const kept = checkResultOf(p, reworded, new Set(), {}, gov(), Date.now()).hazards.find((h) => h.kind === 'hang')!;
    expect(kept.details.join('\n')).not.toContain('hint:');
    expect(kept.cause?.kind).toBe('start-parity');
    expect(kept.cause?.message).toBe(CAUSE);
    const bare = { ...r, hazards: r.hazards.map(({ startParity: _, ...h }) => h) };
    const lost = checkResultOf(p, bare, new Set(), {}, gov(), Date.now()).hazards.find((h) => h.kind === 'hang')!;
    expect(lost.details.join('\n')).toContain('hint: parity 0 on a barrier still in phase 0');
    expect(lost.cause).toBeUndefined();
  });
  it('no fact for a producer whose parity-0 wait comes after a wait that passed on the barrier', () => {
    const src = START.replace('mbarrier.try_wait.parity empty[0], i & 1', 'mbarrier.try_wait.parity empty[0], (i & 1) ^ 1')
      .replace('mbarrier.arrive.expect_tx full[0], 1024', 'mbarrier.arrive.expect_tx full[0], 1024 + 1024 * (i == 0)');
    const r = explore(program(src));
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.startParity).toBeUndefined();
  });
});

/** A 3-stage TMA ring whose consumer's parity is inverted: its first wait passes on the fresh barrier. */
const RING = `kernel pipe3 arch=sm_90a
param S = 3
param N = 6
param TILE = 16384
barrier full[S] count=1
barrier empty[S] count=1
smem tile[S] bytes=TILE

role producer warps=1 per=one:
    for i in range(N):
        s = i % S
        mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1
        mbarrier.arrive.expect_tx full[s], TILE
        cp.async.bulk.tensor tile[s], TILE, full[s]

role consumer warps=1 per=one:
    for i in range(N):
        s = i % S
        mbarrier.try_wait.parity full[s], WAIT
        ld.shared tile[s]
        mbarrier.arrive empty[s]
`;

/** The race finding of `r` replayed and explained: its entry of the race map (barriers, named barriers, fix family). */
function raceEntry(p: Program, h: Hazard): { bars: string[]; named: string[]; fixKind: string } {
  const r = explore(p, { all: true });
  const raw = r.hazards.find((x) => x.kind === 'race' && x.subject === h.subject?.name)!;
  const copy: Hazard = { ...h, details: [], locations: [...raw.locs] };
  const bars: RaceBars = new Map();
  explainRace(p, raw, copy, replay(p, h.schedule).events, bars);
  return bars.get(copy)!;
}

describe('a race\'s fix family is a field of its cause', () => {
  it('the inverted consumer parity: fixKind parity, and the vacuous wait is the cause (not the trip counts)', () => {
    const p = program(RING.replace('WAIT', '((i / S) & 1) ^ 1'));
    const r = check(p);
    const h = r.hazards[0]!;
    expect(h.kind).toBe('race');
    expect(raceEntry(p, h).fixKind).toBe('parity');
    expect(h.cause?.kind).toBe('vacuous-wait');
    expect(r.warnings.some((w) => w.kind === 'trip-mismatch')).toBe(true);
    // The user-visible text is unchanged: the fix still begins with the wait's parity.
    expect(h.race!.fix).toMatch(/^the wait's parity: consumer's wait on full\[0\] \(line 19\) passed on the fresh barrier/);
  });
  it('a release before the read: fixKind release-order', () => {
    const p = program(RING.replace('WAIT', '(i / S) & 1').replace('        ld.shared tile[s]\n        mbarrier.arrive empty[s]\n', '        mbarrier.arrive empty[s]\n        ld.shared tile[s]\n'));
    const h = check(p).hazards.find((x) => x.kind === 'race')!;
    expect(raceEntry(p, h).fixKind).toBe('release-order');
    expect(h.race!.fix).toMatch(/^move the release after the access: /);
  });
});

describe('the barriers a hang\'s waiters wait on travel as a field of the raw hang', () => {
  // Two consumers arrive once a round on empty (count 3): the producer hangs on empty[0], the
  // consumers both on full[0]; the static count-mismatch on empty[0] is the cause.
  const src = RING.replace('barrier empty[S] count=1', 'barrier empty[S] count=3').replace('role consumer warps=1 per=one:', 'role consumer warps=1 per=one instances=2:').replace('WAIT', '(i / S) & 1');
  it('the detector lists them; the static cause is found from the list, not from the details\' text', () => {
    const p = program(src, { N: 6 });
    const r = explore(p);
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.subject).toBe('empty[0]');
    expect(hang.waitBarriers).toEqual(['empty[0]', 'full[0]', 'full[0]']);
    const gov = () => new Governor({ maxMemory: 1 << 30, deadline: Date.now() + 60_000 });
    const statics = new Set(staticChecks(p, gov()));
    // Without the subject (the headline barrier), only the waiters' barriers name empty[0].
    const headless = (h: (typeof r.hazards)[number]) => (h.kind === 'hang' ? { ...h, subject: null } : h);
    const reworded = { ...r, hazards: r.hazards.map((h) => ({ ...headless(h), details: h.details.map((d) => d.replace(/waits for phase/g, 'awaits phase')) })) };
    const kept = checkResultOf(p, reworded, statics, {}, gov(), Date.now()).hazards.find((h) => h.kind === 'hang')!;
    expect(kept.details.join('\n')).not.toContain('waits for phase');
    expect(kept.cause?.kind).toBe('count-mismatch');
    expect(kept.cause?.locations.map((l) => l.line)).toEqual([6, 21]);
    const bare = { ...r, hazards: r.hazards.map(({ waitBarriers: _, ...h }) => headless(h)) };
    const lost = checkResultOf(p, bare, statics, {}, gov(), Date.now()).hazards.find((h) => h.kind === 'hang')!;
    expect(lost.details.join('\n')).toContain('waits for phase 0 of empty[0]');
    expect(lost.cause).toBeUndefined();
  });
});

describe('a memory-model race\'s fix is the detector\'s, carried as a field', () => {
  const bug = (name: string) => {
    const parsed = parseSketch(readFileSync(`examples/bugs/${name}.mbk`, 'utf8'), `${name}.mbk`);
    return check(instantiate(parsed.kernel!)).hazards.find((h) => h.kind === 'race')!;
  };
  it('a relaxed arrive (M03): the fix makes the arrive .release, one fix line', () => {
    const h = bug('M03');
    expect(h.race!.fix).toBe('make the arrive .release, or put fence.acq_rel (at a scope that includes the waiter) before the relaxed arrive.');
    expect(h.details.filter((d) => d.startsWith('fix: '))).toEqual([`fix: ${h.race!.fix}`]);
  });
  it('a relaxed global flag (V06): the flag\'s fix, not a schedule\'s guess of a missing wait, one fix line', () => {
    const h = bug('V06');
    expect(h.race!.fix).toBe('store the flag with st.release (or atom/red .release), or put fence.acq_rel.gpu before the relaxed store.');
    expect(h.details.filter((d) => d.startsWith('fix: '))).toEqual([`fix: ${h.race!.fix}`]);
    expect(h.race!.explanation).toMatch(/^the write by split@c1 \(line 15\) and the read by split@c0 \(line 20\) are ordered in time but not by happens-before: /);
    // The reason travels as its own field: the explanation ends with it whatever the message's wording.
    expect(h.race!.explanation).toMatch(/happens-before: the write of \S+ by another agent reached this agent only through a global store that releases nothing/);
  });
});
