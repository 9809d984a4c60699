/**
 * Values that steer control flow, global memory, co-residency and cluster launch control
 * (src/machine/values.ts, src/machine/ops/values.ts, src/machine/ops/clc.ts): the machine's
 * semantics, what the checker explores, what the simulator takes.
 */
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { Machine } from '../src/machine/machine.js';
import { atomResult, spinDone } from '../src/machine/ops/values.js';
import { instantiate, type Program } from '../src/machine/program.js';
import { UNINIT } from '../src/machine/values.js';
import { simulate } from '../src/sim/simulate.js';

function sketch(src: string, set: Record<string, number> = {}): Program {
  const r = parseSketch(src, 'v.mbk');
  expect(r.diagnostics.map((d) => d.message)).toEqual([]);
  return instantiate(r.kernel!, set);
}

/** A scheduler publishes `t` (a choice); the consumer reads the slot after its wait and races only when t == 2. */
const CHOICE = `kernel c arch=sm_100a
barrier ready count=1
smem slot bytes=4
smem data bytes=64
role sched warps=1 per=one:
    choose t in range(0, 3)
    st.shared slot value=t
    mbarrier.arrive ready
    if t == 2:
        st.shared data
role consumer warps=1 per=one:
    mbarrier.try_wait.parity ready, 0
    v = ld.shared slot
    if v == 2:
        ld.shared data
`;

describe('choose', () => {
  test('the checker explores every value: the race behind t == 2 is found', () => {
    const r = check(sketch(CHOICE), { all: true });
    expect(r.verdict).toBe('race');
    expect(r.hazards.map((h) => [h.kind, h.subject?.name])).toEqual([['race', 'data']]);
  });
  test('--set t=1 pins the choice: the checker then explores only that value', () => {
    expect(check(sketch(CHOICE, { t: 1 })).verdict).toBe('ok');
    expect(check(sketch(CHOICE, { t: 2 })).verdict).toBe('race');
  });
  test('the simulator takes the lowest value, or the pinned one', () => {
    const frameOf = (p: Program) => {
      const r = simulate(p, { maxSteps: 10_000 });
      expect(r.verdict).toBe('ok');
      const lds = r.events!.filter((e) => e.e === 'access' && e.rw === 'r' && p.bufferName(e.buf) === 'data');
      return lds.length;
    };
    expect(frameOf(sketch(CHOICE))).toBe(0);
    expect(frameOf(sketch(CHOICE, { t: 2 }))).toBe(1);
  });
  test('an empty range is choose-range; a pin outside it too', () => {
    const empty = check(sketch(CHOICE.replace('range(0, 3)', 'range(2, 2)')));
    expect(empty.hazards.map((h) => [h.kind, h.message])).toEqual([['choose-range', 'choose t in 2..1: the range 2..1 is empty']]);
    const out = check(sketch(CHOICE, { t: 7 }));
    expect(out.hazards[0]!.message).toBe('choose t in 0..2: --set t=7 is outside 0..2');
  });
  test('a pick writes the variable and withdraws the other alternatives', () => {
    const p = sketch(CHOICE);
    const m = new Machine(p);
    let s = m.initial();
    s = m.step(s, { kind: 'agent', agent: 0 }).state; // choose: three picks in flight
    expect(s.inflight.map((o) => [o.kind, o.count])).toEqual([['pick', 0], ['pick', 1], ['pick', 2]]);
    s = m.step(s, { kind: 'async', id: s.inflight[1]!.id }).state;
    expect(s.inflight).toEqual([]);
    s = m.step(s, { kind: 'agent', agent: 0 }).state;
    expect(s.agents[0]!.frame[p.roles[0]!.slots.indexOf('t')]).toBe(1);
  });
});

describe('global memory', () => {
  test('atom and red compute on small integers as PTX says (inc / dec wrap at the operand)', () => {
    expect([atomResult('add', 3, 4), atomResult('exch', 3, 9), atomResult('min', 3, -1), atomResult('max', 3, 5)]).toEqual([7, 9, -1, 5]);
    expect([atomResult('inc', 2, 2), atomResult('inc', 1, 2), atomResult('dec', 0, 5), atomResult('dec', 3, 5), atomResult('dec', 7, 5)]).toEqual([0, 2, 5, 2, 5]);
    expect([atomResult('and', 6, 3), atomResult('or', 6, 3), atomResult('xor', 6, 3)]).toEqual([2, 7, 5]);
    expect([spinDone('ge', 2, 2), spinDone('gt', 2, 2), spinDone('eq', 1, 2), spinDone('ne', 1, 2), spinDone('lt', 1, 2), spinDone('le', 3, 2)]).toEqual([true, false, false, true, true, false]);
  });
  test('one location per launch: every CTA names the same cell; init= sets it, no init= leaves it uninitialized', () => {
    const p = sketch('kernel g arch=sm_90a grid=3\ngmem a[2] init=5\ngmem b\nrole r warps=1 per=one:\n    x = atom.global.add a[1], clusterid\n');
    const m = new Machine(p);
    const s0 = m.initial();
    expect([s0.mem[p.buffers[0]!.offset + 1], s0.mem[p.buffers[1]!.offset]]).toEqual([5, UNINIT]);
    let s = s0;
    for (let a = 0; a < 3; a++) s = m.step(s, { kind: 'agent', agent: a }).state;
    expect(s.mem[p.buffers[0]!.offset + 1]).toBe(5 + 0 + 1 + 2);
    expect(p.bufferName(p.buffers[0]!.offset + 1)).toBe('a[1]');
  });
  test('two weak accesses of a location by different CTAs, one a store, race; strong ones do not', () => {
    const weak = 'kernel w arch=sm_90a grid=2\ngmem f init=0\nrole r warps=1 per=one:\n    if clusterid == 0:\n        st.global f, 1\n    else:\n        v = ld.global f\n';
    expect(check(sketch(weak)).hazards.map((h) => [h.kind, h.subject?.name])).toEqual([['race', 'f']]);
    const strong = weak.replace('st.global f, 1', 'st.release.gpu.global f, 1').replace('v = ld.global f', 'v = ld.acquire.gpu.global f');
    expect(check(sketch(strong)).verdict).toBe('ok');
  });
  test('a global operation on shared memory (and the reverse) is refused with its location', () => {
    const r = parseSketch('kernel e arch=sm_90a\nsmem s bytes=4\ngmem g\nrole r warps=1 per=one:\n    v = ld.acquire.gpu.global s\n    ld.shared g\n', 'e.mbk');
    expect(r.diagnostics.map((d) => [d.code, d.line, d.message])).toEqual([
      ['E-kernel-memory-space', 5, "ld.strong accesses global memory: 's' is smem; declare it with gmem s[N]"],
    ]);
  });
  test('a strong load needs a scope; atom.cas takes a compare and a value; red has no .cas', () => {
    const r = parseSketch('kernel e arch=sm_90a\ngmem g\nrole r warps=1 per=one:\n    v = ld.acquire.global g\n    x = atom.global.cas g, 1\n    red.global.cas g, 0, 1\n', 'e.mbk');
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['E-unknown-mnemonic', 4], ['E-operand-count', 5], ['E-unknown-mnemonic', 6]]);
    expect(JSON.stringify(r.diagnostics[2])).toContain('red has no .cas');
  });
  test('atom.cas: only the CTA that finds the lock free enters (no race); a load-then-store lock races', () => {
    const lock = (take: string) => `kernel lock arch=sm_90a grid=2
gmem owner init=0
gmem data init=0
role r warps=1 per=one:
${take}
    if won == 0:
        st.global data, 1
`;
    expect(atomResult('cas', 0, 5, 0)).toBe(5);
    expect(atomResult('cas', 3, 5, 0)).toBe(3);
    const cas = check(sketch(lock('    won = atom.acq_rel.gpu.global.cas owner, 0, clusterid + 1')), { all: true });
    expect(cas.verdict).toBe('ok');
    const racy = check(sketch(lock('    won = ld.acquire.gpu.global owner\n    st.relaxed.gpu.global owner, clusterid + 1')), { all: true });
    expect(racy.hazards.map((h) => `${h.kind} ${h.subject?.name}`)).toContain('race data');
  });
});

describe('residency', () => {
  const ORDERED = (order: string, resident: string) => `kernel s arch=sm_90a grid=3${resident}
gmem sem init=0
role r warps=1 per=one:
    spin.acquire.gpu.eq sem, ${order}
    st.release.gpu.global sem, ${order} + 1
`;
  test('a spin on a CTA launched later hangs when it is not resident; with every CTA resident it passes', () => {
    const hang = check(sketch(ORDERED('2 - clusterid', ' resident=2')));
    expect(hang.verdict).toBe('hang');
    expect(hang.hazards[0]!.message).toContain('r@c0 in spin.acquire.gpu.eq sem, 2 - clusterid');
    expect(check(sketch(ORDERED('2 - clusterid', ''))).verdict).toBe('ok');
    expect(check(sketch(ORDERED('2 - clusterid', ' resident=all'))).verdict).toBe('ok');
    expect(check(sketch(ORDERED('clusterid', ' resident=1'))).verdict).toBe('ok');
  });
  test('two accesses of a cluster not resident yet are not co-enabled: the race is found once it runs, its trace replays', () => {
    const src = `kernel t arch=sm_90a grid=2 resident=1
smem S[1] bytes=1024
role a warps=1 per=one:
    if clusterid == 0:
        work 10
    if clusterid == 1:
        st.shared S[0]
role b warps=1 per=one:
    if clusterid == 1:
        ld.shared S[0]
`;
    const r = check(sketch(src), { all: true });
    expect(r.verdict).toBe('race');
    expect(r.hazards.map((h) => h.subject?.name)).toEqual(['S[0]@c1']);
    // Cluster 1 starts after cluster 0's only agent with work exits: the first step is that work.
    expect(r.hazards[0]!.trace.map((t) => `${t.actor} ${t.op}`)).toEqual(['a@c0 work 10', 'a@c1 st.shared S[0]  [S[0]@c1]', 'b@c1 ld.shared S[0]  [S[0]@c1]']);
  });
  test('CTA i starts only once fewer than R CTAs before it still run (the timed run shows the order)', () => {
    const p = sketch(ORDERED('clusterid', ' resident=1'));
    const r = simulate(p, { maxSteps: 10_000 });
    expect(r.verdict).toBe('ok');
    const first = (a: number) => r.events!.find((e) => e.e === 'op' && e.agent === a)!.t;
    const exit = (a: number) => r.events!.find((e) => e.e === 'exit' && e.agent === a)!.t;
    expect(first(1)).toBeGreaterThanOrEqual(exit(0));
    expect(first(2)).toBeGreaterThanOrEqual(exit(1));
  });
});

describe('cluster launch control', () => {
  const CLC = `kernel l arch=sm_100a
barrier got count=1
smem resp bytes=16
role s warps=1 per=one:
    mbarrier.arrive.expect_tx got, 16
    clusterlaunchcontrol.try_cancel resp, got
    mbarrier.try_wait.parity got, 0
    c = clusterlaunchcontrol.query_cancel.is_canceled resp
    x = clusterlaunchcontrol.query_cancel.get_first_ctaid resp
`;
  test('both outcomes are explored: get_first_ctaid of the failed one is clc-ctaid-failed', () => {
    const r = check(sketch(CLC), { all: true });
    expect(r.hazards.map((h) => h.kind)).toEqual(['clc-ctaid-failed']);
  });
  test('the response lands with complete_tx(16); a success names the first CTA after the launched ones', () => {
    const p = sketch(CLC);
    const r = simulate(p, { maxSteps: 10_000 });
    expect(r.verdict).toBe('ok');
    const tx = r.events!.filter((e) => e.e === 'complete_tx');
    expect(tx.map((e) => (e as { bytes: number }).bytes)).toEqual([16]);
    expect(r.diagnostics).toEqual([]);
  });
  test("multicast writes every CTA's response and signals every CTA's barrier", () => {
    const src = CLC.replace('kernel l arch=sm_100a', 'kernel l arch=sm_100a cluster=2').replace('clusterlaunchcontrol.try_cancel resp, got', 'if cta == 0:\n        clusterlaunchcontrol.try_cancel.multicast::cluster::all resp, got')
      .replace('    x = clusterlaunchcontrol.query_cancel.get_first_ctaid resp\n', '');
    const r = simulate(sketch(src), { maxSteps: 10_000 });
    expect(r.verdict).toBe('ok');
    expect(r.events!.filter((e) => e.e === 'complete_tx').length).toBe(2);
  });
});

describe('the builder', () => {
  test('builds the same kernel as the sketch: split-K in launch order, then in reverse with two resident CTAs', async () => {
    const { kernel } = await import('../src/kernel/builder.js');
    const build = (order: string, resident?: number) => kernel('splitk', { arch: 'sm_90a', grid: 3, ...(resident ? { resident } : {}) })
      .gmem('sem', 1, { init: 0 })
      .role('reduce', { warps: 1, per: 'one' }, (b) => b.spin('sem', 'eq', order).stGlobal('sem', `${order} + 1`, { sem: 'release' }))
      .build();
    expect(check(instantiate(build('clusterid', 2))).verdict).toBe('ok');
    expect(check(instantiate(build('2 - clusterid', 2))).verdict).toBe('hang');
    expect(check(instantiate(build('2 - clusterid'))).verdict).toBe('ok');
  });
});
