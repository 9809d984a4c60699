// The text of a PTX kernel's steps (machine/step-text.ts): counterexample traces, timeline labels
// and hang lines write every operand with its value at that step (barrier and buffer element,
// parity, bytes, count), from one renderer; a sketch's steps keep their text as written.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { Machine, newStepOut } from '../src/machine/machine.js';
import { blockedText } from '../src/machine/hang.js';
import { instantiate } from '../src/machine/program.js';
import { stepText } from '../src/machine/step-text.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';
import { parseSketch } from '../src/lang/index.js';
import { traceModel } from '../src/web/trace-model.js';

function fixture(f: string, launch: PtxLaunch) {
  const r = parsePtx(readFileSync(`test/fixtures/ptx/${f}`, 'utf8'), f);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}
const MIXED: PtxLaunch = { kernel: 'mixed', block: 96, params: { param_3: 4 }, tensorMaps: { param_0: 8192, param_1: 8192 }, dynamicSmem: 32800 };

describe('PTX trace steps name resolved operands', () => {
  it('desc_stage.early_release (a consumer releases its stage before its wgmma has read it): the race\'s "released by" line writes the arrive with its operands\' values', () => {
    const f = 'planted/desc_stage.early_release.ptx';
    const p = fixture(f, JSON.parse(readFileSync(`test/fixtures/ptx/${f}.launch.json`, 'utf8')) as PtxLaunch);
    const r = check(p, { randomRuns: false });
    const race = r.hazards.find((h) => h.kind === 'race')!;
    const rel = race.details.find((d) => d.startsWith('released by: '))!;
    expect(rel).toContain('that phase was completed by mbarrier.arrive empty[0], count 1 of desc_stage.w3 (line 122)');
    expect(rel).not.toMatch(/%r|#/);
    // The instruction's own text names its registers: the line is the step's text, as the trace's.
    const arrive = p.roles.flatMap((rc) => rc.code).find((x) => x.i === 'op' && x.loc.line === 122 && x.op.op === 'mbarrier.arrive');
    expect(arrive && arrive.i === 'op' ? arrive.text : '').toMatch(/%r63/);
    expect(race.trace.map((s) => s.op)).toContain('mbarrier.arrive empty[0], count 1');
  }, 60_000);

  it('mixed.bug2 (a consumer reads before its wait): the race trace has no register, and names the barrier, bytes and tile', () => {
    const p = fixture('planted/mixed.bug2.ptx', MIXED);
    const r = check(p, { maxStates: 100_000, randomRuns: false });
    const race = r.hazards.find((h) => h.kind === 'race')!;
    const ops = race.trace.map((s) => s.op);
    for (const op of ops) expect(op).not.toMatch(/%r|#/);
    expect(ops).toContain('mbarrier.init smem+32768[2], count 64');
    expect(ops).toContain('mbarrier.arrive.expect_tx.release.cta smem+32768[0], 16384 B');
    expect(ops).toContain('cp.async.bulk.tensor smem[0], 8192 B, smem+32768[0]');
    expect(ops).toContain('ld.shared smem[0]');
    // The PTX line reference stays, with its CUDA line.
    const arrive = race.trace.find((s) => s.op.startsWith('mbarrier.arrive'))!;
    expect([arrive.loc?.line, arrive.loc?.origin]).toEqual([151, 'mixed.cu:67']);
    // The web explorer's timeline of the counterexample: the same text per step.
    const model = traceModel(p, race.schedule);
    const labels = model.spans.filter((x) => x.kind === 'op').map((x) => x.label);
    expect(labels).toContain('12. mbarrier.arrive.expect_tx.release.cta smem+32768[0], 16384 B');
    for (const l of labels) expect(l).not.toMatch(/%r|#/);
  });

  it('the simulator\'s timeline labels of a PTX kernel are the resolved text too', () => {
    const s = simulate(fixture('mixed.ptx', MIXED));
    const labels = (s.spans ?? []).filter((x) => x.kind === 'op').map((x) => x.label);
    expect(labels.length).toBeGreaterThan(10);
    for (const l of labels) expect(l).not.toMatch(/%r|#/);
    expect(labels).toContain('mbarrier.try_wait.parity smem+32768[1], parity 1');
    expect(labels).toContain('cp.async.bulk.tensor smem[2], 8192 B, smem+32768[0]');
  });

  it('token waits name the phase of their token; the hang line and the step share one text', () => {
    const p = fixture('token.ptx', { params: { param_1: 2 } });
    const m = new Machine(p);
    const s = m.initial();
    // Run agent by agent until someone rests on a token wait.
    let seen: string | null = null;
    for (let i = 0; i < 2000 && !seen; i++) {
      const a = s.agents.findIndex((_, x) => m.agentEnabled(s, x));
      if (a < 0) break;
      const ins = m.nextOp(s, a);
      if (ins?.op.op === 'mbarrier.wait' && ins.op.token !== undefined) {
        seen = stepText(p, s, a, ins);
        expect(blockedText(p, s, a, ins)).toBe(seen);
      }
      m.apply(s, { kind: 'agent', agent: a }, newStepOut(false), i);
    }
    expect(seen).toMatch(/^mbarrier\.(try|test)_wait\S* \w+\[\d\], token of phase 0$/);
  });

  it('a sketch keeps its text as written, the values after it', () => {
    const sk = parseSketch('kernel k\nbarrier full[2] count=1\nrole p warps=1 per=one:\n    for i in range(0, 2):\n        mbarrier.arrive full[i]\n', 'k.mbk');
    if (!sk.kernel) throw new Error(JSON.stringify(sk.diagnostics));
    const p = instantiate(sk.kernel);
    const m = new Machine(p);
    const s = m.initial();
    const ins = m.nextOp(s, 0)!;
    expect(stepText(p, s, 0, ins)).toBe(ins.text);
    expect(ins.text).toBe('mbarrier.arrive full[i]');
  });
});
