// Warp-relative symmetry (src/check/warp-relative.ts, docs/CHECK.md "Warp-relative symmetry"): the
// warps of a PTX kernel whose code reads the thread index are interchangeable when their code
// specialized to their index agrees; the depth bound that keeps the analysis free of recursion.
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { analyse } from '../src/check/analysis.js';
import { check, type CheckOptions, type CheckResult } from '../src/check/index.js';
import { exprDepth, MAX_EXPR_DEPTH, warpRelative, whyUnanalysable } from '../src/check/warp-relative.js';
import type { Expr, Kernel, Stmt } from '../src/kernel/ir.js';
import { instantiate, type Program } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { groupsOf } from './support/warp-groups.js';

/** The PTX file's program with its `// # launch:` line, `params` overriding. */
function ptxProgram(file: string, over: PtxLaunch = {}): Program {
  const src = readFileSync(file, 'utf8');
  const line = /\/\/ # launch: (.*)/.exec(src);
  const launch = { ...(line ? JSON.parse(line[1]!) as PtxLaunch : {}), ...over };
  launch.params = { ...(line ? (JSON.parse(line[1]!) as PtxLaunch).params : {}), ...over.params };
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}

const first = (r: CheckResult) => `${r.verdict} ${r.hazards[0]?.kind ?? ''} ${r.hazards[0]?.subject?.name ?? ''}`;
const loc = { line: 1, col: 1 };
const v = (name: string): Expr => ({ k: 'var', name });
const n = (x: number): Expr => ({ k: 'num', v: x });

/**
 * A role of 4 warps run as written: each warp computes `32 · warp` nested `depth` levels deep
 * (`((32 · warp + 0) + 0) …`), arrives per thread on `bar[0]` (count 128) and waits on it; only
 * the arrive's operands are the same for every warp.
 */
function deepKernel(depth: number): Kernel {
  let e: Expr = { k: 'bin', op: '*', a: v('warp'), b: n(32) };
  for (let i = 2; i < depth; i++) e = { k: 'bin', op: '+', a: e, b: n(0) };
  const body: Stmt[] = [
    { s: 'let', name: 't', value: e, loc },
    { s: 'op', op: { op: 'mbarrier.arrive', bar: { name: 'bar', index: { k: 'bin', op: '/', a: v('t'), b: n(1024) } }, per: 'thread' }, loc },
    { s: 'op', op: { op: 'mbarrier.wait', form: 'try_wait', bar: { name: 'bar', index: n(0) }, parity: n(0) }, loc },
  ];
  return {
    name: 'deep', arch: 'sm_90a', params: [], cluster: n(1),
    barriers: [{ name: 'bar', length: n(1), count: n(128), init: 'auto' }], buffers: [],
    roles: [{ name: 'k', warps: 4, threads: 128, per: 'thread', asWritten: true, body, loc }],
  };
}

describe('the depth bound (no recursion: the same groups on every stack)', () => {
  it('exprDepth measures without recursion, even 100,000 levels deep', () => {
    let e: Expr = v('warp');
    for (let i = 1; i < 100_000; i++) e = { k: 'un', op: '-', a: e };
    expect(exprDepth(e)).toBe(100_000);
    expect(exprDepth(n(3))).toBe(1);
  });

  it(`a role whose expressions nest at most ${MAX_EXPR_DEPTH} levels is analysed: its 4 warps are one group`, () => {
    const p = instantiate(deepKernel(MAX_EXPR_DEPTH));
    expect(exprDepth((p.roles[0]!.code.find((i) => i.i === 'set') as { src: Expr }).src)).toBe(MAX_EXPR_DEPTH);
    expect(whyUnanalysable(p.roles[0]!)).toBeNull();
    expect(analyse(p).groups.map((g) => g.agents)).toEqual([[0, 1, 2, 3]]);
    expect(check(p).verdict).toBe('ok');
  });

  it(`one level more leaves the role unanalysed: no group, only the dead slots left out (dead-slots.ts)`, () => {
    const p = instantiate(deepKernel(MAX_EXPR_DEPTH + 1));
    expect(whyUnanalysable(p.roles[0]!)).toBe(`an expression nested more than ${MAX_EXPR_DEPTH} levels`);
    expect(warpRelative(p, p.roles[0]!, p.agents[1]!)).toBeNull();
    const an = analyse(p);
    expect(an.groups).toEqual([]);
    // The plain liveness: each warp's facts say only its builtins are known.
    expect(an.rel.map((r) => r?.knownUpTo)).toEqual([8, 8, 8, 8]);
    expect(analyse(p, { deadSlots: false }).rel).toEqual([null, null, null, null]);
    const on = check(p, { all: true });
    const off = check(p, { all: true, deadSlots: false });
    expect(on.verdict).toBe('ok');
    expect(off.verdict).toBe('ok');
    expect(on.coverage.states).toBeLessThanOrEqual(off.coverage.states);
  });

  it('the bounded role checks with fewer states than the unanalysed one, the same verdict', () => {
    // Without the counting-barrier rule, which takes this kernel's arrivals alone whatever the
    // symmetry (both would be 2 states): the comparison is about the warps' symmetry.
    const shallow = check(instantiate(deepKernel(MAX_EXPR_DEPTH)), { countingArrivals: false });
    const deep = check(instantiate(deepKernel(MAX_EXPR_DEPTH + 1)), { countingArrivals: false });
    expect(shallow.verdict).toBe('ok');
    expect(deep.verdict).toBe('ok');
    expect(shallow.coverage.states).toBeLessThan(deep.coverage.states);
  });
});

const CM = 'test/fixtures/ptx/cluster_multicast.ptx';
const CM_LAUNCH: PtxLaunch = { block: 128, cluster: 2, tensorMaps: { param_0: 4096 } };
const GEMM = (f: string) => `hw/kernels/${f}`;

describe('cluster_multicast.ptx (correct: 2 CTAs of 4 warps; warps 1-3 of each CTA interchangeable)', () => {
  const p = ptxProgram(CM, CM_LAUNCH);

  it('forms one group of warps 1-3 per CTA and checks OK in 5,362 states instead of 47,647', () => {
    expect(analyse(p).groups.map((g) => g.agents)).toEqual([[1, 2, 3], [5, 6, 7]]);
    const on = check(p, { verifyHash: true } as CheckOptions);
    expect(on.verdict).toBe('ok');
    expect(on.complete).toBe(true);
    expect(on.coverage.states).toBe(5362);
    const off = check(p, { symmetry: false, maxStates: 200_000, timeout: 300_000 });
    expect(off.verdict).toBe('ok');
    expect(off.coverage.states).toBe(47647);
  }, 300_000);

  it('two workers store the same 5,362 states as the main thread', () => {
    const r = check(p, { workers: 2 });
    expect(r.verdict).toBe('ok');
    expect(r.coverage.states).toBe(5362);
  }, 120_000);
});

const TP = 'test/fixtures/ptx/tma_pipeline.ptx';
const TP_LAUNCH: PtxLaunch = { kernel: 'tma_pipeline', block: 128, params: { param_2: 4 }, tensorMaps: { param_0: 16384 } };

describe('tma_pipeline.ptx (consumer warps 1-3 read one element through addresses that differ per warp)', () => {
  const p = ptxProgram(TP, TP_LAUNCH);

  it('forms one group of warps 1-3 and checks OK in 34 states (46 without the symmetry)', () => {
    // buf[(%r33 + 4 · tid − base) / 16384]: %r33 = base + 16384 · stage, the same table over stage ∈ {0, 1} for each warp.
    expect(analyse(p).groups.map((g) => g.agents)).toEqual([[1, 2, 3]]);
    const on = check(p, { verifyHash: true } as CheckOptions);
    expect([on.verdict, on.complete, on.coverage.states]).toEqual(['ok', true, 34]);
    const off = check(p, { symmetry: false, verifyHash: true } as CheckOptions);
    expect([off.verdict, off.complete, off.coverage.states]).toEqual(['ok', true, 46]);
  }, 120_000);

  it('the element, not the address, where the warp rests: its address registers are dead there and not kept', () => {
    const rc = p.roles[0]!;
    const pc = rc.code.findIndex((i) => i.i === 'op' && i.op.op === 'ld.shared');
    const rel = warpRelative(p, rc, p.agents[1]!)!;
    const kept = [...rel.live[pc]!].map((j) => rc.slots[j]);
    expect(kept).toContain('buf#%r35');
    expect(kept.filter((x) => x.startsWith('%r35') || x.startsWith('%r34'))).toEqual([]);
  });

  it('with 256-byte thread offsets warp 1 reads its stage and warps 2-3 the other one: only warps 2-3 are a group', () => {
    const src = readFileSync(TP, 'utf8').replace('shl.b32 \t%r34, %r1, 2;', 'shl.b32 \t%r34, %r1, 8;');
    const r = parsePtx(src, TP);
    if (!r.ok) throw new Error(r.diagnostic.message);
    const q = instantiate(translatePtx(r.module, TP_LAUNCH).kernel);
    expect(analyse(q).groups.map((g) => g.agents)).toEqual([[2, 3]]);
    expect(check(q, { verifyHash: true } as CheckOptions).hazards[0]?.kind).toBe('race');
  }, 120_000);
});

describe('hw/kernels/tma_wgmma.ptx (correct; K = 1, one stage: 12 warps, warps 1-3, 5-7 and 9-11 interchangeable)', () => {
  const K1 = { params: { param_5: 1 } };

  it('checks OK in 908 states with the symmetry, 6,164 without', () => {
    const p = ptxProgram(GEMM('tma_wgmma.ptx'), K1);
    expect(analyse(p).groups.map((g) => g.agents)).toEqual([[1, 2, 3], [5, 6, 7], [9, 10, 11]]);
    const on = check(p, { verifyHash: true } as CheckOptions);
    expect(on.verdict).toBe('ok');
    expect(on.complete).toBe(true);
    expect(on.coverage.states).toBe(908);
    const off = check(p, { symmetry: false, timeout: 300_000 });
    expect(off.verdict).toBe('ok');
    expect(off.coverage.states).toBe(6164);
  }, 300_000);

  it('two workers store the same 908 states', () => {
    const r = check(ptxProgram(GEMM('tma_wgmma.ptx'), K1), { workers: 2 });
    expect(r.verdict).toBe('ok');
    expect(r.coverage.states).toBe(908);
  }, 120_000);
});

describe('hw/kernels/tma_wgmma twins (K = 2, one stage): the same verdict and subject with the symmetry, fewer states', () => {
  const cases: [string, string, number][] = [
    ['tma_wgmma.bug1.ptx', 'hang hang full[0]', 16],
    ['tma_wgmma.bug2.ptx', 'race race dsmem[0]', 974],
    ['tma_wgmma.bug3.ptx', 'race race dsmem[0]', 286],
  ];
  for (const [f, verdict, states] of cases) {
    it(`${f}: ${verdict} in ${states.toLocaleString('en-US')} states`, () => {
      const p = ptxProgram(GEMM(f));
      expect(analyse(p).groups.map((g) => g.agents)).toEqual([[1, 2, 3], [5, 6, 7], [9, 10, 11]]);
      const on = check(p, { verifyHash: true, randomRuns: false } as CheckOptions);
      const off = check(p, { symmetry: false, maxStates: 200_000, timeout: 300_000 });
      expect(first(on)).toBe(verdict);
      expect(first(off)).toBe(verdict);
      expect(on.coverage.states).toBe(states);
      expect(on.coverage.states).toBeLessThan(off.coverage.states);
    }, 300_000);
  }

  it('tma_wgmma.bug3.ptx with two workers: the same states and first hazard as the main thread', () => {
    const p = ptxProgram(GEMM('tma_wgmma.bug3.ptx'));
    const r = check(p, { workers: 2 });
    expect(first(r)).toBe('race race dsmem[0]');
    expect(r.coverage.states).toBe(286);
  }, 120_000);
});

describe('hw/kernels/tcgen05.ptx (sm_100a, 6 warps: the epilogue warps 2-5 read their own TMEM lane quarter and output rows)', () => {
  // Each epilogue warp's quarter (warp % 4) and rows reach only its tcgen05.ld (whose TMEM element
  // is the one granule of the allocation, the same for every warp) and the global stores (outside
  // the model): they are one group of 4, and the check finishes within the default bounds (before
  // warp-relative symmetry it stopped at --max-memory after about 137,000 states).
  it('forms one group of warps 2-5 and checks OK within the default bounds, in 52,448 states', () => {
    const p = ptxProgram(GEMM('tcgen05.ptx'));
    expect(analyse(p).groups.map((g) => g.agents)).toEqual([[2, 3, 4, 5]]);
    const r = check(p);
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
    expect(r.coverage.states).toBe(52_448);
  }, 300_000);

  it('bug2 (no tcgen05.wait::ld): the dealloc frees the columns under the epilogue\'s loads, within the default bounds', () => {
    const p = ptxProgram(GEMM('tcgen05.bug2.ptx'));
    expect(analyse(p).groups.map((g) => g.agents)).toEqual([[2, 3, 4, 5]]);
    const r = check(p, { verifyHash: true } as CheckOptions);
    expect(first(r)).toBe('tmem-dealloc-inflight tmem-dealloc-inflight tmem[0]');
    expect(r.coverage.states).toBeLessThan(20_000);
  }, 300_000);
});

describe('the groups do not depend on the thread or its stack size', () => {
  const inWorker = (file: string, launch: PtxLaunch, stackSizeMb: number) => new Promise<string>((resolve, reject) => {
    const entry = new URL('./support/warp-groups.ts', import.meta.url).href;
    const hooks = new URL('./support/ts-hooks.mjs', import.meta.url).href;
    const code = `const { workerData } = require('node:worker_threads');
require('node:module').register(workerData.hooks);
import(workerData.entry).then((m) => m.workerMain());`;
    const w = new Worker(code, { eval: true, workerData: { entry, hooks, file, launch }, resourceLimits: { stackSizeMb } });
    w.once('message', (m: string) => { void w.terminate(); resolve(m); });
    w.once('error', reject);
  });

  for (const [file, launch] of [[CM, CM_LAUNCH], [GEMM('tma_wgmma.ptx'), { block: 384, params: { param_4: 128, param_5: 1, param_6: 1 }, tensorMaps: { param_0: 16384, param_1: 16384 }, dynamicSmem: 33792 }]] as [string, PtxLaunch][]) {
    it(`${file}: the main thread and workers with 1 MB and 8 MB stacks agree`, async () => {
      const main = groupsOf(file, launch);
      expect(JSON.parse(main).groups.length).toBeGreaterThan(0);
      expect(await inWorker(file, launch, 1)).toBe(main);
      expect(await inWorker(file, launch, 8)).toBe(main);
    }, 60_000);
  }
});

describe('settled reads (src/check/settled.ts)', () => {
  const src = readFileSync(CM, 'utf8');
  const program = (text: string) => {
    const r = parsePtx(text, CM);
    if (!r.ok) throw new Error(r.diagnostic.message);
    return instantiate(translatePtx(r.module, CM_LAUNCH).kernel);
  };

  it('a read with the copy still in flight is not settled: without the wait it races with the copy, as without the reduction', () => {
    expect(src).toContain('@P1 bra DONE;\nbra LAB_WAIT;');
    const p = program(src.replace('@P1 bra DONE;\nbra LAB_WAIT;', 'bra DONE;\nbra LAB_WAIT;'));
    const on = check(p);
    const off = check(p, { por: false, symmetry: false, maxStates: 200_000, timeout: 300_000 });
    // The CTAs run the same code: which one's race the search meets first may differ.
    expect(first(on)).toMatch(/^race race tile\[0\]@c[01]$/);
    expect(first(off)).toMatch(/^race race tile\[0\]@c[01]$/);
  }, 300_000);
});
