// The differential check of warp-relative symmetry (src/check/warp-relative.ts): every PTX fixture
// and reference kernel that both searches finish, and planted variants of cluster_multicast.ptx,
// checked `--all --strict` with symmetry on and off: the same verdict, the same (kind, subject) of
// every hazard and warning, and the same final states up to the warps' known slots.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyse } from '../src/check/analysis.js';
import { check } from '../src/check/index.js';
import { BUILTINS, instantiate, type Program } from '../src/machine/program.js';
import type { MachineState } from '../src/machine/machine.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';

function program(src: string, file: string, launch: PtxLaunch): Program {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}

/** A final state as text: per role and CTA the sorted records (status, pc, the frame slots not known from the position). */
function finalText(p: Program, s: MachineState): string {
  const an = analyse(p);
  const by = new Map<string, string[]>();
  s.agents.forEach((a, i) => {
    const info = p.agents[i]!;
    const live = an.rel[i]?.live[a.pc];
    const vals = live ? [...live].map((j) => a.frame[j]) : a.frame.slice(BUILTINS.length);
    const k = `${info.roleName}@${info.cta}`;
    (by.get(k) ?? by.set(k, []).get(k)!).push(`${a.status}:${a.pc}:${vals.join(',')}`);
  });
  const bars = s.bars.map((b) => `${b.status}/${b.phase}/${b.pending}/${b.expected}/${b.tx}`);
  return `${[...by].sort().map(([k, l]) => `${k}=${l.sort().join('|')}`).join(' ')} ; ${bars.join(' ')}`;
}

function outcome(p: Program, symmetry: boolean, por = true) {
  const finals = new Set<string>();
  const r = check(p, { all: true, strict: true, symmetry, por, maxStates: 150_000, timeout: 300_000, onTerminal: (s) => finals.add(finalText(p, s)) });
  // A hang's subject is the first blocked agent's: which of interchangeable warps that is depends on the representative kept.
  const key = (h: { kind: string; subject: { name: string } | null }) => (h.kind === 'hang' || h.kind === 'cycle' ? h.kind : `${h.kind}|${h.subject?.name ?? ''}`);
  return { verdict: r.verdict, complete: r.complete, states: r.coverage.states, hazards: [...new Set([...r.hazards, ...r.warnings].map(key))].sort(), finals: [...finals].sort() };
}

const CM = 'test/fixtures/ptx/cluster_multicast.ptx';
const cm = readFileSync(CM, 'utf8');
const CM_LAUNCH: PtxLaunch = { block: 128, cluster: 2, tensorMaps: { param_0: 4096 } };
/** cluster_multicast.ptx with one line changed. */
const plant = (from: string, to: string) => {
  expect(cm).toContain(from);
  return cm.replace(from, to);
};
const TP = 'test/fixtures/ptx/tma_pipeline.ptx';
const tp = readFileSync(TP, 'utf8');
const TP_LAUNCH: PtxLaunch = { kernel: 'tma_pipeline', block: 128, params: { param_2: 4 }, tensorMaps: { param_0: 16384 } };
/** tma_pipeline.ptx with one line changed. */
const plantTp = (from: string, to: string) => {
  expect(tp).toContain(from);
  return tp.replace(from, to);
};
const withLaunch = (f: string): [string, string, PtxLaunch] => {
  const src = readFileSync(f, 'utf8');
  const line = /\/\/ # launch: (.*)/.exec(src);
  let launch: PtxLaunch = line ? JSON.parse(line[1]!) : {};
  try { launch = { ...launch, ...JSON.parse(readFileSync(`${f}.launch.json`, 'utf8')) }; } catch { /* no sidecar */ }
  return [f, src, launch];
};

const cases: [string, () => [string, PtxLaunch]][] = [
  ['cluster_multicast.ptx', () => [cm, CM_LAUNCH]],
  // Warp 1's lane 0 initializes and issues the copy: warp 1 is no longer like warps 2-3.
  ['cluster_multicast.ptx, warp 1 initializes', () => [plant('setp.ne.s32 \t%p1, %r2, 0;', 'setp.ne.s32 \t%p1, %r2, 32;'), CM_LAUNCH]],
  // expect_tx 1 KiB short of the multicast copy: a tx underflow or a phase completed early.
  ['cluster_multicast.ptx, expect_tx short', () => [plant('mov.u32 \t%r9, 4096;', 'mov.u32 \t%r9, 3072;'), CM_LAUNCH]],
  // Both barriers initialized for two arrivals where one comes: a hang.
  ['cluster_multicast.ptx, init count 2', () => [plant('mov.u32 \t%r7, 1;', 'mov.u32 \t%r7, 2;'), CM_LAUNCH]],
  // Each CTA arrives on its own `peer` barrier instead of the other CTA's.
  ['cluster_multicast.ptx, arrive on the own CTA', () => [plant('xor.b32  \t%r18, %r3, 1;', 'xor.b32  \t%r18, %r3, 0;'), CM_LAUNCH]],
  // tma_pipeline.ptx: the consumer warps 1-3 read buf[(stage · 16384 + 4 · tid − base) / 16384],
  // one element written differently per warp (grouped by the tables of warp-relative.ts).
  // A thread's offset of 256 bytes: warp 1 reads its stage, warps 2-3 the other one (a race).
  ['tma_pipeline.ptx, warps 2-3 read the other stage', () => [plantTp('shl.b32 \t%r34, %r1, 2;', 'shl.b32 \t%r34, %r1, 8;'), TP_LAUNCH]],
  // A thread's offset of 128 bytes: every consumer warp still reads its stage (warps 1-3 a group).
  ['tma_pipeline.ptx, 128-byte offsets', () => [plantTp('shl.b32 \t%r34, %r1, 2;', 'shl.b32 \t%r34, %r1, 7;'), TP_LAUNCH]],
  // The consumers read the stage of the phase parity instead of the slot: a race.
  ['tma_pipeline.ptx, stage from the parity', () => [plantTp('shl.b32 \t%r31, %r4, 14;', 'shl.b32 \t%r31, %r3, 14;'), TP_LAUNCH]],
  // The empty barriers count 64 arrivals where 96 come: the producer refills a stage a warp still reads.
  ['tma_pipeline.ptx, empty counts 64', () => [plantTp('add.s32 \t%r20, %r21, -32;', 'add.s32 \t%r20, %r21, -64;'), TP_LAUNCH]],
  ...[
    ...['tma_pipeline.ptx', 'planted/tma_pipeline.expect_tx.ptx', ...readdirSync('test/fixtures/ptx/ops').map((f) => `ops/${f}`)].map((f) => `test/fixtures/ptx/${f}`),
    'hw/kernels/tma_wgmma.bug1.ptx',
  ].filter((f) => f.endsWith('.ptx')).map((f): [string, () => [string, PtxLaunch]] => [f, () => { const [, src, l] = withLaunch(f); return [src, l]; }]),
  ['hw/kernels/tma_wgmma.ptx, K = 1', () => { const [, src, l] = withLaunch('hw/kernels/tma_wgmma.ptx'); return [src, { ...l, params: { ...l.params, param_5: 1 } }]; }],
  // The sm_100a kernel with fewer epilogue warps (the whole launch's four take about 1,000,000
  // states without the symmetry): each reads the TMEM lane quarter warp % 4 and its own output
  // rows, so warps 2-3 (128 threads) and 2-4 (160) are one group; the twins at 128 threads.
  ...([
    ['tcgen05.ptx', 128], ['tcgen05.ptx', 160], ['tcgen05.bug1.ptx', 128], ['tcgen05.bug2.ptx', 128], ['tcgen05.bug3.ptx', 128],
  ] as const).map(([f, block]): [string, () => [string, PtxLaunch]] => [`hw/kernels/${f}, ${block} threads`, () => {
    const [, src, l] = withLaunch(`hw/kernels/${f}`);
    return [src, { ...l, block }];
  }]),
];

describe('warp-relative symmetry on and off find the same hazards and final states', () => {
  for (const [name, make] of cases) {
    it(name, () => {
      const [src, launch] = make();
      const p = program(src, name, launch);
      const on = outcome(p, true);
      const off = outcome(p, false);
      expect(on.complete).toBe(true);
      expect(off.complete).toBe(true);
      expect(on.verdict).toBe(off.verdict);
      expect(on.hazards).toEqual(off.hazards);
      expect(on.finals).toEqual(off.finals);
      expect(on.states).toBeLessThanOrEqual(off.states);
      console.log(`${name}: ${on.verdict} ${on.hazards.join(' ')}; ${on.states} states with, ${off.states} without; groups ${JSON.stringify(analyse(p).groups.map((g) => g.agents))}`);
    }, 600_000);
  }
});

describe('settled reads (a partial-order rule) on and off find the same hazards and final states', () => {
  it('cluster_multicast.ptx: symmetry on, partial-order reduction on and off', () => {
    const p = program(cm, CM, CM_LAUNCH);
    const on = outcome(p, true);
    const off = outcome(p, true, false);
    expect(on.complete).toBe(true);
    expect(off.complete).toBe(true);
    expect([on.verdict, on.hazards]).toEqual(['ok', []]);
    expect([off.verdict, off.hazards]).toEqual(['ok', []]);
    expect(on.finals).toEqual(off.finals);
    expect(on.states).toBeLessThan(off.states);
  }, 600_000);
});
