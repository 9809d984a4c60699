import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { kernel } from '../src/kernel/builder.js';
import { EXAMPLES, cluster, hopper, mechanism, phaseTracking, pipeline } from '../src/examples/index.js';
import { Machine, cloneState } from '../src/machine/machine.js';
import type { MachineEvent } from '../src/machine/events.js';
import { instantiate, KernelError } from '../src/machine/program.js';
import { buildLedger } from '../src/report/ledger.js';
import { phaseTable, renderPhaseTable } from '../src/report/phases.js';
import { simulate } from '../src/sim/simulate.js';

const sim = (k: ReturnType<typeof mechanism>, set: Record<string, number> = {}) => simulate(instantiate(k, set));
const kinds = (ev: MachineEvent[]) => ev.map((e) => e.e);

describe('seed mechanism example', () => {
  const r = sim(mechanism());
  const ev = r.events!;
  test('runs ok: one arrive.expect_tx(4096), two 2,048-byte credits, one phase flip, then the wait passes', () => {
    expect(r.verdict).toBe('ok');
    const sig = ev.filter((e) => ['arrive', 'complete_tx', 'phase', 'wait'].includes(e.e)).map((e) => {
      if (e.e === 'arrive') return `arrive +${e.expectTx} pending ${e.pending} tx ${e.tx}`;
      if (e.e === 'complete_tx') return `complete_tx ${e.bytes} tx ${e.tx}`;
      if (e.e === 'phase') return `phase ${e.completed} done`;
      if (e.e === 'wait') return `wait ${e.parity} ${e.pass ? 'pass' : 'false'}`;
      return '';
    });
    expect(sig).toEqual(['arrive +4096 pending 0 tx 4096', 'complete_tx 2048 tx 2048', 'complete_tx 2048 tx 0', 'phase 0 done', 'wait 0 pass']);
  });
  test('ledger: phase 0 expected 4096 bytes, completed 4096 in 2 credits, released the consumer', () => {
    const l = buildLedger(r.program, ev);
    expect(l.phases).toHaveLength(1);
    expect(l.phases[0]).toMatchObject({ barrier: 'bar[0]', phase: 0, arrived: 1, txExpected: 4096, txCompleted: 4096 });
    expect(l.phases[0]!.credits).toHaveLength(2);
    expect(l.phases[0]!.waiters.map((w) => w.who)).toEqual(['consumer']);
    expect(l.vacuous).toEqual([]);
  });
  test('the consumer reads only after the phase completed', () => {
    const phaseT = ev.find((e) => e.e === 'phase')!.t;
    const reads = ev.filter((e) => e.e === 'access' && e.proxy === 'generic');
    expect(reads).toHaveLength(2);
    for (const x of reads) expect(x.t).toBeGreaterThan(phaseT);
  });
});

describe("seed phase-tracking table (golden)", () => {
  test('S=2 reproduces the seed chapter table exactly', () => {
    const rows = phaseTable(instantiate(phaseTracking()));
    expect(renderPhaseTable(rows)).toBe(
      [
        'iteration  stage  phase parity waited on  barrier parity after completion  phase_tma after iteration',
        '0          0      0                       1                                0',
        '1          1      0                       1                                1',
        '2          0      1                       0                                1',
        '3          1      1                       0                                0',
      ].join('\n'),
    );
  });
  test('any stage count: S=3, N=9 follows stage = i % S, parity = (i / S) & 1', () => {
    const rows = phaseTable(instantiate(phaseTracking(), { S: 3, N: 9 }));
    expect(rows).toHaveLength(9);
    rows.forEach((r, i) => {
      expect(r).toEqual({ agent: 'consumer', iteration: i, stage: i % 3, parityWaited: Math.floor(i / 3) & 1, parityAfter: (Math.floor(i / 3) & 1) ^ 1, phaseVar: Math.floor((i + 1) / 3) & 1, phase: Math.floor(i / 3) + 1 });
    });
  });
});

describe('pipeline examples: timeline invariants', () => {
  const phasesOf = (ev: MachineEvent[], r: ReturnType<typeof sim>, name: string) => {
    const out = new Map<number, number>();
    for (const e of ev) if (e.e === 'phase' && r.program.barrierOf(e.bar).info.name === name) out.set(r.program.barrierOf(e.bar).index, (out.get(r.program.barrierOf(e.bar).index) ?? 0) + 1);
    return out;
  };
  /** For each buffer, no async write may begin while an earlier reader (generic or async) has not finished. */
  const noOverwriteWhileRead = (ev: MachineEvent[]) => {
    const open = new Map<number, number>(); // buf -> open async reads
    const lastRead = new Map<number, number>();
    for (const e of ev) {
      if (e.e !== 'access') continue;
      if (e.rw === 'r') {
        if (e.edge === 'begin') open.set(e.buf, (open.get(e.buf) ?? 0) + 1);
        if (e.edge === 'end') open.set(e.buf, (open.get(e.buf) ?? 0) - 1);
        lastRead.set(e.buf, e.t);
      } else if (e.edge === 'begin' && e.proxy === 'async') {
        expect(open.get(e.buf) ?? 0).toBe(0);
      }
    }
  };

  test('Blackwell pipeline: every stage cycles TILES·K/S times, accumulator per tile, no diagnostics', () => {
    const r = sim(pipeline(), { S: 4, K: 8, TILES: 3 });
    expect(r.verdict).toBe('ok');
    expect(r.diagnostics).toEqual([]);
    const ev = r.events!;
    expect([...phasesOf(ev, r, 'full').values()]).toEqual([6, 6, 6, 6]);
    expect([...phasesOf(ev, r, 'empty').values()]).toEqual([6, 6, 6, 6]);
    expect(phasesOf(ev, r, 'acc_full').get(0)).toBe(3);
    expect(phasesOf(ev, r, 'acc_empty').get(0)).toBe(3);
    noOverwriteWhileRead(ev);
    // The MMA of round r on stage s begins only after full[s] phase r completed.
    const fullDone = new Map<string, number>();
    for (const e of ev) if (e.e === 'phase' && r.program.barrierOf(e.bar).info.name === 'full') fullDone.set(`${r.program.barrierOf(e.bar).index}:${e.completed}`, e.t);
    const waits = ev.filter((e): e is Extract<MachineEvent, { e: 'wait' }> => e.e === 'wait' && r.program.barrierOf(e.bar).info.name === 'full');
    expect(waits).toHaveLength(24);
    waits.forEach((w, i) => expect(w.t).toBeGreaterThanOrEqual(fullDone.get(`${i % 4}:${Math.floor(i / 4)}`)!));
    expect(r.final.inflight).toEqual([]);
  });

  test('Hopper pipeline: two consumer warpgroups release every stage; bulk stores finish before exit', () => {
    const r = sim(hopper(), { S: 2, K: 6 });
    expect(r.verdict).toBe('ok');
    expect(r.diagnostics).toEqual([]);
    const ev = r.events!;
    expect([...phasesOf(ev, r, 'empty').values()]).toEqual([3, 3]);
    expect(ev.filter((e) => e.e === 'async' && e.kind === 'wgmma')).toHaveLength(12);
    expect(ev.filter((e) => e.e === 'async.done' && e.kind === 'bulk.store')).toHaveLength(2);
    noOverwriteWhileRead(ev);
    expect(r.final.inflight).toEqual([]);
  });

  test('cluster: multicast halves land in both CTAs; remote arrives complete the peer empty barriers', () => {
    const r = sim(cluster(), { S: 2, K: 6 });
    expect(r.verdict).toBe('ok');
    expect(r.diagnostics).toEqual([]);
    const ev = r.events!;
    const remote = ev.filter((e) => e.e === 'async' && e.kind === 'remote');
    expect(remote).toHaveLength(12); // 2 consumers × 6 iterations
    const tma = ev.filter((e) => e.e === 'async' && e.kind === 'tma');
    expect(new Set(tma.map((e) => (e as { cta: number }).cta))).toEqual(new Set([0, 1]));
    // Each CTA's full barriers complete K/S times per stage; each empty barrier K/S + 0 (tail waits).
    const full = ev.filter((e) => e.e === 'phase' && r.program.barrierOf(e.bar).info.name === 'full');
    expect(full).toHaveLength(12);
    expect(r.final.inflight).toEqual([]);
  });
});

describe('machine diagnostics and verdicts', () => {
  const k1 = (body: Parameters<ReturnType<typeof kernel>['role']>[2], o: { count?: number } = {}) => {
    const k = kernel('t', { params: { X: 1 } });
    k.barriers('b', 2, { count: o.count ?? 1 });
    k.smem('buf', 2, 1024);
    k.role('r', { warps: 1, per: 'one' }, body);
    return instantiate(k.build());
  };

  test('over-arrival traps the kernel: verdict trap', () => {
    const r = simulate(k1((r) => r.arrive('b[0]', { count: 2 })));
    expect(r.verdict).toBe('trap');
    expect(r.diagnostics.map((d) => d.diag.code)).toEqual(['over-arrival']);
  });
  test('remote-wait: waiting on another CTA\'s barrier stops the agent', () => {
    const k = kernel('t', { cluster: 2 });
    k.barriers('b', 1, { count: 1 });
    k.role('r', { warps: 1, per: 'one' }, (r) => r.wait('b[0]@(1 - cta)', 1));
    const r = simulate(instantiate(k.build()));
    expect(r.diagnostics.map((d) => d.diag.code)).toContain('remote-wait');
  });
  test('parity-operand: a parity of 2 is reported (bit 0 is used)', () => {
    const r = simulate(k1((r) => r.wait('b[0]', 3)));
    expect(r.diagnostics.map((d) => d.diag.code)).toEqual(['parity-operand']);
    expect(r.verdict).toBe('ok'); // parity 3 & 1 = 1 passes on a fresh barrier; a warning only
  });
  test('index-range: a barrier index out of range at run time', () => {
    const r = simulate(k1((r) => r.for('i', 0, 3, (r) => r.arrive('b[i]'))));
    expect(r.verdict).toBe('trap');
    expect(r.diagnostics.map((d) => d.diag.code)).toEqual(['index-range']);
  });
  test('arith: a division by zero in the program stops the agent at its line', () => {
    const r = simulate(k1((r) => { r.let('z', 0); r.let('x', '4 / z'); r.arrive('b[0]'); }));
    expect(r.verdict).toBe('trap');
    expect(r.diagnostics.map((d) => [d.diag.code, d.diag.message])).toEqual([['arith', 'division by zero: 4 / 0 in an expression of r']]);
    expect(r.diagnostics[0]!.loc!.line).toBeGreaterThan(0);
  });
  test('arith: a loop step of 0 is reported instead of looping forever', () => {
    const r = simulate(k1((r) => r.for('i', 0, 4, (r) => r.arrive('b[0]'), 0)));
    expect(r.diagnostics.map((d) => d.diag.code)).toEqual(['arith']);
  });
  test('lapping: a second bar.arrive in the generation the first one joined', () => {
    const k = kernel('lap');
    k.role('c', { warps: 4, per: 'thread' }, (r) => r.for('t', 0, 2, (r) => r.barArrive(1, 160)));
    k.role('l', { warps: 1, per: 'thread' }, (r) => { r.work(1000); r.barSync(1, 160); });
    const r = simulate(instantiate(k.build()));
    expect(r.diagnostics.map((d) => d.diag.code)).toEqual(['lapping']);
    expect(r.verdict).not.toBe('ok');
  });
  test('bulk-size: a copy that is not a multiple of 16 bytes', () => {
    const r = simulate(k1((r) => { r.arriveExpectTx('b[0]', 100); r.tma('buf[0]', 100, 'b[0]'); }));
    expect(r.diagnostics.map((d) => d.diag.code)).toEqual(['bulk-size']);
  });
  test('per-thread arrives: a warp is one arrive of 32 (traps on 16 pending); each warp of a role arrives on its own', () => {
    const one = kernel('t');
    one.barriers('b', 1, { count: 16 });
    one.role('r', { warps: 1, per: 'thread' }, (r) => r.arrive('b[0]'));
    const r1 = simulate(instantiate(one.build()));
    expect(r1.verdict).toBe('trap');
    expect(r1.diagnostics.map((d) => d.diag.code)).toEqual(['over-arrival']);
    const four = kernel('t');
    four.barriers('b', 1, { count: 64 });
    four.role('r', { warps: 4, per: 'thread' }, (r) => r.arrive('b[0]'));
    // Four warps, four arrive instructions: two complete phase 0, the other two phase 1.
    const r4 = simulate(instantiate(four.build()));
    expect(r4.diagnostics.map((d) => d.diag.code)).toEqual([]);
    expect(r4.final.bars[0]).toMatchObject({ phase: 2, pending: 64 });
    // The same role in lockstep (one agent): one instruction of 128 arrivals spills over the count.
    const l4 = simulate(instantiate(four.build(), {}, { lockstep: true }));
    expect(l4.diagnostics.map((d) => d.diag.code)).toEqual(['arrival-spill']);
  });
  test('hang: producer waits on empty with parity 0 at start; the report names the missing arrival', () => {
    const k = kernel('t', { params: { S: 2 } });
    k.barriers('full', 'S', { count: 1 });
    k.barriers('empty', 'S', { count: 1 });
    k.smem('buf', 'S', 1024);
    k.role('producer', { warps: 1, per: 'one' }, (r) => r.for('i', 0, 4, (r) => {
      r.let('s', 'i % S');
      r.wait('empty[s]', '(i / S) & 1'); // BUG: should be ^ 1
      r.arriveExpectTx('full[s]', 1024);
      r.tma('buf[s]', 1024, 'full[s]');
    }));
    k.role('consumer', { warps: 1, per: 'one' }, (r) => r.for('i', 0, 4, (r) => {
      r.let('s', 'i % S');
      r.wait('full[s]', '(i / S) & 1');
      r.read('buf[s]');
      r.arrive('empty[s]');
    }));
    const r = simulate(instantiate(k.build()));
    expect(r.verdict).toBe('hang');
    const w = r.hang!.waiters;
    expect(w.map((x) => `${x.name}:${x.barName}`)).toEqual(['producer:empty[0]', 'consumer:full[0]']);
    expect(w[0]!.reasons[1]).toBe('1 of 1 arrivals are missing; agents that can still arrive on empty[0]: consumer (blocked in mbarrier.try_wait.parity full[s], (i / S) & 1, line ' + w[1]!.loc.line + ')');
    expect(r.hang!.cycle).toEqual(['producer', 'consumer', 'producer']);
  });
  test('hang: expect_tx with more bytes than copied names the unsent bytes', () => {
    const r = simulate(k1((r) => { r.arriveExpectTx('b[0]', 2048); r.tma('buf[0]', 1024, 'b[0]'); r.wait('b[0]', 0); }));
    expect(r.verdict).toBe('hang');
    expect(r.hang!.waiters[0]!.reasons).toContain('1024 bytes were expected (expect_tx) but no copy in flight will deliver them; no running agent\'s remaining code delivers more bytes to it than it expects');
    expect(r.hang!.waiters[0]!.bytesMissing).toBe(true);
  });
  test('an expectation smaller than the bytes sent can complete early and spill into the next phase (FINDINGS-tensor TT4/TT5)', () => {
    const r = simulate(k1((r) => {
      r.arriveExpectTx('b[0]', 1024);
      r.tma('buf[0]', 2048, 'b[0]', { chunks: 2 });
      r.wait('b[0]', 0);
    }));
    const ev = r.events!.filter((e) => e.e === 'complete_tx' || e.e === 'phase');
    expect(ev.map((e) => (e.e === 'phase' ? `phase ${e.completed}` : `credit ${e.bytes} in phase ${e.phase} → tx ${e.tx}`))).toEqual([
      'credit 1024 in phase 0 → tx 0',
      'phase 0',
      'credit 1024 in phase 1 → tx -1024',
    ]);
    expect(r.verdict).toBe('ok');
    expect(r.final.bars[0]).toMatchObject({ phase: 1, pending: 1, tx: -1024 });
  });
  test('kernel errors carry locations', () => {
    const k = kernel('t');
    k.barriers('b', 1, { count: 1 });
    k.role('r', { warps: 1 }, (r) => r.arrive('nope[0]'));
    expect(() => instantiate(k.build())).toThrow(KernelError);
    try {
      instantiate(k.build());
    } catch (e) {
      expect((e as KernelError).message).toBe("unknown barrier 'nope'");
      expect((e as KernelError).loc!.line).toBeGreaterThan(0);
    }
    expect(() => instantiate(mechanism(), { NOPE: 1 })).toThrow("unknown parameter 'NOPE' (this kernel has: BYTES)");
  });
});

describe('the step function', () => {
  test('step is pure: the input state is unchanged, and apply on a clone gives the same result', () => {
    const p = instantiate(pipeline(), { S: 2, K: 4, TILES: 1 });
    const m = new Machine(p);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 60 }), (picks) => {
        let s = m.initial();
        for (const pick of picks) {
          const en = m.enabled(s);
          if (en.length === 0) break;
          const before = JSON.stringify(s);
          const { state } = m.step(s, en[pick % en.length]!);
          expect(JSON.stringify(s)).toBe(before);
          s = state;
        }
        const c = cloneState(s);
        expect(JSON.stringify(c)).toBe(JSON.stringify(s));
      }),
      { numRuns: 60 },
    );
  });

  test('any schedule of the correct examples ends with every agent finished (random walks)', () => {
    for (const ex of EXAMPLES) {
      const p = instantiate(ex.build(), ex.name === 'pipeline' ? { S: 2, K: 4, TILES: 2 } : ex.name === 'hopper' || ex.name === 'cluster' ? { S: 2, K: 4 } : {});
      const m = new Machine(p);
      fc.assert(
        fc.property(fc.array(fc.nat(), { minLength: 400, maxLength: 400 }), (picks) => {
          const s = m.initial();
          const out = { events: null, phases: [], issued: [], other: false, diags: [] };
          let i = 0;
          for (;;) {
            const en = m.enabled(s);
            if (en.length === 0) break;
            m.apply(s, en[picks[i++ % picks.length]! % en.length]!, out);
            expect(out.diags).toEqual([]);
          }
          expect(s.agents.every((a) => a.status === 'done')).toBe(true);
          expect(s.inflight).toEqual([]);
        }),
        { numRuns: 25 },
      );
    }
  });

  test('simulation is deterministic; a seed changes timing but not the protocol', () => {
    const p = instantiate(pipeline(), { S: 2, K: 8, TILES: 1 });
    const a = simulate(p);
    const b = simulate(p);
    expect(a.cycles).toBe(b.cycles);
    expect(kinds(a.events!)).toEqual(kinds(b.events!));
    const s1 = simulate(p, { seed: 1 });
    const s1b = simulate(p, { seed: 1 });
    const s2 = simulate(p, { seed: 2 });
    expect(s1.cycles).toBe(s1b.cycles);
    expect(s1.cycles).not.toBe(s2.cycles);
    expect(s1.verdict).toBe('ok');
    expect(s1.events!.filter((e) => e.e === 'phase').length).toBe(a.events!.filter((e) => e.e === 'phase').length);
  });
});
